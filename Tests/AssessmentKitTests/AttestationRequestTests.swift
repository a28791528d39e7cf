import AssessmentKit
import DemoExamLogic
import Testing

/// AssessmentKit's requestAttestation and the demo's hand-in, on the
/// in-memory lockdown (which cannot sign: the real statements are tested
/// against Carrel in Tests/integration/test_attestation.py).
@Suite("Asking for a signed statement")
struct AttestationRequestTests {
    @Test("before began and after ended the answer is not_active, at once")
    func notActive() {
        let lockdown = InMemoryAssessmentManager()
        let session = lockdown.makeSession()
        var answers: [AttestationFailureReason] = []
        session.requestAttestation(nonce: Array(repeating: 1, count: 16)) { if case .failure(let e) = $0 { answers.append(e.reason) } }
        #expect(answers == [.notActive])
        session.begin()
        session.requestAttestation(nonce: Array(repeating: 1, count: 16)) { if case .failure(let e) = $0 { answers.append(e.reason) } }
        #expect(answers == [.notActive, .notActive], "pending: not begun yet")
        lockdown.dispatch()
        session.end()
        lockdown.dispatch()
        session.requestAttestation(nonce: Array(repeating: 1, count: 16)) { if case .failure(let e) = $0 { answers.append(e.reason) } }
        #expect(answers == [.notActive, .notActive, .notActive])
    }

    @Test("a lockdown that cannot sign answers unavailable, once per request, in order")
    func unavailable() {
        let lockdown = InMemoryAssessmentManager()
        let session = lockdown.makeSession()
        session.begin()
        lockdown.dispatch()
        var order: [Int] = []
        for index in 0..<3 {
            session.requestAttestation(nonce: Array(repeating: 2, count: 32)) { result in
                guard case .failure(let error) = result, error.reason == .unavailable else {
                    Issue.record("expected unavailable, got \(result)")
                    return
                }
                order.append(index)
            }
        }
        #expect(order.isEmpty, "answered later, never from within the request")
        lockdown.dispatch()
        #expect(order == [0, 1, 2])
        #expect(session.state == .active, "a refused statement leaves the session as it was")
    }

    @Test("the envelope carries the statement as a JSON string and the signature in base64")
    func envelope() {
        let attestation = SessionAttestation(statement: Array(#"{"a":"q\"x"}"#.utf8), signature: [0, 1, 2, 250, 251])
        #expect(attestation.envelopeJSON == #"{"signature":"AAEC+vs=","statement":"{\"a\":\"q\\\"x\"}"}"#)
    }
}

@Suite("The demo's hand-in (--submit-url)")
struct ExamSubmissionTests {
    @Test("URLs: http only, port optional, path kept; the nonce endpoint beside it")
    func urls() throws {
        let url = SubmissionURL("http://127.0.0.1:8080/exam")
        #expect(url?.host == "127.0.0.1" && url?.port == 8080 && url?.path == "/exam")
        #expect(url?.noncePath == "/exam/nonce")
        #expect(SubmissionURL("http://exam.example")?.port == 80)
        #expect(SubmissionURL("http://exam.example")?.noncePath == "/nonce")
        for bad in ["https://x/", "http://", "http://:80/", "http://x:0/", "http://x:99999/", "ftp://x"] {
            #expect(SubmissionURL(bad) == nil, "\(bad)")
        }
        #expect(throws: DemoExamOptions.ParseError.self) { try DemoExamOptions.parse(["--submit-url", "https://x/"]) }
        let options = try DemoExamOptions.parse(["--auto", "--submit-url", "http://h:1/p"])
        #expect(options.submitURL?.path == "/p")
    }

    @Test("the nonce is the answer's hex text")
    func nonce() {
        #expect(ExamSubmission.nonce(fromResponse: " 00ff10Ab\n") == [0x00, 0xff, 0x10, 0xab])
        #expect(ExamSubmission.nonce(fromResponse: "abc") == nil)
        #expect(ExamSubmission.nonce(fromResponse: "zz") == nil)
        #expect(ExamSubmission.nonce(fromResponse: "") == nil)
    }

    @Test("the body: answers by question, the envelope, or why there is none")
    func body() {
        let attestation = SessionAttestation(statement: Array("{}".utf8), signature: [1])
        #expect(ExamSubmission.json(answers: [2: "3", 1: "試験 \"x\""], attestation: attestation, error: nil)
            == #"{"answers":{"1":"試験 \"x\"","2":"3"},"attestation":{"signature":"AQ==","statement":"{}"},"attestation_error":null}"#)
        #expect(ExamSubmission.json(answers: [:], attestation: nil, error: AttestationError(.unavailable, message: "no key"))
            == #"{"answers":{},"attestation":null,"attestation_error":"unavailable: no key"}"#)
    }

    @Test("end hands the answers in first, once, and ends when the hand-in is done")
    func handInBeforeEnd() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, _) = makeFlow(lockdown)
        var handedIn: [[Int: String]] = []
        var finish: (() -> Void)?
        flow.handIn = { _, answers, then in
            handedIn.append(answers)
            finish = then
        }
        flow.perform(.begin)
        lockdown.dispatch()
        flow.perform(.choose(1))
        flow.perform(.end)
        flow.perform(.end)
        #expect(handedIn == [[1: "2"]])
        #expect(lockdown.requests.last != .end, "not ended before the hand-in is done")
        finish?()
        #expect(lockdown.requests.last == .end)
        lockdown.dispatch()
        #expect(flow.session?.state == .ended)
    }
}

@Suite("Asking for a signed statement with await")
struct AttestationAsyncTests {
    @Test("await throws the refusal")
    func awaitRefusal() async {
        let lockdown = InMemoryAssessmentManager()
        let session = lockdown.makeSession()
        do {
            _ = try await session.attestation(nonce: Array(repeating: 3, count: 16))
            Issue.record("a session that never began got a statement")
        } catch let error as AttestationError {
            #expect(error.reason == .notActive)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

@Suite("Ending with a closing statement")
struct EndAttestingTests {
    @Test("the statement's answer comes before did end; the session ends either way")
    func order() {
        let lockdown = InMemoryAssessmentManager()
        let session = lockdown.makeSession()
        session.begin()
        lockdown.dispatch()
        var heard: [String] = []
        final class Delegate: AssessmentSessionDelegate {
            var ended: () -> Void = {}
            func assessmentSessionDidEnd(_ session: AssessmentSession) { ended() }
        }
        let delegate = Delegate()
        delegate.ended = { heard.append("ended") }
        session.delegate = delegate
        session.end(attestingWith: Array(repeating: 4, count: 16)) { result in
            if case .failure(let error) = result { heard.append("statement \(error.reason)") }
        }
        #expect(session.state == .ending)
        lockdown.dispatch()
        #expect(heard == ["statement unavailable", "ended"])
        #expect(lockdown.requests.last == .end)
    }
}
