import CarrelCore
import Testing

/// Whole lifecycles with exact effect lists, for the orderings the
/// compositor depends on and the rules the table cannot show in one step.
@Suite("Session lifecycle")
struct SessionLifecycleTests {
    let app = ClientID(1)
    let otherApp = ClientID(2)
    let first = SessionID(1)
    let second = SessionID(2)
    let t0 = Instant.seconds(50)

    func begun(policy: SessionPolicy = SessionPolicy(), configuration: AssessmentConfiguration? = nil) -> CompositorDouble {
        var compositor = CompositorDouble(policy: policy)
        compositor.now = t0
        let (id, app, now) = (first, app, t0)
        compositor.run { $0.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: configuration, now: now) }
        compositor.run { $0.framePresented(id, now: now) }
        return compositor
    }

    @Test("begin → began → end, effect by effect")
    func happyPath() {
        var invigilator = Invigilator(policy: SessionPolicy(defaultTimeLimit: 3600))
        let set = RestrictionSet(session: first, owner: app, configuration: .mostRestrictive, policy: invigilator.policy)

        let begin = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        #expect(begin.withoutLogs == [.lockStateChanged(.active), .clearSelections, .applyRestrictions(set)])
        #expect(invigilator.lockState == .active)
        #expect(invigilator.restrictionsInForce == nil, "not confirmed yet")

        let applied = invigilator.restrictionsApplied(first, .applied, now: t0)
        let waitUntil = t0.advanced(by: .seconds(3))
        #expect(applied.withoutLogs == [.startPresentationWait(first, deadline: waitUntil)])
        #expect(invigilator.restrictionsInForce == set)

        let frameAt = t0.advanced(by: .milliseconds(16))
        let presented = invigilator.framePresented(first, now: frameAt)
        #expect(presented.withoutLogs == [
            .stopPresentationWait(first),
            .armTimeLimit(first, deadline: frameAt.advanced(bySeconds: 3600)),
            .send(first, .began),
        ])

        let end = invigilator.end(first)
        #expect(end.withoutLogs == [
            .clearSelections, .revertRestrictions(first), .disarmTimeLimit(first),
            .lockStateChanged(.inactive), .send(first, .ended),
        ])
        #expect(invigilator.restrictionsInForce == nil)
        #expect(invigilator.lockState == .inactive)
        #expect(invigilator.session(first)?.phase == .ended)
        #expect(invigilator.destroy(first).isEmpty, "destroying an inert session only frees it")
        #expect(invigilator.sessions.isEmpty)
    }

    @Test("every input logs a line for the transition it causes")
    func transitionsAreLogged() {
        var compositor = begun()
        let id = first
        let effects = compositor.run { $0.integrityLost("capture client appeared") } + compositor.run { $0.end(id) }
        let logs = effects.compactMap { if case .log(let entry) = $0 { return entry.message } else { return nil } }
        #expect(logs.contains { $0.contains("interrupted(integrity)") })
        #expect(logs.contains { $0.contains("ended") && $0.contains("restrictions reverted") })
    }

    @Test("a second begin fails with already_active and leaves the first untouched")
    func secondBeginFails() {
        var compositor = begun()
        let before = compositor.invigilator.session(first)
        let held = compositor.held
        let (id, client, now) = (second, otherApp, t0)
        let effects = compositor.run { $0.begin(id, client: client, role: .app, surface: .mappedToplevel, configuration: nil, now: now) }
        #expect(effects.withoutLogs.count == 1)
        #expect(effects.events(on: second).map(\.kind) == [.failed(.alreadyActive)])
        #expect(!effects.clearsSelections, "the first session's clipboard is not touched")
        #expect(compositor.invigilator.session(first) == before)
        #expect(compositor.held == held)
        if case .failed(_, let message) = effects.events(on: second).first {
            #expect(!message.contains("\(app)"), "the message does not name another client")
        }
    }

    @Test("a client the policy does not entitle learns nothing about other sessions")
    func entitlementComesFirst() {
        var compositor = begun()
        let (id, now) = (second, t0)
        let effects = compositor.run { $0.begin(id, client: ClientID(9), role: .untrusted, surface: .mappedToplevel, configuration: nil, now: now) }
        #expect(effects.events(on: second).map(\.kind) == [.failed(.notEntitled)])
    }

    @Test("begin with a surface that is not a toplevel is a protocol error; one not mapped yet fails")
    func surfaces() {
        var invigilator = Invigilator()
        let bad = invigilator.begin(first, client: app, role: .app, surface: .notToplevel, configuration: nil, now: t0)
        #expect(bad.withoutLogs == [.protocolError(.badSurface(first))])
        #expect(invigilator.session(first) == nil)
        #expect(invigilator.lockState == .inactive)

        let early = invigilator.begin(second, client: app, role: .app, surface: .unmappedToplevel, configuration: nil, now: t0)
        #expect(early.events(on: second).map(\.kind) == [.failed(.surfaceNotReady)])
        #expect(invigilator.lockState == .inactive)
    }

    @Test("configurations the policy cannot honour fail with unsupported_configuration", arguments: [
        AssessmentConfiguration(participants: ["browser"]),
        AssessmentConfiguration(timeLimit: 8 * 3600 + 1),
    ])
    func unsupportedConfiguration(_ configuration: AssessmentConfiguration) {
        var invigilator = Invigilator(policy: SessionPolicy(knownParticipants: ["calculator"]))
        let effects = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: configuration, now: t0)
        #expect(effects.events(on: first).map(\.kind) == [.failed(.unsupportedConfiguration)])
        #expect(effects.appliedSets.isEmpty)
    }

    @Test("restriction failure at begin: everything reverted before failed")
    func restrictionFailureAtBegin() {
        var compositor = CompositorDouble()
        compositor.hookOutcome = { _ in .failed("screencopy global could not be withdrawn") }
        let (id, app, now) = (first, app, t0)
        let effects = compositor.run { $0.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: now) }
        let core = effects.withoutLogs
        let revert = core.firstIndex(of: .revertRestrictions(first))
        let failed = core.firstIndex { if case .send(_, .failed(.restrictionFailed, _)) = $0 { return true } else { return false } }
        #expect(revert != nil && failed != nil && revert! < failed!)
        #expect(compositor.held == nil)
        #expect(compositor.lockState == .inactive)
        #expect(compositor.invariantViolations().isEmpty)
    }

    @Test("unmet preconditions at begin: everything reverted, then failed(preconditions_unmet) with the list")
    func preconditionsUnmetAtBegin() {
        var compositor = CompositorDouble()
        compositor.hookOutcome = { _ in .unsupported("nested: …; seat: …") }
        let (id, app, now) = (first, app, t0)
        let effects = compositor.run { $0.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: now) }
        let core = effects.withoutLogs
        let revert = core.firstIndex(of: .revertRestrictions(first))
        let failed = core.firstIndex { if case .send(_, .failed(.preconditionsUnmet, "nested: …; seat: …")) = $0 { return true } else { return false } }
        #expect(revert != nil && failed != nil && revert! < failed!)
        #expect(compositor.held == nil && compositor.lockState == .inactive)
        #expect(compositor.invariantViolations().isEmpty)
    }

    @Test("the presentation wait is bounded; a timer that fires early is re-armed")
    func presentationTimeout() {
        var invigilator = Invigilator(policy: SessionPolicy(presentationTimeout: .milliseconds(500)))
        _ = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        _ = invigilator.restrictionsApplied(first, .applied, now: t0)
        let deadline = t0.advanced(by: .milliseconds(500))

        let early = invigilator.presentationDeadlinePassed(first, now: t0.advanced(by: .milliseconds(499)))
        #expect(early == [.startPresentationWait(first, deadline: deadline)])
        #expect(invigilator.session(first)?.phase == .awaitingPresentation(deadline: deadline))

        let late = invigilator.presentationDeadlinePassed(first, now: deadline)
        #expect(late.events(on: first).map(\.kind) == [.failed(.timeout)])
        #expect(late.withoutLogs.contains(.stopPresentationWait(first)))
        #expect(late.withoutLogs.contains(.revertRestrictions(first)))
        #expect(invigilator.framePresented(first, now: deadline).isEmpty, "a frame after the timeout changes nothing")
    }

    @Test("the time limit counts from began; the policy default and the 8-hour fallback apply")
    func timeLimits() {
        var invigilator = Invigilator()
        _ = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        _ = invigilator.restrictionsApplied(first, .applied, now: t0)
        let began = t0.advanced(by: .seconds(1))
        let effects = invigilator.framePresented(first, now: began)
        #expect(effects.contains(.armTimeLimit(first, deadline: began.advanced(bySeconds: 8 * 3600))))

        #expect(invigilator.timeLimitReached(first, now: began.advanced(bySeconds: 100)) ==
            [.armTimeLimit(first, deadline: began.advanced(bySeconds: 8 * 3600))], "early timer re-armed")
        let reached = invigilator.timeLimitReached(first, now: began.advanced(bySeconds: 8 * 3600))
        #expect(reached.events(on: first).map(\.kind) == [.interrupted(.timeLimit)])
        #expect(invigilator.restrictionsInForce != nil, "interrupted is not terminal")
        #expect(invigilator.timeLimitReached(first, now: began.advanced(bySeconds: 9 * 3600)).isEmpty, "fires once")

        #expect(SessionPolicy(defaultTimeLimit: 60).timeLimit(for: .mostRestrictive) == 60)
        #expect(SessionPolicy(defaultTimeLimit: 60).timeLimit(for: AssessmentConfiguration(timeLimit: 90)) == 90)
        #expect(SessionPolicy(defaultTimeLimit: 7200, maximumTimeLimit: 3600).effectiveDefaultTimeLimit == 3600)
    }

    @Test("interrupted keeps every restriction until the client ends the session")
    func interruptedFailsClosed() {
        var compositor = begun()
        let held = compositor.held
        compositor.run { $0.administrativeInterrupt("proctor paused the exam") }
        #expect(compositor.held == held)
        #expect(compositor.invigilator.lockState == .active)
        let id = first
        let effects = compositor.run { $0.end(id) }
        #expect(effects.events(on: first).map(\.kind) == [.ended])
        #expect(compositor.held == nil)
        #expect(compositor.invariantViolations().isEmpty)
    }

    @Test("an update applies completely or not at all")
    func updateAllOrNothing() {
        var compositor = begun(policy: SessionPolicy(knownParticipants: ["calculator"]))
        let id = first
        let original = compositor.invigilator.session(first)!.configuration
        let held = compositor.held

        let unknown = compositor.run { $0.update(id, to: AssessmentConfiguration(allowedFeatures: [.spellCheck], participants: ["calculator", "browser"])) }
        #expect(unknown.events(on: first).map(\.kind) == [.updateFailed(.unsupportedConfiguration)])
        #expect(compositor.invigilator.session(first)?.configuration == original)
        #expect(compositor.held == held)

        compositor.hookOutcome = { _ in .failed("on-screen keyboard could not be hidden") }
        let refused = compositor.run { $0.update(id, to: AssessmentConfiguration(allowedFeatures: [.inputMethod])) }
        #expect(refused.events(on: first).map(\.kind) == [.updateFailed(.restrictionFailed)])
        #expect(compositor.invigilator.session(first)?.configuration == original)
        #expect(compositor.held == held)

        compositor.hookOutcome = { _ in .applied }
        let wanted = AssessmentConfiguration(allowedFeatures: [.inputMethod], participants: ["calculator"])
        let applied = compositor.run { $0.update(id, to: wanted) }
        #expect(applied.events(on: first).map(\.kind) == [.updated])
        #expect(compositor.invigilator.session(first)?.configuration == wanted)
        #expect(compositor.held?.participants == ["calculator"])
        #expect(compositor.held?.compositorEnforcedDenials.contains(.inputMethod) == false)
        #expect(compositor.invariantViolations().isEmpty)
    }

    @Test("updates are answered in the order they were sent")
    func updatesInOrder() {
        var compositor = begun(policy: SessionPolicy(knownParticipants: ["calculator"]))
        compositor.reportsImmediately = false
        let id = first
        var effects = compositor.run { $0.update(id, to: AssessmentConfiguration(allowedFeatures: [.spellCheck])) }
        effects += compositor.run { $0.update(id, to: AssessmentConfiguration(participants: ["browser"])) }
        effects += compositor.run { $0.update(id, to: AssessmentConfiguration(allowedFeatures: [.autocorrect])) }
        #expect(effects.events(on: first).isEmpty, "nothing answered before the first update is applied")
        effects += compositor.deliverReport()
        effects += compositor.deliverReport()
        #expect(effects.events(on: first).map(\.kind) == [.updated, .updateFailed(.unsupportedConfiguration), .updated])
        #expect(compositor.invigilator.session(first)?.configuration.allowedFeatures == [.autocorrect])
        #expect(compositor.invariantViolations().isEmpty)
    }

    @Test("a new time limit counts from began; one already passed interrupts right after updated")
    func updateTimeLimit() {
        var compositor = begun(configuration: AssessmentConfiguration(timeLimit: 3600))
        let id = first
        let began = compositor.invigilator.session(first)!.beganAt!

        let longer = compositor.run { $0.update(id, to: AssessmentConfiguration(timeLimit: 7200)) }
        #expect(longer.contains(.armTimeLimit(first, deadline: began.advanced(bySeconds: 7200))))

        compositor.now = began.advanced(bySeconds: 600)
        let passed = compositor.run { $0.update(id, to: AssessmentConfiguration(timeLimit: 300)) }
        #expect(passed.events(on: first).map(\.kind) == [.updated, .interrupted(.timeLimit)])
        #expect(compositor.timeLimits.isEmpty)
        #expect(compositor.invariantViolations().isEmpty)
    }

    @Test("destroying a pending session ends it at once; the late report is ignored")
    func destroyWhileBeginning() {
        var compositor = CompositorDouble()
        compositor.now = t0
        compositor.reportsImmediately = false
        let (id, app, now) = (first, app, t0)
        compositor.run { $0.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: now) }
        #expect(compositor.held != nil, "the hook already applied")
        let destroyed = compositor.clientDestroys(first)
        #expect(destroyed.events(on: first).isEmpty)
        #expect(destroyed.withoutLogs.contains(.revertRestrictions(first)))
        #expect(compositor.held == nil)
        let late = compositor.deliverReport()
        #expect(late.withoutLogs.isEmpty)
        #expect(compositor.held == nil)
        #expect(compositor.invariantViolations().isEmpty)

        // A new session can begin at once.
        let (next, now2) = (second, t0)
        compositor.reportsImmediately = true
        compositor.run { $0.begin(next, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: now2) }
        #expect(compositor.invigilator.session(second)?.phase == .awaitingPresentation(deadline: t0.advanced(by: .seconds(3))))
    }

    @Test("disconnecting ends the session and frees the lock for another client")
    func disconnect() {
        var compositor = begun()
        let (client, other, id, now) = (app, otherApp, second, t0)
        let gone = compositor.clientDisconnects(client)
        #expect(gone.clearsSelections)
        #expect(compositor.invigilator.sessions.isEmpty)
        compositor.run { $0.begin(id, client: other, role: .app, surface: .mappedToplevel, configuration: nil, now: now) }
        compositor.run { $0.framePresented(id, now: now) }
        #expect(compositor.eventsBySession[second]?.map(\.kind) == [.began])
        #expect(compositor.invariantViolations().isEmpty)
    }

    @Test("end before began and end twice are protocol errors; after failed, requests are ignored")
    func clientBugs() {
        var invigilator = Invigilator()
        _ = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        #expect(invigilator.end(first).protocolErrors == [.notBegun(first)])
        #expect(invigilator.update(first, to: .mostRestrictive).protocolErrors == [.notBegun(first)])
        _ = invigilator.restrictionsApplied(first, .applied, now: t0)
        _ = invigilator.framePresented(first, now: t0)
        #expect(invigilator.end(first).events(on: first).map(\.kind) == [.ended])
        #expect(invigilator.end(first).protocolErrors == [.alreadyEnded(first)])
        #expect(invigilator.update(first, to: .mostRestrictive).withoutLogs.isEmpty)

        _ = invigilator.begin(second, client: app, role: .app, surface: .unmappedToplevel, configuration: nil, now: t0)
        #expect(invigilator.end(second).withoutLogs.isEmpty)
        #expect(invigilator.update(second, to: .mostRestrictive).withoutLogs.isEmpty)
    }

    @Test("after shutdown no session may begin")
    func shutdownRefusesBegin() {
        var compositor = begun()
        let (id, client, now) = (second, otherApp, t0)
        let effects = compositor.run { $0.shutdown("poweroff") }
        #expect(effects.events(on: first).map(\.kind) == [.interrupted(.shutdown)])
        compositor.clientDisconnects(app)
        let refused = compositor.run { $0.begin(id, client: client, role: .app, surface: .mappedToplevel, configuration: nil, now: now) }
        #expect(refused.events(on: second).map(\.kind) == [.failed(.cancelled)])
    }

    @Test("a reused session id is a compositor bug and changes nothing")
    func reusedID() {
        var invigilator = Invigilator()
        _ = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        let before = invigilator.sessions
        let again = invigilator.begin(first, client: otherApp, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        #expect(again.withoutLogs.isEmpty)
        #expect(invigilator.sessions == before)
    }
}
