import CarrelCore
import Testing

/// The canonical encoding and the statement Carrel signs. Expected texts
/// are written out here by hand, never produced by the encoder under test.
@Suite("Canonical JSON")
struct CanonicalJSONTests {
    @Test("keys sorted, no whitespace, integers, null and booleans")
    func layout() {
        let value = CanonicalJSON.object([
            "b": .integer(-2), "a": .array([.bool(true), .null, .string("x")]), "A": .object([:]),
        ])
        #expect(value.text == #"{"A":{},"a":[true,null,"x"],"b":-2}"#)
    }

    @Test("strings: only the escapes JSON needs; other text as UTF-8")
    func escapes() {
        let value = CanonicalJSON.string("q\"b\\n\nt\tc\u{01}é試")
        #expect(value.text == "\"q\\\"b\\\\n\\nt\\tc\\u0001é試\"")
        #expect(value.bytes == Array(value.text.utf8))
    }

    @Test("key order is by code point, as Python's sort_keys")
    func keyOrder() {
        let value = CanonicalJSON.object(["é": .integer(1), "z": .integer(2), "Z": .integer(3)])
        #expect(value.text == #"{"Z":3,"z":2,"é":1}"#)
    }
}

@Suite("Attestation statements")
struct AttestationStatementTests {
    let app = ClientID(1)
    let id = SessionID(7)
    let t0 = Instant.seconds(100)

    func session(configuration: AssessmentConfiguration? = nil, interruptAfter: UInt32? = nil) -> (CompositorDouble, SessionRecord) {
        var compositor = CompositorDouble(policy: SessionPolicy(defaultTimeLimit: 3600))
        let (id, app, t0) = (id, app, t0)
        compositor.run { $0.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: configuration, now: t0) }
        compositor.run { $0.framePresented(id, now: t0) }
        return (compositor, compositor.invigilator.session(id)!)
    }

    let facts = AttestationFacts(keyFingerprint: "kf", carrelVersion: "9.9", executableDigest: "ed", policyFile: "/etc/p.toml",
                                 policyDigest: "pd", preconditions: PreconditionPolicy(waived: [.seat, .nested]),
                                 virtualMachine: VirtualMachineSignals(signals: ["DMI sys_vendor is \"QEMU\""], checked: ["DMI sys_vendor"]),
                                 run: "r1")

    /// A stand-in digest that shows what it was given, so the test sees which bytes are hashed.
    func digest(_ bytes: [UInt8]) -> String { "H(" + String(decoding: bytes, as: UTF8.self) + ")" }

    func nonce(_ count: Int) -> [UInt8] { (0..<count).map { UInt8($0 & 0xff) } }

    func make(_ record: SessionRecord?, nonce bytes: [UInt8], tally: SessionTally = SessionTally(),
              signer: Result<AttestationFacts, AttestationRefusal>? = nil, now: Instant? = nil) -> Result<AttestationStatement, AttestationRefusal> {
        AttestationRequest.answer(nonce: bytes, session: record, signer: signer ?? .success(facts), tally: tally,
                                  chain: AuditChainPosition(head: "ch", seq: 12), nowUnixMilliseconds: 1_700_000_005_000,
                                  now: now ?? t0.advanced(by: .seconds(5)), digest: digest)
    }

    @Test("the statement of an active session, field by field")
    func contents() throws {
        var configuration = AssessmentConfiguration(allowedFeatures: [.spellCheck, .inputMethod])
        configuration.timeLimit = 1800
        let (_, record) = session(configuration: configuration)
        var tally = SessionTally()
        tally.countBlocked(AuditKind.capture)
        tally.countBlocked(AuditKind.capture)
        tally.countBlocked(AuditKind.clipboard)
        let statement = try make(record, nonce: [0xde, 0xad] + Array(repeating: 0x01, count: 14), tally: tally).get()
        let configurationText = #"{"allowed_features":["spell_check","input_method"],"network_denied_participants":[],"owner_network_denied":false,"participants":[],"time_limit_seconds":1800}"#
        let expected = "{"
            + #""audit":{"chain_head":"ch","seq":12},"#
            + #""blocked_attempts":{"capture":2,"clipboard":1,"focus_steal":0,"foreign_window":0,"hidden_global":0,"virtual_input":0},"#
            + #""carrel":{"executable_digest":"ed","version":"9.9"},"#
            + #""configuration":"# + configurationText + ","
            + #""configuration_digest":"H("# + configurationText.replacingOccurrences(of: "\"", with: "\\\"") + #")","#
            + #""format":"carrel-attestation-1","issued_at_unix_ms":1700000005000,"key_fingerprint":"kf","#
            + #""nonce":"dead0101010101010101010101010101","#
            + #""policy":{"digest":"pd","file":"/etc/p.toml"},"#
            + #""preconditions":{"checked":["x_server","policy_file","audit_log","virtual_machine","kernel_keys","virtual_input","input_readers"],"#
            + #""virtual_machine":{"detected":true,"refused":false,"signals":["DMI sys_vendor is \"QEMU\""]},"#
            + #""waived":["nested","seat"]},"#
            + #""restrictions":{"media":false,"network":false},"#
            + #""session":{"began_at_unix_ms":1700000000000,"id":7,"interrupted":false,"interruptions":[],"phase":"active","run":"r1"}"#
            + "}"
        #expect(statement.text == expected)
        #expect(statement.bytes.count <= AttestationStatement.maximumByteCount)

        // Through the privileged helper, its precondition was checked too, and the statement says so.
        var helped = facts
        helped.privilegedHelper = true
        let separated = try make(record, nonce: [0xde, 0xad] + Array(repeating: 0x01, count: 14), tally: tally,
                                 signer: .success(helped)).get()
        // With the network provider on, the statement says the network restriction held.
        var restricted = facts
        restricted.providers = ["network"]
        let networked = try make(record, nonce: [0xde, 0xad] + Array(repeating: 0x01, count: 14), tally: tally,
                                 signer: .success(restricted)).get()
        #expect(networked.text == expected.replacingOccurrences(of: #""restrictions":{"media":false,"network":false}"#,
                                                                with: #""restrictions":{"media":false,"network":true}"#))
        #expect(separated.text == expected.replacingOccurrences(
            of: #""checked":["x_server","policy_file","audit_log","virtual_machine","kernel_keys","virtual_input","input_readers"]"#,
            with: #""checked":["x_server","policy_file","audit_log","virtual_machine","privileged_helper","kernel_keys","virtual_input","input_readers"]"#))
    }

    @Test("the configuration as digested: features and participants sorted, duplicates once, network taken away, the effective limit")
    func configuration() {
        let configuration = AssessmentConfiguration(allowedFeatures: [.screenReader, .spellCheck], participants: ["calc", "atlas", "calc"])
        #expect(AttestationStatement.configurationJSON(configuration, timeLimitSeconds: 600).text
            == #"{"allowed_features":["spell_check","screen_reader"],"network_denied_participants":[],"owner_network_denied":false,"participants":["atlas","calc"],"time_limit_seconds":600}"#)
        // Network taken away is signed too (a denial of a participant it does not name is not).
        let denying = AssessmentConfiguration(participants: ["calc", "atlas"], networkDeniedParticipants: ["calc", "browser"],
                                              ownerNetworkDenied: true)
        #expect(AttestationStatement.configurationJSON(denying, timeLimitSeconds: 600).text
            == #"{"allowed_features":[],"network_denied_participants":["calc"],"owner_network_denied":true,"participants":["atlas","calc"],"time_limit_seconds":600}"#)
    }

    @Test("an interrupted session says so, with every reason, even after later requests")
    func interrupted() throws {
        var (compositor, _) = session()
        compositor.fireTimeLimit(id, at: t0.advanced(by: .seconds(3600)))
        let record = compositor.invigilator.session(id)!
        var tally = SessionTally()
        tally.noteInterruption(.timeLimit)
        let text = try make(record, nonce: nonce(16), tally: tally).get().text
        #expect(text.contains(#""interrupted":true,"interruptions":["time_limit"],"phase":"interrupted""#))
    }

    @Test("nonce bounds: 16 and 256 bytes are accepted; 0, 15, 257 refused with invalid_nonce")
    func nonceBounds() throws {
        let (_, record) = session()
        for count in [16, 256] {
            #expect(throws: Never.self) { try make(record, nonce: nonce(count)).get() }
        }
        for count in [0, 15, 257, 4096] {
            guard case .failure(let refusal) = make(record, nonce: nonce(count)) else {
                Issue.record("a nonce of \(count) bytes was accepted")
                continue
            }
            #expect(refusal.reason == .invalidNonce)
            #expect(refusal.message.contains("\(count) bytes") && refusal.message.contains("16 to 256"))
        }
    }

    @Test("the largest nonce with a long VM finding still fits one event; a statement past 3072 bytes is refused")
    func sizeBound() throws {
        var facts = self.facts
        facts.virtualMachine = VirtualMachineSignals(signals: (0..<3).map { "signal \($0) " + String(repeating: "v", count: 60) }, checked: [])
        let (_, record) = session()
        let big = try make(record, nonce: nonce(256), signer: .success(facts)).get()
        #expect(big.bytes.count <= 3072)
        facts.virtualMachine = VirtualMachineSignals(signals: (0..<40).map { "signal \($0) " + String(repeating: "v", count: 60) }, checked: [])
        guard case .failure(let refusal) = make(record, nonce: nonce(16), signer: .success(facts)) else {
            Issue.record("a statement above 3072 bytes was made")
            return
        }
        #expect(refusal.reason == .tooLarge && refusal.message.contains("3072"))
    }

    @Test("refusals in order: nonce, then no key, then not begun")
    func refusalOrder() {
        var compositor = CompositorDouble(policy: SessionPolicy())
        let (id, app, t0) = (id, app, t0)
        compositor.run { $0.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0) }
        let pending = compositor.invigilator.session(id)!
        #expect(!pending.phase.hasBegun)
        let noKey = Result<AttestationFacts, AttestationRefusal>.failure(AttestationRequest.noKeyConfigured)
        #expect(make(pending, nonce: [], signer: noKey).failureReason == .invalidNonce)
        #expect(make(pending, nonce: nonce(16), signer: noKey).failureReason == .unavailable)
        #expect(make(pending, nonce: nonce(16)).failureReason == .notActive)
        #expect(make(nil, nonce: nonce(16)).failureReason == .notActive)
        #expect(AttestationRequest.noKeyConfigured.message.contains("carrel keygen"))
    }

    @Test("a tally counts every blocked attempt by kind and lists every known kind")
    func tally() {
        var tally = SessionTally()
        #expect(tally.blockedByKind == ["hidden_global": 0, "capture": 0, "virtual_input": 0, "foreign_window": 0,
                                        "focus_steal": 0, "clipboard": 0])
        for _ in 0..<7 { tally.countBlocked(AuditKind.focusSteal) }
        tally.countBlocked("new_kind")
        #expect(tally.blockedByKind["focus_steal"] == 7 && tally.blockedByKind["new_kind"] == 1)
    }
}

extension Result {
    var failureReason: AttestationFailureReason? {
        if case .failure(let error as AttestationRefusal) = self { return error.reason }
        return nil
    }
}
