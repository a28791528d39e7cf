/// The state of one `carrel_assessment_configuration_v1` object while the
/// client fills it: each setter request maps to one method, and a client bug
/// (a setter used twice for the same value, a bad value) comes back as a
/// `ConfigurationError` for the compositor to raise as a protocol error.
///
/// ```swift
/// var draft = ConfigurationDraft()
/// try draft.allowFeature(wireValue: 3)       // input_method
/// try draft.setTimeLimit(seconds: 3600)
/// try draft.setTimeLimit(seconds: 60)        // throws .timeLimitAlreadySet
/// let copy = draft.configuration             // what begin/update receive
/// ```
public struct ConfigurationDraft: Sendable, Equatable {
    /// What the client has set so far.
    public private(set) var configuration: AssessmentConfiguration

    public init() { configuration = .mostRestrictive }

    /// `allow_feature`: the same feature twice is `already_set`.
    public mutating func allowFeature(_ feature: AssessmentFeature) throws(ConfigurationError) {
        guard !configuration.allowedFeatures.contains(feature) else {
            throw .featureAlreadyAllowed(feature)
        }
        configuration.allowedFeatures.insert(feature)
    }

    /// `allow_feature` with the raw value from the wire; values outside the
    /// enum are `invalid_feature`.
    public mutating func allowFeature(wireValue: UInt32) throws(ConfigurationError) {
        guard let feature = AssessmentFeature(rawValue: wireValue) else {
            throw .invalidFeature(wireValue)
        }
        try allowFeature(feature)
    }

    /// `add_participant`: the same id twice is `already_set`; different ids
    /// accumulate. Whether the policy knows the id is decided when the
    /// configuration is used, since that is a runtime refusal, not a bug.
    public mutating func addParticipant(_ id: String) throws(ConfigurationError) {
        guard !configuration.participants.contains(id) else {
            throw .participantAlreadyAdded(id)
        }
        configuration.participants.append(id)
    }

    /// `deny_participant_network`: the same id twice is `already_set`.
    public mutating func denyParticipantNetwork(_ id: String) throws(ConfigurationError) {
        guard !configuration.networkDeniedParticipants.contains(id) else {
            throw .participantNetworkAlreadyDenied(id)
        }
        configuration.networkDeniedParticipants.insert(id)
    }

    /// `deny_owner_network`: twice is `already_set`.
    public mutating func denyOwnerNetwork() throws(ConfigurationError) {
        guard !configuration.ownerNetworkDenied else { throw .ownerNetworkAlreadyDenied }
        configuration.ownerNetworkDenied = true
    }

    /// `set_time_limit`: twice is `already_set`, zero is `invalid_time_limit`.
    /// A limit above the policy's maximum is a runtime refusal, decided when
    /// the configuration is used.
    public mutating func setTimeLimit(seconds: UInt32) throws(ConfigurationError) {
        if let previous = configuration.timeLimit { throw .timeLimitAlreadySet(previous: previous) }
        guard seconds > 0 else { throw .invalidTimeLimit }
        configuration.timeLimit = seconds
    }
}

/// A client bug in filling a configuration; raised as a protocol error on
/// the configuration object (`carrel_assessment_configuration_v1.error`).
public enum ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    case featureAlreadyAllowed(AssessmentFeature)
    case participantAlreadyAdded(String)
    case timeLimitAlreadySet(previous: UInt32)
    case participantNetworkAlreadyDenied(String)
    case ownerNetworkAlreadyDenied
    case invalidFeature(UInt32)
    case invalidTimeLimit

    /// The protocol error code to post.
    public var code: UInt32 {
        switch self {
        case .featureAlreadyAllowed, .participantAlreadyAdded, .timeLimitAlreadySet,
             .participantNetworkAlreadyDenied, .ownerNetworkAlreadyDenied: return 0 // already_set
        case .invalidFeature: return 1
        case .invalidTimeLimit: return 2
        }
    }

    /// The message to post with the error: what happened and what to do.
    public var description: String {
        switch self {
        case .featureAlreadyAllowed(let feature):
            return "allow_feature(\(feature.protocolName)) was sent twice on one configuration; allow each feature once"
        case .participantAlreadyAdded(let id):
            return "add_participant(\"\(id)\") was sent twice on one configuration; add each participant once"
        case .participantNetworkAlreadyDenied(let id):
            return "deny_participant_network(\"\(id)\") was sent twice on one configuration; deny each participant's network once"
        case .ownerNetworkAlreadyDenied:
            return "deny_owner_network was sent twice on one configuration; send it once"
        case .timeLimitAlreadySet(let previous):
            return "set_time_limit was sent twice on one configuration (already \(previous) s); set it once, or create a new configuration"
        case .invalidFeature(let value):
            return "allow_feature(\(value)): not an entry of carrel_assessment_manager_v1.feature (0...\(AssessmentFeature.allCases.count - 1))"
        case .invalidTimeLimit:
            return "set_time_limit(0): the time limit must be at least 1 second; omit the request for the policy's default"
        }
    }
}
