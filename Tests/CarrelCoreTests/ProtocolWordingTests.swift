import CarrelCore
import Testing

/// Statements of carrel-assessment-v1.xml that were once ambiguous, checked
/// against what the Invigilator and the configuration draft actually decide.
@Suite("What the protocol text promises")
struct ProtocolWordingTests {
    let first = SessionID(1), second = SessionID(2)
    let app = ClientID(7), other = ClientID(8)
    let t0 = Instant.seconds(100)

    /// An Invigilator whose session `first` of `app` has begun.
    func begun() -> Invigilator {
        var invigilator = Invigilator()
        _ = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        _ = invigilator.restrictionsApplied(first, .applied, now: t0)
        _ = invigilator.framePresented(first, now: t0)
        return invigilator
    }

    @Test("allow_feature and add_participant: once per value; set_time_limit: once per object, whatever the value")
    func setterRepeats() throws {
        var draft = ConfigurationDraft()
        try draft.allowFeature(.spellCheck)
        try draft.allowFeature(.screenReader)
        try draft.addParticipant("calculator")
        try draft.addParticipant("dictionary")
        try draft.setTimeLimit(seconds: 60)
        #expect(throws: ConfigurationError.featureAlreadyAllowed(.spellCheck)) { try draft.allowFeature(.spellCheck) }
        #expect(throws: ConfigurationError.participantAlreadyAdded("calculator")) { try draft.addParticipant("calculator") }
        #expect(throws: ConfigurationError.timeLimitAlreadySet(previous: 60)) { try draft.setTimeLimit(seconds: 120) }
        #expect(throws: ConfigurationError.timeLimitAlreadySet(previous: 60)) { try draft.setTimeLimit(seconds: 60) }
        #expect(ConfigurationError.timeLimitAlreadySet(previous: 60).code == ConfigurationError.featureAlreadyAllowed(.spellCheck).code,
                "both are already_set")
        #expect(draft.configuration == AssessmentConfiguration(allowedFeatures: [.spellCheck, .screenReader],
                                                               participants: ["calculator", "dictionary"], timeLimit: 60))
    }

    @Test("a second end is already_ended as soon as the first was accepted; after failed, end is ignored")
    func secondEnd() {
        var invigilator = begun()
        let ended = invigilator.end(first)
        #expect(ended.events(on: first) == [.ended])
        // The client may not have received ended yet: the Invigilator cannot tell, and need not.
        #expect(invigilator.end(first).protocolErrors == [.alreadyEnded(first)])

        var refused = Invigilator(policy: SessionPolicy(entitledRoles: []))
        _ = refused.begin(second, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        #expect(refused.end(second).protocolErrors.isEmpty)
        #expect(refused.end(second).protocolErrors.isEmpty, "however often it is sent")
    }

    @Test("a begin refused at once never touches the lock state", arguments: [
        "not_entitled", "already_active", "unsupported_configuration", "surface_not_ready", "cancelled",
    ])
    func refusedBegin(reason: String) {
        var invigilator: Invigilator
        var role = Role.app
        var surface = SurfaceReadiness.mappedToplevel
        var configuration: AssessmentConfiguration?
        switch reason {
        case "not_entitled": invigilator = Invigilator(); role = .untrusted
        case "already_active": invigilator = begun()
        case "unsupported_configuration": invigilator = Invigilator(); configuration = AssessmentConfiguration(timeLimit: .max)
        case "surface_not_ready": invigilator = Invigilator(); surface = .unmappedToplevel
        default: invigilator = Invigilator(); _ = invigilator.shutdown("stopping")
        }
        let before = invigilator.lockState
        let effects = invigilator.begin(second, client: other, role: role, surface: surface, configuration: configuration, now: t0)
        #expect(effects.events(on: second).map(\.parts.reason) == [reason])
        #expect(!effects.contains { if case .lockStateChanged = $0 { return true } else { return false } })
        #expect(effects.appliedSets.isEmpty && !effects.clearsSelections)
        #expect(invigilator.lockState == before)
    }

    @Test("a begin that passes the checks makes the lock state active before its answer")
    func acceptedBegin() {
        var invigilator = Invigilator()
        let effects = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        #expect(effects.withoutLogs.first == .lockStateChanged(.active))
        #expect(effects.events(on: first).isEmpty)
    }

    @Test("destroy: no event on the session, but the lock state goes inactive for every manager", arguments: [true, false])
    func destroy(afterBegan: Bool) {
        var invigilator = Invigilator()
        if afterBegan {
            invigilator = begun()
        } else {
            // A pending begin, cancelled by destroying the session object.
            _ = invigilator.begin(first, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: t0)
        }
        let effects = invigilator.destroy(first)
        #expect(effects.events(on: first).isEmpty)
        #expect(effects.contains(.lockStateChanged(.inactive)))
        #expect(effects.contains(.revertRestrictions(first)))
        #expect(invigilator.lockState == .inactive)
    }
}
