/// What an assessment session allows: a value copied from the client's
/// `carrel_assessment_configuration_v1` object when `begin` or `update`
/// uses it, so later changes to that object never reach a session.
///
/// Most restrictive by default: no feature allowed, no participant, and the
/// policy's default time limit.
///
/// ```swift
/// var exam = AssessmentConfiguration()
/// exam.allowedFeatures.insert(.inputMethod)   // a Japanese-language exam
/// exam.timeLimit = 90 * 60
/// exam.allows(.spellCheck)                    // false
/// ```
public struct AssessmentConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Features the session allows; every other feature is denied.
    public var allowedFeatures: Set<AssessmentFeature>
    /// Participant ids from the administrator's policy, in the order added.
    public var participants: [String]
    /// Seconds the session may stay active after `began`; `nil` means the
    /// policy's default.
    public var timeLimit: UInt32?
    /// Participants kept off the network during the session even where the
    /// policy gives them the network (`deny_participant_network`).
    public var networkDeniedParticipants: Set<String>
    /// Whether the session's owner is kept off the network too
    /// (`deny_owner_network`); otherwise it keeps the network the policy's
    /// network restriction takes from everyone else.
    public var ownerNetworkDenied: Bool

    public init(allowedFeatures: Set<AssessmentFeature> = [], participants: [String] = [], timeLimit: UInt32? = nil,
                networkDeniedParticipants: Set<String> = [], ownerNetworkDenied: Bool = false) {
        self.allowedFeatures = allowedFeatures
        self.participants = participants
        self.timeLimit = timeLimit
        self.networkDeniedParticipants = networkDeniedParticipants
        self.ownerNetworkDenied = ownerNetworkDenied
    }

    /// The configuration a `begin` with a null configuration gets.
    public static let mostRestrictive = AssessmentConfiguration()

    public func allows(_ feature: AssessmentFeature) -> Bool { allowedFeatures.contains(feature) }

    /// Features the session denies.
    public var deniedFeatures: Set<AssessmentFeature> {
        Set(AssessmentFeature.allCases).subtracting(allowedFeatures)
    }

    public var description: String {
        let features = allowedFeatures.sorted().map(\.protocolName).joined(separator: ",")
        let limit = timeLimit.map { "\($0)s" } ?? "default"
        var text = "allow=[\(features)] participants=[\(participants.joined(separator: ","))] time_limit=\(limit)"
        let denied = networkDeniedParticipants.sorted() + (ownerNetworkDenied ? ["owner"] : [])
        if !denied.isEmpty { text += " network_denied=[\(denied.joined(separator: ","))]" }
        return text
    }
}
