import CarrelCore
import Testing

@Suite("Configuration and policy")
struct ConfigurationTests {
    @Test("a new configuration is most restrictive")
    func mostRestrictiveByDefault() {
        let configuration = ConfigurationDraft().configuration
        #expect(configuration == .mostRestrictive)
        #expect(configuration.deniedFeatures == Set(AssessmentFeature.allCases))
        #expect(configuration.participants.isEmpty)
        #expect(configuration.timeLimit == nil)
    }

    @Test("each setter at most once for the same value")
    func settersOnce() throws {
        var draft = ConfigurationDraft()
        try draft.allowFeature(.spellCheck)
        try draft.allowFeature(wireValue: AssessmentFeature.inputMethod.rawValue)
        #expect(throws: ConfigurationError.featureAlreadyAllowed(.spellCheck)) { try draft.allowFeature(.spellCheck) }
        #expect(throws: ConfigurationError.featureAlreadyAllowed(.inputMethod)) { try draft.allowFeature(wireValue: 3) }

        try draft.addParticipant("calculator")
        try draft.addParticipant("dictionary")
        #expect(throws: ConfigurationError.participantAlreadyAdded("calculator")) { try draft.addParticipant("calculator") }

        try draft.setTimeLimit(seconds: 3600)
        #expect(throws: ConfigurationError.timeLimitAlreadySet(previous: 3600)) { try draft.setTimeLimit(seconds: 60) }

        try draft.denyParticipantNetwork("dictionary")
        #expect(throws: ConfigurationError.participantNetworkAlreadyDenied("dictionary")) { try draft.denyParticipantNetwork("dictionary") }
        try draft.denyOwnerNetwork()
        #expect(throws: ConfigurationError.ownerNetworkAlreadyDenied) { try draft.denyOwnerNetwork() }
        #expect(ConfigurationError.ownerNetworkAlreadyDenied.code == 0 && ConfigurationError.participantNetworkAlreadyDenied("x").code == 0,
                "already_set")

        // A refused setter changes nothing.
        #expect(draft.configuration == AssessmentConfiguration(
            allowedFeatures: [.spellCheck, .inputMethod], participants: ["calculator", "dictionary"], timeLimit: 3600,
            networkDeniedParticipants: ["dictionary"], ownerNetworkDenied: true))
        #expect(draft.configuration.description.hasSuffix("time_limit=3600s network_denied=[dictionary,owner]"))
    }

    @Test("bad values are client bugs with their own codes")
    func badValues() {
        var draft = ConfigurationDraft()
        #expect(throws: ConfigurationError.invalidFeature(8)) { try draft.allowFeature(wireValue: 8) }
        #expect(throws: ConfigurationError.invalidTimeLimit) { try draft.setTimeLimit(seconds: 0) }
        #expect(draft.configuration.timeLimit == nil, "a refused time limit is not set, so a valid one may follow")
        #expect(ConfigurationError.featureAlreadyAllowed(.autocorrect).code == 0)
        #expect(ConfigurationError.participantAlreadyAdded("x").code == 0)
        #expect(ConfigurationError.timeLimitAlreadySet(previous: 1).code == 0)
        #expect(ConfigurationError.invalidFeature(99).code == 1)
        #expect(ConfigurationError.invalidTimeLimit.code == 2)
        #expect(ConfigurationError.invalidTimeLimit.description.contains("at least 1 second"))
    }

    @Test("who enforces each feature in this version")
    func enforcement() {
        // The screen reader reads the app over AT-SPI, past the compositor.
        let client: Set<AssessmentFeature> = [.spellCheck, .predictiveText, .autocorrect, .screenReader]
        for feature in AssessmentFeature.allCases {
            #expect(feature.enforcement == (client.contains(feature) ? .client : .compositor), "\(feature)")
        }
        #expect(SessionPolicy().announcements.map(\.feature) == AssessmentFeature.allCases, "announced in protocol order")
    }

    @Test("the policy refuses what it cannot honour, and says why")
    func policyRefusals() {
        let policy = SessionPolicy(maximumTimeLimit: 7200, knownParticipants: ["calculator"])
        #expect(policy.refusal(of: .mostRestrictive) == nil)
        #expect(policy.refusal(of: AssessmentConfiguration(participants: ["calculator"], timeLimit: 7200)) == nil)
        #expect(policy.refusal(of: AssessmentConfiguration(participants: ["browser"]))?.contains("\"browser\"") == true)
        #expect(policy.refusal(of: AssessmentConfiguration(timeLimit: 7201))?.contains("maximum of 7200 s") == true)
        #expect(SessionPolicy().effectiveMaximumTimeLimit == 8 * 3600)
        #expect(SessionPolicy().refusal(of: AssessmentConfiguration(timeLimit: 8 * 3600)) == nil)
        #expect(SessionPolicy().refusal(of: AssessmentConfiguration(timeLimit: 8 * 3600 + 1)) != nil)
    }

    @Test("a denied feature nobody announced cannot be enforced; allowing it is fine")
    func unannouncedFeatures() {
        var announced = SessionPolicy.standardAnnouncements
        announced[.screenReader] = nil
        let policy = SessionPolicy(announcedFeatures: announced)
        #expect(policy.refusal(of: .mostRestrictive)?.contains("screen_reader") == true)
        #expect(policy.refusal(of: AssessmentConfiguration(allowedFeatures: [.screenReader])) == nil)
    }

    @Test("restrictions follow the configuration")
    func restrictionSet() {
        let policy = SessionPolicy(knownParticipants: ["calculator"])
        let configuration = AssessmentConfiguration(allowedFeatures: [.spellCheck, .screenMagnifier], participants: ["calculator"])
        let set = RestrictionSet(session: SessionID(4), owner: ClientID(2), configuration: configuration, policy: policy)
        #expect(set.hideUntrustedWindows && set.refuseCapture && set.isolateClipboard && set.inputOnlyToSession)
        #expect(set.allowedFeatures == [.spellCheck, .screenMagnifier])
        #expect(set.compositorEnforcedDenials == [.inputMethod, .onScreenKeyboard, .keyboardShortcuts],
                "client-enforced denials (the screen reader's too: it reads the app over AT-SPI) are the client's job")
        #expect(set.participants == ["calculator"])
    }

    @Test("reasons newer than the client's version reach it as other")
    func catchAllReasons() {
        for reason in FailureReason.allCases {
            #expect(reason.wireValue(forVersion: reason.since) == reason.rawValue)
            #expect(reason.wireValue(forVersion: reason.since - 1) == FailureReason.other.rawValue)
        }
        // Version 2's reason: a version-1 client hears other, a version-2 one the reason.
        #expect(FailureReason.preconditionsUnmet.wireValue(forVersion: 1) == 0)
        #expect(FailureReason.preconditionsUnmet.wireValue(forVersion: 2) == 10)
        #expect(FailureReason.unsupportedConfiguration.wireValue(forVersion: 1) == 3)
        #expect(FailureReason(wireValue: 99) == .other && FailureReason(wireValue: 10) == .preconditionsUnmet)
        for reason in InterruptionReason.allCases {
            #expect(reason.wireValue(forVersion: 1) == reason.rawValue)
            #expect(reason.wireValue(forVersion: reason.since - 1) == InterruptionReason.other.rawValue)
        }
        #expect(FailureReason.other.rawValue == 0 && InterruptionReason.other.rawValue == 0)
    }

    @Test("instants saturate instead of trapping")
    func instants() {
        let t = Instant(nanoseconds: 5)
        #expect(t.advanced(by: .nanoseconds(10)).nanoseconds == 15)
        #expect(t.advanced(by: .nanoseconds(-10)) == .zero)
        #expect(Instant(nanoseconds: .max - 1).advanced(by: .seconds(1)).nanoseconds == .max)
        #expect(t.advanced(by: .seconds(Int64.max)).nanoseconds == .max)
        #expect(Instant.seconds(2).advanced(bySeconds: 3) == .seconds(5))
        #expect(Instant.seconds(5).duration(since: .seconds(2)) == .seconds(3))
        #expect(Instant.seconds(2).duration(since: .seconds(5)) == .zero)
        #expect(Instant(nanoseconds: 1_234_000_000).description == "t=1.234s")
    }
}

@Suite("A network denial needs the network restriction")
struct NetworkDenialTests {
    @Test("without providers.network, taking network away is refused, naming who; with it, accepted")
    func refusedWithoutTheProvider() {
        var policy = Policy.builtIn
        policy.session.knownParticipants = ["calculator", "dictionary"]
        var owner = AssessmentConfiguration()
        owner.ownerNetworkDenied = true
        var participant = AssessmentConfiguration(participants: ["calculator", "dictionary"])
        participant.networkDeniedParticipants = ["dictionary", "not-named"]
        let refusal = policy.sessionTerms.refusal(of: owner)
        #expect(refusal?.contains("the session's owner off the network") == true)
        #expect(refusal?.contains("providers.network is off") == true)
        let named = policy.sessionTerms.refusal(of: participant)
        #expect(named?.contains("participant \"dictionary\"") == true && named?.contains("not-named") == false)
        // A denial of a participant the configuration does not name has no effect, so nothing to refuse.
        var unnamed = AssessmentConfiguration(participants: ["calculator"])
        unnamed.networkDeniedParticipants = ["dictionary"]
        #expect(policy.sessionTerms.refusal(of: unnamed) == nil)
        #expect(policy.sessionTerms.refusal(of: AssessmentConfiguration()) == nil)
        policy.providers.network = true
        #expect(policy.sessionTerms.refusal(of: owner) == nil && policy.sessionTerms.refusal(of: participant) == nil)
    }
}
