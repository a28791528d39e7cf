/// The protocol as a whole: carrel-assessment-v1, whose three interfaces
/// share one version number.
public enum AssessmentProtocol {
    /// The highest interface version this build speaks: the compositor
    /// offers it, AssessmentKit binds it (or less, if the compositor offers less).
    ///
    /// Version 2 added `failure_reason.preconditions_unmet` and
    /// `failure_reason.participant_unavailable`. Version 3 added signed
    /// statements about a session (`request_attestation`, `attestation`,
    /// `attestation_failed`).
    public static let version: UInt32 = 3

    /// The first version with `request_attestation`.
    public static let attestationSince: UInt32 = 3

    public static let managerInterface = "carrel_assessment_manager_v1"
    public static let configurationInterface = "carrel_assessment_configuration_v1"
    public static let sessionInterface = "carrel_assessment_session_v1"
}
