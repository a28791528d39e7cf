import CarrelCore
import Testing

/// The admin control socket's requests as the Desk carries them out: the
/// status report, what `end` and `extend` do to the session (parsing and the
/// access rule are CarrelControlProtocolTests').
@Suite("Admin control")
struct ControlTests {
    let app = ClientID(7)
    let id = SessionID(1)
    let t0 = Instant.seconds(100)

    /// An invigilator with session 1 of client 7 active since t0.
    func active(policy: SessionPolicy = SessionPolicy(defaultTimeLimit: 3600, maximumTimeLimit: 7200),
                configuration: AssessmentConfiguration? = nil) -> Invigilator {
        var invigilator = Invigilator(policy: policy)
        _ = invigilator.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: configuration, now: t0)
        _ = invigilator.restrictionsApplied(id, .applied, now: t0)
        _ = invigilator.framePresented(id, now: t0)
        return invigilator
    }

    // MARK: - Requests (parsing is tested with CarrelControlProtocol)

    @Test("responses encode to one line of snake_case JSON and parse back")
    func responsesRoundTrip() throws {
        let invigilator = active()
        let status = ControlStatus(mode: "standard", invigilator: invigilator, now: t0.advanced(bySeconds: 60),
                                   owner: { _ in (pid: 4242, role: .app) }, clients: [.app: 1])
        let response = ControlResponse(ok: true, command: "status", status: status)
        let line = response.line
        #expect(!line.contains("\n"))
        #expect(line.contains(#""time_left_seconds":3540"#), "\(line)")
        #expect(line.contains(#""hide_untrusted_windows":true"#), "\(line)")
        #expect(ControlResponse.parse(Array(line.utf8)) == response)
        let failure = ControlResponse.failure(ControlFailure(.noSession, "none\nhere"), command: "end")
        #expect(!failure.line.contains("\n"))
        #expect(ControlResponse.parse(Array(failure.line.utf8)) == failure)
    }

    // MARK: - Status

    @Test("status carries the metrics file and its problem: null when off, null problem when written")
    func statusMetrics() {
        let off = ControlStatus(mode: "standard", invigilator: Invigilator(), now: t0, owner: { _ in (nil, nil) }, clients: [:])
        #expect(off.metrics == nil)
        #expect(ControlResponse(ok: true, command: "status", status: off).line.contains(#""metrics":null"#))
        let written = ControlStatus(mode: "standard", invigilator: Invigilator(), now: t0, owner: { _ in (nil, nil) }, clients: [:],
                                    metrics: .init(textfile: "/var/lib/prometheus/node-exporter/carrel.prom", problem: nil))
        let line = ControlResponse(ok: true, command: "status", status: written).line
        #expect(line.contains(#""metrics":{"problem":null,"textfile":"/var/lib/prometheus/node-exporter/carrel.prom"}"#), "\(line)")
        let failing = ControlStatus(mode: "standard", invigilator: Invigilator(), now: t0, owner: { _ in (nil, nil) }, clients: [:],
                                    metrics: .init(textfile: "/x/carrel.prom", problem: "cannot write /x/carrel.prom: Not a directory"))
        let response = ControlResponse(ok: true, command: "status", status: failing)
        #expect(ControlResponse.parse(Array(response.line.utf8)) == response)
    }


    @Test("status without a session: state none, no restrictions, every role counted")
    func statusWithoutSession() {
        let status = ControlStatus(mode: "standard", invigilator: Invigilator(), now: t0,
                                   owner: { _ in Issue.record("asked for an owner"); return (nil, .untrusted) },
                                   clients: [.untrusted: 2])
        #expect(status.state == "none")
        #expect(status.session == nil && status.restrictions == nil)
        #expect(status.clients == ["app": 0, "participant": 0, "untrusted": 2, "input_method": 0, "on_screen_keyboard": 0])
    }

    @Test("status of an active session: app, participants, time left, restrictions")
    func statusOfActiveSession() throws {
        var policy = SessionPolicy(defaultTimeLimit: 3600, maximumTimeLimit: 7200)
        policy.knownParticipants = ["calculator"]
        let configuration = AssessmentConfiguration(allowedFeatures: [.spellCheck], participants: ["calculator"])
        let invigilator = active(policy: policy, configuration: configuration)
        let status = ControlStatus(mode: "standard", invigilator: invigilator, now: t0.advanced(by: .milliseconds(600_500)),
                                   owner: { client in
                                       #expect(client == self.app)
                                       return (pid: 4242, role: .app)
                                   }, clients: [.app: 1, .untrusted: 1])
        #expect(status.state == "active")
        let session = try #require(status.session)
        #expect(session.id == 1 && session.phase == "active")
        #expect(session.app.client == 7 && session.app.pid == 4242 && session.app.role == "app")
        #expect(session.participants == ["calculator"])
        #expect(session.timeLimitSeconds == 3600 && session.addedSeconds == 0)
        #expect(session.timeLeftSeconds == 2999)
        let restrictions = try #require(status.restrictions)
        #expect(restrictions.allowedFeatures == ["spell_check"])
        #expect(restrictions.hideUntrustedWindows && restrictions.refuseCapture && restrictions.isolateClipboard && restrictions.inputOnlyToSession)
        #expect(!restrictions.compositorEnforcedDenials.contains("spell_check"))
        #expect(!restrictions.compositorEnforcedDenials.contains("screen_reader"))
        #expect(restrictions.compositorEnforcedDenials.contains("on_screen_keyboard"))
        #expect(restrictions.participants == ["calculator"])
    }

    @Test("the coarse state follows the phase")
    func coarseStates() {
        #expect(ControlStatus.state(of: nil) == "none")
        #expect(ControlStatus.state(of: .restricting) == "beginning")
        #expect(ControlStatus.state(of: .awaitingPresentation(deadline: t0)) == "beginning")
        #expect(ControlStatus.state(of: .active) == "active")
        #expect(ControlStatus.state(of: .interrupted(.administrative)) == "ending")
        #expect(ControlStatus.state(of: .ended) == "none")
    }

    @Test("status while beginning has no time left and no restrictions confirmed")
    func statusWhileBeginning() throws {
        var invigilator = Invigilator()
        _ = invigilator.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        let status = ControlStatus(mode: "standard", invigilator: invigilator, now: t0,
                                   owner: { _ in (nil, .app) }, clients: [:])
        #expect(status.state == "beginning")
        #expect(try #require(status.session).timeLeftSeconds == nil)
        #expect(status.restrictions == nil)
    }

    // MARK: - end

    @Test("end interrupts the active session with administrative and the reason; restrictions stay")
    func endInterrupts() throws {
        var invigilator = active()
        let (outcome, effects) = try invigilator.administrativeEnd(reason: "proctor")
        #expect(outcome == ControlOutcome(session: 1, message: "proctor"))
        #expect(effects.events(on: id) == [.interrupted(.administrative, message: "proctor")])
        #expect(effects.clearsSelections)
        #expect(invigilator.session(id)?.phase == .interrupted(.administrative))
        #expect(invigilator.restrictionsInForce != nil, "interrupted is not terminal")
        #expect(invigilator.lockState == .active)
    }

    @Test("end before began fails the session with cancelled and frees the lock")
    func endWhileBeginning() throws {
        var invigilator = Invigilator()
        _ = invigilator.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        let (_, effects) = try invigilator.administrativeEnd(reason: "not today")
        #expect(effects.events(on: id) == [.failed(.cancelled, message: "not today")])
        #expect(invigilator.lockState == .inactive)
    }

    @Test("end without a session, or with a bad reason, is refused and changes nothing")
    func endRefused() {
        var idle = Invigilator()
        #expect(throws: ControlFailure.self) { try idle.administrativeEnd(reason: "x") }
        do {
            _ = try idle.administrativeEnd(reason: "x")
        } catch {
            #expect(error.code == .noSession)
        }
        var invigilator = active()
        let before = invigilator.sessions
        do {
            _ = try invigilator.administrativeEnd(reason: " ")
            Issue.record("an empty reason was accepted")
        } catch {
            #expect(error.code == .badArgument)
        }
        #expect(invigilator.sessions == before)
    }

    // MARK: - extend

    @Test("extend adds minutes, re-arms the timer at the new deadline and reports time left")
    func extendAddsTime() throws {
        var invigilator = active()
        let now = t0.advanced(bySeconds: 600)
        let (outcome, effects) = try invigilator.extendTimeLimit(byMinutes: 5, now: now)
        #expect(effects.withoutLogs == [.armTimeLimit(id, deadline: t0.advanced(bySeconds: 3900))])
        #expect(outcome == ControlOutcome(session: 1, addedSeconds: 300, timeLimitSeconds: 3900, timeLeftSeconds: 3300))
        let record = try #require(invigilator.session(id))
        #expect(record.timeLimit == 3900 && record.addedTime == 300)
        #expect(record.timeLimitDeadline == t0.advanced(bySeconds: 3900))
        // The old deadline no longer interrupts: the timer is re-armed.
        #expect(invigilator.timeLimitReached(id, now: t0.advanced(bySeconds: 3600)).withoutLogs
                == [.armTimeLimit(id, deadline: t0.advanced(bySeconds: 3900))])
        #expect(invigilator.timeLimitReached(id, now: t0.advanced(bySeconds: 3900)).events(on: id).count == 1)
    }

    @Test("an extension survives an update, which re-derives the limit from the configuration")
    func extensionSurvivesUpdate() throws {
        var invigilator = active()
        _ = try invigilator.extendTimeLimit(byMinutes: 10, now: t0)
        _ = invigilator.update(id, to: AssessmentConfiguration(timeLimit: 1800))
        _ = invigilator.restrictionsApplied(id, .applied, now: t0)
        #expect(invigilator.session(id)?.timeLimit == 2400)
    }

    @Test("extend beyond the policy maximum is refused and changes nothing")
    func extendAboveMaximum() throws {
        var invigilator = active()  // 3600 s of at most 7200 s
        _ = try invigilator.extendTimeLimit(byMinutes: 60, now: t0)
        let before = invigilator.sessions
        do {
            _ = try invigilator.extendTimeLimit(byMinutes: 1, now: t0)
            Issue.record("extended beyond the maximum")
        } catch {
            #expect(error.code == .aboveMaximum)
            #expect(error.message.contains("7200 s") && error.message.contains("at most 0 more minutes"), "\(error.message)")
        }
        #expect(invigilator.sessions == before)
    }

    @Test("extend is refused without a session, before began, after an interruption, and out of 1…600",
          arguments: [0, 601])
    func extendRefused(outOfRange: Int) throws {
        var idle = Invigilator()
        #expect(throws: ControlFailure(.noSession, "no session is pending or active; there is nothing to extend")) {
            try idle.extendTimeLimit(byMinutes: 5, now: self.t0)
        }
        var beginning = Invigilator()
        _ = beginning.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        do { _ = try beginning.extendTimeLimit(byMinutes: 5, now: t0); Issue.record("extended while beginning") }
        catch { #expect(error.code == .wrongState) }
        var interrupted = active()
        _ = try interrupted.administrativeEnd(reason: "stop")
        do { _ = try interrupted.extendTimeLimit(byMinutes: 5, now: t0); Issue.record("extended an interrupted session") }
        catch { #expect(error.code == .wrongState) }
        var invigilator = active()
        let before = invigilator.sessions
        do { _ = try invigilator.extendTimeLimit(byMinutes: outOfRange, now: t0); Issue.record("extended by \(outOfRange)") }
        catch { #expect(error.code == .badArgument) }
        #expect(invigilator.sessions == before)
    }

    // MARK: - Compare and set (the ssh forced command names its session)

    @Test("end and extend for a session that is no longer live change nothing")
    func compareAndSet() throws {
        let t0 = Instant.seconds(100)
        var invigilator = Invigilator(policy: SessionPolicy(defaultTimeLimit: 3600, maximumTimeLimit: 7200))
        let id = SessionID(2)
        _ = invigilator.begin(id, client: ClientID(7), role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        _ = invigilator.restrictionsApplied(id, .applied, now: t0)
        _ = invigilator.framePresented(id, now: t0)
        let before = invigilator.sessions

        #expect(throws: ControlFailure.self) { try invigilator.extendTimeLimit(byMinutes: 15, now: t0, expecting: SessionID(1)) }
        do {
            _ = try invigilator.administrativeEnd(reason: "over", expecting: SessionID(1))
            Issue.record("ended a session it was not asked to")
        } catch {
            #expect(error.code == .sessionChanged)
            #expect(error.message.contains("session 1") && error.message.contains("session 2 is live now"), "\(error.message)")
        }
        #expect(invigilator.sessions == before)

        let (outcome, _) = try invigilator.extendTimeLimit(byMinutes: 15, now: t0, expecting: id)
        #expect(outcome.session == 2 && outcome.timeLimitSeconds == 3600 + 900)
        let (ended, _) = try invigilator.administrativeEnd(reason: "over", expecting: id)
        #expect(ended.session == 2)
        #expect(invigilator.liveSession?.phase == .interrupted(.administrative))
    }
}
