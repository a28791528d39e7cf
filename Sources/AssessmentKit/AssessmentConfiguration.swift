/// What an assessment session allows. Most restrictive by default: no
/// feature allowed, no participant, and the compositor policy's default time
/// limit (eight hours when the policy names none).
///
/// ```swift
/// var configuration = AssessmentConfiguration()
/// configuration.allowedFeatures = [.spellCheck, .screenReader]
/// configuration.timeLimit = .seconds(90 * 60)
/// ```
///
/// The same in the terms of Apple's `AEAssessmentConfiguration` (see
/// ``allowsSpellCheck`` and its neighbours; each reads and writes one feature):
///
/// ```swift
/// var configuration = AssessmentConfiguration()
/// configuration.allowsSpellCheck = true
/// configuration.allowsAccessibilitySpeech = true
/// ```
///
/// A value type: a session keeps a copy, and the compositor copies what it
/// is sent, so changing a configuration later never changes a running session
/// (use ``AssessmentSession/update(to:)`` for that).
public struct AssessmentConfiguration: Hashable, Sendable {
    /// Features allowed during the session; every other feature is denied.
    public var allowedFeatures: Set<AssessmentFeature>
    /// Other applications whose windows the session shows, by the ids the
    /// administrator's policy gives them (never an app_id). Repeats are sent once.
    public var participants: [String] {
        // An id no longer named keeps no configuration, so equal lists compare equal.
        didSet { participantConfigurations = participantConfigurations.filter { participants.contains($0.key) } }
    }
    /// How long the session may stay active, counted from began; nil leaves it
    /// to the policy. Sent in whole seconds, rounded up; must be at least one second.
    public var timeLimit: Duration?
    /// The exam app's own participant configuration, Apple's main participant
    /// (see ``AssessmentParticipantConfiguration`` for what its network means here).
    public var mainParticipantConfiguration: AssessmentParticipantConfiguration
    /// Each participant's configuration by policy id; ids named in
    /// ``participants`` without one here have the default.
    var participantConfigurations: [String: AssessmentParticipantConfiguration]

    public init(allowedFeatures: Set<AssessmentFeature> = [], participants: [String] = [],
                timeLimit: Duration? = nil,
                mainParticipantConfiguration: AssessmentParticipantConfiguration = AssessmentParticipantConfiguration()) {
        self.allowedFeatures = allowedFeatures
        self.participants = participants
        self.timeLimit = timeLimit
        self.mainParticipantConfiguration = mainParticipantConfiguration
        self.participantConfigurations = [:]
    }

    /// The participants in order, each once: the protocol forbids adding an id twice.
    var distinctParticipants: [String] {
        var seen: Set<String> = []
        return participants.filter { seen.insert($0).inserted }
    }

    /// Participants whose configuration keeps them off the network, in order.
    var networkDeniedParticipants: [String] {
        distinctParticipants.filter { !(participantConfigurations[$0]?.allowsNetworkAccess ?? true) }
    }

    /// Whether the configuration takes network away from anyone (which needs
    /// protocol version 3).
    var deniesNetwork: Bool { !mainParticipantConfiguration.allowsNetworkAccess || !networkDeniedParticipants.isEmpty }

    /// The time limit as the protocol's whole seconds (rounded up, at most
    /// UInt32.max, which any policy refuses), or nil for the policy default.
    /// Throws for a limit under one tick, which the protocol cannot express.
    func wireTimeLimit() throws -> UInt32? {
        guard let timeLimit else { return nil }
        let (seconds, attoseconds) = timeLimit.components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else {
            throw AssessmentError(
                .unsupportedConfiguration,
                message: "time limit \(timeLimit) is not positive; give at least one second, or nil for the policy's default")
        }
        let rounded = attoseconds > 0 ? seconds + 1 : seconds
        return UInt32(clamping: rounded)
    }

    /// Checks what the client can check before sending; the compositor checks the rest.
    func validate() throws {
        _ = try wireTimeLimit()
    }
}
