/// Participants in the terms of Apple's `AEAssessmentConfiguration`:
/// ``configurationsByApplication`` is ``AssessmentConfiguration/participants``
/// seen as applications, and ``setConfiguration(_:for:)`` and ``remove(_:)``
/// change that list. Each application is sent as `add_participant` with its
/// ``AssessmentApplication/policyName``, once, in the order first added.
///
/// ```swift
/// var configuration = AssessmentConfiguration()
/// let calculator = AssessmentApplication(policyName: "calculator")
/// configuration.setConfiguration(AssessmentParticipantConfiguration(), for: calculator)
/// configuration.participants            // ["calculator"]
/// configuration.remove(calculator)
/// configuration.participants            // []
/// ```
extension AssessmentConfiguration {
    /// Every participant the configuration names, with its configuration.
    public var configurationsByApplication: [AssessmentApplication: AssessmentParticipantConfiguration] {
        Dictionary(uniqueKeysWithValues: distinctParticipants.map {
            (AssessmentApplication(policyName: $0), participantConfigurations[$0] ?? AssessmentParticipantConfiguration())
        })
    }

    /// Names `application` as a participant (at the end, if it is not named
    /// yet) with `configuration`.
    public mutating func setConfiguration(_ configuration: AssessmentParticipantConfiguration,
                                          for application: AssessmentApplication) {
        if !participants.contains(application.policyName) { participants.append(application.policyName) }
        // The default is no configuration at all, so equal meanings compare equal.
        participantConfigurations[application.policyName] = configuration == AssessmentParticipantConfiguration() ? nil : configuration
    }

    /// Stops naming `application` as a participant.
    public mutating func remove(_ application: AssessmentApplication) {
        participants.removeAll { $0 == application.policyName }
        participantConfigurations[application.policyName] = nil
    }
}
