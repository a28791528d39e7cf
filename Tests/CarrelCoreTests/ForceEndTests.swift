import CarrelCore
import Testing

/// `carrelctl end --force`: the session ends whatever the app does, and the
/// app that owned it is stopped after a grace period.
@Suite("Force end")
struct ForceEndTests {
    let app = ClientID(7)
    let id = SessionID(1)
    let t0 = Instant.seconds(100)

    /// An invigilator with session 1 of client 7 active since t0.
    func active() -> Invigilator {
        var invigilator = Invigilator(policy: SessionPolicy(defaultTimeLimit: 3600, maximumTimeLimit: 7200))
        _ = invigilator.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        _ = invigilator.restrictionsApplied(id, .applied, now: t0)
        _ = invigilator.framePresented(id, now: t0)
        return invigilator
    }

    @Test("end --force parses from the wire and round-trips; plain end stays plain")
    func parsesAndRoundTrips() throws {
        let forced = ControlRequest.parse(Array(#"{"command":"end","reason":"hung","force":true}"#.utf8))
        #expect(try forced.get() == .forceEnd(reason: "hung"))
        let plain = ControlRequest.parse(Array(#"{"command":"end","reason":"hung","force":false}"#.utf8))
        #expect(try plain.get() == .end(reason: "hung"))
        #expect(ControlRequest.forceEnd(reason: "hung").line == #"{"command":"end","force":true,"reason":"hung"}"#)
        #expect(ControlRequest.end(reason: "hung").line == #"{"command":"end","reason":"hung"}"#)
        #expect(ControlRequest.forceEnd(reason: "x").command == "end")
        let bad = ControlRequest.parse(Array(#"{"command":"end","reason":" ","force":true}"#.utf8))
        #expect(throws: ControlFailure.self) { try bad.get() }
        // A forced end names no session: a compare-and-set it would not keep is refused, not dropped.
        let both = ControlRequest.parse(Array(#"{"command":"end","reason":"hung","force":true,"session":3}"#.utf8))
        #expect(throws: ControlFailure.self) { try both.get() }
    }

    @Test("an active session hears interrupted(administrative), then ended; restrictions come down first")
    func activeSessionEnds() throws {
        var invigilator = active()
        let (outcome, owner, effects) = try invigilator.administrativeForceEnd(reason: "app hangs")
        #expect(owner == app)
        #expect(outcome == ControlOutcome(session: 1, message: "app hangs", forced: true))
        #expect(effects.events(on: id) == [.interrupted(.administrative, message: "app hangs"), .ended])
        let revert = try #require(effects.firstIndex(of: .revertRestrictions(id)))
        let ended = try #require(effects.firstIndex(of: .send(id, .ended)))
        #expect(revert < ended, "ended is sent only once everything is restored")
        #expect(effects.contains(.disarmTimeLimit(id)))
        #expect(effects.contains(.lockStateChanged(.inactive)))
        #expect(invigilator.session(id)?.phase == .ended)
        #expect(invigilator.liveSessionID == nil)
        #expect(invigilator.restrictionsInForce == nil)
    }

    @Test("an interrupted session (the app ignored it) hears why it ends, then ended")
    func interruptedSessionEnds() throws {
        var invigilator = active()
        _ = try invigilator.administrativeEnd(reason: "fire alarm")
        let (_, _, effects) = try invigilator.administrativeForceEnd(reason: "app hangs")
        #expect(effects.events(on: id) == [.interrupted(.administrative, message: "app hangs"), .ended])
        #expect(effects.contains(.revertRestrictions(id)))
        #expect(invigilator.session(id)?.phase == .ended)
    }

    @Test("one end sent before the client heard the unasked ended is ignored; a second is a protocol error")
    func endRacingForceEnd() throws {
        var invigilator = active()
        _ = try invigilator.administrativeForceEnd(reason: "app hangs")
        let first = invigilator.end(id)
        #expect(first.protocolErrors.isEmpty && first.events(on: id).isEmpty)
        #expect(invigilator.end(id).protocolErrors == [.alreadyEnded(id)])
    }

    @Test("a session that has not begun fails with cancelled")
    func pendingSessionFails() throws {
        var invigilator = Invigilator()
        _ = invigilator.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        let (_, owner, effects) = try invigilator.administrativeForceEnd(reason: "not today")
        #expect(owner == app)
        #expect(effects.events(on: id) == [.failed(.cancelled, message: "not today")])
        #expect(invigilator.liveSessionID == nil)
    }

    @Test("no session, or a bad reason, is refused and changes nothing")
    func refused() {
        var idle = Invigilator()
        do {
            _ = try idle.administrativeForceEnd(reason: "x")
            Issue.record("force end without a session was accepted")
        } catch {
            #expect(error.code == .noSession)
        }
        var invigilator = active()
        let before = invigilator.sessions
        do {
            _ = try invigilator.administrativeForceEnd(reason: "two\nlines")
            Issue.record("a reason with a newline was accepted")
        } catch {
            #expect(error.code == .badArgument)
        }
        #expect(invigilator.sessions == before)
    }

    @Test("the Desk stops the owner's app after the session's effects, with the grace period")
    func deskStopsTheApp() throws {
        var desk = Desk(Desk.Setup(policy: .builtIn))
        let begun = desk.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        let set = try #require(begun.compactMap { effect -> RestrictionSet? in
            if case .session(.applyRestrictions(let set)) = effect { return set } else { return nil }
        }.first)
        _ = desk.restrictionsApplied(set, .applied, now: t0)
        _ = desk.framePresented(id, now: t0)
        #expect(desk.invigilator.session(id)?.phase == .active)

        let (result, effects) = desk.administrativeForceEnd(reason: "app hangs", notice: .milliseconds(500), grace: .seconds(3))
        let outcome = try result.get()
        #expect(outcome.forced == true && outcome.appStopGraceSeconds == 3 && outcome.session == 1)
        let stops = effects.compactMap { effect -> (ClientID, Duration, Duration)? in
            if case .stopApp(let client, let notice, let grace, _) = effect { return (client, notice, grace) } else { return nil }
        }
        #expect(stops.count == 1)
        #expect(stops.first?.0 == app && stops.first?.1 == .milliseconds(500) && stops.first?.2 == .seconds(3))
        let ended = try #require(effects.firstIndex(of: .session(.send(id, .ended))))
        let stop = try #require(effects.firstIndex { if case .stopApp = $0 { return true } else { return false } })
        #expect(ended < stop, "the app hears ended (if it listens) before it is signalled")
        #expect(desk.invigilator.liveSessionID == nil)

        // Nothing left to end: refused, and no process is stopped.
        let (again, none) = desk.administrativeForceEnd(reason: "again")
        #expect(throws: ControlFailure.self) { try again.get() }
        #expect(none.isEmpty)
    }
}
