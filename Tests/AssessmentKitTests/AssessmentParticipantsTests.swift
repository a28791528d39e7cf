import AssessmentKit
import Testing

@Suite("Participants, Apple's names and what the compositor's version supports")
struct AssessmentParticipantsTests {
    let calculator = AssessmentApplication(policyName: "calculator")
    let dictionary = AssessmentApplication(policyName: "dictionary")

    @Test("configurationsByApplication is the participant list seen as applications")
    func byApplication() {
        var configuration = AssessmentConfiguration()
        #expect(configuration.configurationsByApplication.isEmpty)
        #expect(configuration.mainParticipantConfiguration.allowsNetworkAccess == true, "Apple's default: as far as the policy allows")

        configuration.setConfiguration(AssessmentParticipantConfiguration(allowsNetworkAccess: true), for: calculator)
        configuration.setConfiguration(AssessmentParticipantConfiguration(), for: dictionary)
        configuration.setConfiguration(AssessmentParticipantConfiguration(allowsNetworkAccess: false), for: calculator)
        #expect(configuration.participants == ["calculator", "dictionary"], "set again replaces, never adds twice")
        #expect(configuration.configurationsByApplication == [
            calculator: AssessmentParticipantConfiguration(allowsNetworkAccess: false),
            dictionary: AssessmentParticipantConfiguration(allowsNetworkAccess: true),
        ])

        // Ids named through the plain list have the default configuration.
        configuration.participants.append("periodic-table")
        #expect(configuration.configurationsByApplication[AssessmentApplication(policyName: "periodic-table")]
                == AssessmentParticipantConfiguration())

        configuration.remove(calculator)
        #expect(configuration.participants == ["dictionary", "periodic-table"])
        #expect(configuration.configurationsByApplication[calculator] == nil)

        // Dropping an id from the plain list drops its configuration too.
        var networked = AssessmentConfiguration()
        networked.setConfiguration(AssessmentParticipantConfiguration(allowsNetworkAccess: true), for: calculator)
        networked.participants = []
        #expect(networked == AssessmentConfiguration())
    }

    @Test("each application is sent once, by its policy name")
    func sentByPolicyName() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.knownParticipants = ["calculator"]
        var configuration = AssessmentConfiguration()
        configuration.setConfiguration(AssessmentParticipantConfiguration(allowsNetworkAccess: true), for: calculator)
        let (session, recorder) = makeSession(lockdown, configuration)
        session.begin()
        lockdown.dispatch()
        #expect(recorder.events == [.began])
        #expect(lockdown.lockedConfiguration?.participants == ["calculator"])
    }

    @Test("a participant the modelled policy does not define is refused as the compositor refuses it")
    func unknownParticipant() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.knownParticipants = ["calculator"]
        var configuration = AssessmentConfiguration()
        configuration.setConfiguration(AssessmentParticipantConfiguration(), for: AssessmentApplication(policyName: "browser"))
        let (session, recorder) = makeSession(lockdown, configuration)
        session.begin()
        lockdown.dispatch()
        #expect(recorder.events == [.failed(AssessmentError(
            .unsupportedConfiguration, message: "participant \"browser\" not in the policy (known: calculator)"))])
        #expect(!lockdown.isLocked)
    }

    @Test("a time limit above the modelled maximum is refused")
    func aboveMaximum() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.maximumTimeLimit = 600
        let (session, recorder) = makeSession(lockdown, AssessmentConfiguration(timeLimit: .seconds(600) + .milliseconds(1)))
        session.begin()
        lockdown.dispatch()
        #expect(recorder.events == [.failed(AssessmentError(
            .unsupportedConfiguration, message: "time limit 601 s is above the policy's maximum of 600 s"))])
    }

    @Test("what a lockdown supports follows its protocol version",
          arguments: [(UInt32?.none, false, false), (1, false, true), (2, true, true), (3, true, true)])
    func supportsByVersion(version: UInt32?, participants: Bool, updates: Bool) {
        let lockdown = InMemoryAssessmentManager()
        lockdown.protocolVersion = version
        #expect(lockdown.supportsMultipleParticipants == participants)
        #expect(lockdown.supportsConfigurationUpdates == updates)
    }

    @Test("participants through a version-1 compositor fail at once, without a request")
    func participantsOnVersionOne() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.protocolVersion = 1
        let (session, recorder) = makeSession(lockdown, AssessmentConfiguration(participants: ["calculator"]))
        session.begin()
        #expect(recorder.events.map(\.kind) == [.failed])
        if case .failed(let error) = recorder.events.first {
            #expect(error.code == .multipleParticipantsNotSupported)
            #expect(error.message.contains("version 1"))
        }
        #expect(lockdown.requests.isEmpty)
        #expect(session.state == .failed)

        // Without participants the same lockdown begins, and an update naming one is refused locally.
        let (plain, plainRecorder) = makeSession(lockdown)
        plain.begin()
        lockdown.dispatch()
        let withCalculator = AssessmentConfiguration(participants: ["calculator"])
        plain.update(to: withCalculator)
        #expect(plainRecorder.events.count == 2)
        guard case .updateFailed(withCalculator, let error) = plainRecorder.events.last else {
            Issue.record("expected update failed, heard \(plainRecorder.events)")
            return
        }
        #expect(error.code == .multipleParticipantsNotSupported)
        #expect(lockdown.requests == [.begin(AssessmentConfiguration())], "the refused update was never sent")
        #expect(lockdown.lockedConfiguration == AssessmentConfiguration())
    }

    @Test("network taken away through a compositor older than version 3 fails at once, begin and update, without a request")
    func networkDenialOnVersionTwo() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.protocolVersion = 2
        var ownerOff = AssessmentConfiguration()
        ownerOff.mainParticipantConfiguration.allowsNetworkAccess = false
        var calculatorOff = AssessmentConfiguration()
        calculatorOff.setConfiguration(AssessmentParticipantConfiguration(allowsNetworkAccess: false),
                                       for: AssessmentApplication(policyName: "calculator"))
        for configuration in [ownerOff, calculatorOff] {
            let (session, recorder) = makeSession(lockdown, configuration)
            session.begin()
            #expect(recorder.events.map(\.kind) == [.failed])
            if case .failed(let error) = recorder.events.first {
                #expect(error.code == .unsupportedConfiguration)
                #expect(error.message.contains("allowsNetworkAccess = false") && error.message.contains("version 2"))
            }
        }
        #expect(lockdown.requests.isEmpty)

        let (plain, plainRecorder) = makeSession(lockdown)
        plain.begin()
        lockdown.dispatch()
        plain.update(to: ownerOff)
        #expect(plainRecorder.events.last?.kind == .updateFailed)
        #expect(lockdown.requests == [.begin(AssessmentConfiguration())], "the refused update was never sent")

        // A version-3 lockdown (the default) takes the denial to it.
        let (current, currentRecorder) = makeSession(InMemoryAssessmentManager(), calculatorOff)
        current.begin()
        #expect(currentRecorder.events.isEmpty, "sent, answered later")
    }

    @Test("a participant given the default configuration compares equal to one named in the plain list")
    func defaultConfigurationIsNoConfiguration() {
        var named = AssessmentConfiguration(participants: ["calculator"])
        var configured = AssessmentConfiguration()
        configured.setConfiguration(AssessmentParticipantConfiguration(), for: AssessmentApplication(policyName: "calculator"))
        #expect(configured == named)
        named.setConfiguration(AssessmentParticipantConfiguration(allowsNetworkAccess: false),
                               for: AssessmentApplication(policyName: "calculator"))
        #expect(configured != named)
    }

    @Test("an update through a lockdown that cannot update fails at once")
    func updatesNotSupported() {
        let lockdown = InMemoryAssessmentManager()
        let (session, recorder) = makeSession(lockdown)
        session.begin()
        lockdown.dispatch()
        lockdown.protocolVersion = 0
        session.update(to: AssessmentConfiguration(allowedFeatures: [.spellCheck]))
        #expect(recorder.events.last?.kind == .updateFailed)
        if case .updateFailed(_, let error) = recorder.events.last {
            #expect(error.code == .configurationUpdatesNotSupported)
        }
        #expect(lockdown.requests == [.begin(AssessmentConfiguration())])
    }

    @Test("Apple's error names stand for the Carrel codes that mean the same")
    func appleNames() {
        // participant_unavailable is failure_reason 11 on the wire; not_available arises in the client.
        #expect(AssessmentError.Code(failureReason: 11) == .requiredParticipantsNotAvailable)
        #expect(AssessmentError.Code(failureReason: 0) == .unknown)
        #expect(AssessmentError.Code(failureReason: 999) == .unknown)
        #expect(AssessmentError.Code.unsupportedPlatform.protocolName == "not_available")
        #expect(AssessmentError.Code.multipleParticipantsNotSupported.protocolName == "multiple_participants_not_supported")
        #expect(AssessmentError.Code.configurationUpdatesNotSupported.protocolName == "configuration_updates_not_supported")
        #expect(AssessmentError.Code.multipleParticipantsNotSupported.failureReason == nil, "arises in the client only")
    }

    @Test("no compositor at the display asked for: no version")
    func noCompositor() {
        #expect(WaylandAssessmentManager.offeredVersion(displayName: "/nonexistent/carrel-no-compositor") == nil)
    }
}

/// `AssessmentSession(configuration:)` and the class properties read one
/// process-wide default lockdown, so these run one at a time and put it back.
@Suite("The default lockdown of AssessmentSession(configuration:)", .serialized)
struct DefaultLockdownTests {
    @Test("without a compositor connection, begin reports notAvailable to the delegate; nothing is thrown")
    func missingCompositor() {
        let saved = AssessmentSession.defaultManager
        defer { AssessmentSession.defaultManager = saved }
        AssessmentSession.defaultManager = nil
        let session = AssessmentSession(configuration: AssessmentConfiguration())
        let recorder = DelegateRecorder()
        session.delegate = recorder
        session.begin()
        #expect(recorder.events.map(\.kind) == [.failed])
        if case .failed(let error) = recorder.events.first {
            #expect(error.code == .unsupportedPlatform)
            #expect(error.message.contains("WaylandAssessmentManager.connectDefault"))
        }
    }

    @Test("the default lockdown takes the session's requests and answers the class properties")
    func defaultLockdown() {
        let saved = AssessmentSession.defaultManager
        defer { AssessmentSession.defaultManager = saved }
        let lockdown = InMemoryAssessmentManager()
        lockdown.protocolVersion = 1
        AssessmentSession.defaultManager = lockdown
        #expect(AssessmentSession.supportsMultipleParticipants == false)
        #expect(AssessmentSession.supportsConfigurationUpdates == true)
        lockdown.protocolVersion = 2
        #expect(AssessmentSession.supportsMultipleParticipants == true)

        let session = AssessmentSession(configuration: AssessmentConfiguration(allowedFeatures: [.spellCheck]))
        #expect(session.manager === lockdown)
        session.begin()
        lockdown.dispatch()
        #expect(session.state == .active)
        #expect(lockdown.requests == [.begin(AssessmentConfiguration(allowedFeatures: [.spellCheck]))])

        // A failed connection is kept as the reason, reported at begin.
        AssessmentSession.defaultManager = UnavailableAssessmentManager(error: AssessmentError(.connection, message: "gone"))
        #expect(AssessmentSession.supportsMultipleParticipants == false)
        #expect(AssessmentSession.supportsConfigurationUpdates == false)
        let orphan = AssessmentSession(configuration: AssessmentConfiguration())
        let recorder = DelegateRecorder()
        orphan.delegate = recorder
        orphan.begin()
        #expect(recorder.events == [.failed(AssessmentError(.connection, message: "gone"))])
    }
}
