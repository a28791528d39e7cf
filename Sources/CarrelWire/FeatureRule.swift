/// What the announced features mean for a configuration, the one rule the
/// compositor's Invigilator and AssessmentKit's in-memory lockdown both apply.
///
/// - The compositor announces, on bind, each feature it understands with who
///   enforces its denial; Carrel announces every feature, enforced as
///   `AssessmentFeature.enforcement` says.
/// - A configuration that leaves denied a feature that was not announced
///   cannot be enforced by anyone: begin and update with it fail with
///   `unsupported_configuration`.
/// - Allowing a feature that was not announced has no effect.
///
/// ```swift
/// let announced: [AssessmentFeature: AssessmentFeature.Enforcement] = [.spellCheck: .client]
/// FeatureRule.unenforceableDenials(allowed: [], announced: announced)   // every feature but spellCheck
/// FeatureRule.unenforceableDenials(allowed: Set(AssessmentFeature.allCases).subtracting([.spellCheck]),
///                                  announced: announced)                // []
/// ```
public enum FeatureRule {
    /// Every feature, enforced as `AssessmentFeature.enforcement` says: what Carrel announces.
    public static let standardAnnouncements: [AssessmentFeature: AssessmentFeature.Enforcement] =
        Dictionary(uniqueKeysWithValues: AssessmentFeature.allCases.map { ($0, $0.enforcement) })

    /// The features a configuration allowing `allowed` leaves denied that
    /// nobody announced, in protocol order; empty when it can be enforced.
    public static func unenforceableDenials(
        allowed: Set<AssessmentFeature>,
        announced: [AssessmentFeature: AssessmentFeature.Enforcement]
    ) -> [AssessmentFeature] {
        AssessmentFeature.allCases.filter { !allowed.contains($0) && announced[$0] == nil }
    }

    /// Why a configuration allowing `allowed` cannot be enforced, for the
    /// `unsupported_configuration` message, or `nil` if it can.
    public static func refusal(
        allowed: Set<AssessmentFeature>,
        announced: [AssessmentFeature: AssessmentFeature.Enforcement]
    ) -> String? {
        let unenforceable = unenforceableDenials(allowed: allowed, announced: announced)
        guard !unenforceable.isEmpty else { return nil }
        return "denied feature \(unenforceable.map(\.protocolName).joined(separator: ", ")) cannot be enforced by the compositor (not announced); allow it or use a compositor that announces it"
    }
}
