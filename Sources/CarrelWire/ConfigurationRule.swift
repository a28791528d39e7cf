/// What a configuration may contain, the one rule table the compositor's
/// Invigilator and AssessmentKit's in-memory lockdown both apply to `begin`
/// and `update` (answered `unsupported_configuration` when it refuses):
///
/// | the configuration… | answer |
/// |---|---|
/// | names a participant the policy does not define | refused |
/// | asks for a time limit above the policy's maximum (eight hours unless the policy names one) | refused |
/// | leaves denied a feature nobody announced (``FeatureRule``) | refused |
/// | anything else | accepted |
///
/// Every problem is named in one message, in that order, so both sides
/// answer word for word alike.
///
/// ```swift
/// let terms = ConfigurationRule.Terms(knownParticipants: ["calculator"], maximumTimeLimit: 7200)
/// ConfigurationRule.refusal(participants: ["browser"], timeLimit: nil, allowedFeatures: [], terms: terms)
/// // "participant "browser" not in the policy (known: calculator)"
/// ```
public enum ConfigurationRule {
    /// Eight hours: the limit exam platforms put on a lock when nobody says otherwise.
    public static let fallbackMaximumTimeLimit: UInt32 = 8 * 60 * 60

    /// What the administrator's policy (or a test standing in for it) says
    /// a configuration may contain.
    public struct Terms: Hashable, Sendable {
        /// Participant ids the policy defines.
        public var knownParticipants: Set<String>
        /// The longest time limit, in seconds, a configuration may ask for.
        public var maximumTimeLimit: UInt32
        /// Features announced on bind, with who enforces each.
        public var announcedFeatures: [AssessmentFeature: AssessmentFeature.Enforcement]

        public init(knownParticipants: Set<String> = [],
                    maximumTimeLimit: UInt32 = ConfigurationRule.fallbackMaximumTimeLimit,
                    announcedFeatures: [AssessmentFeature: AssessmentFeature.Enforcement] = FeatureRule.standardAnnouncements) {
            self.knownParticipants = knownParticipants
            self.maximumTimeLimit = maximumTimeLimit
            self.announcedFeatures = announcedFeatures
        }
    }

    /// Why `terms` cannot honour a configuration naming `participants`,
    /// asking for `timeLimit` seconds (nil: the policy's default) and
    /// allowing `allowedFeatures`, or nil if they can.
    public static func refusal(participants: [String], timeLimit: UInt32?, allowedFeatures: Set<AssessmentFeature>,
                               terms: Terms) -> String? {
        var problems: [String] = []
        let unknown = participants.filter { !terms.knownParticipants.contains($0) }
        if !unknown.isEmpty {
            let known = terms.knownParticipants.sorted().joined(separator: ", ")
            problems.append("participant \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")) not in the policy (known: \(known.isEmpty ? "none" : known))")
        }
        if let limit = timeLimit, limit > terms.maximumTimeLimit {
            problems.append("time limit \(limit) s is above the policy's maximum of \(terms.maximumTimeLimit) s")
        }
        if let problem = FeatureRule.refusal(allowed: allowedFeatures, announced: terms.announcedFeatures) {
            problems.append(problem)
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}
