/// The protocol as a whole: carrel-assessment-v1, whose three interfaces
/// share one version number.
public enum AssessmentProtocol {
    /// The highest interface version this build speaks: the compositor
    /// offers it, AssessmentKit binds it (or less, if the compositor offers less).
    ///
    /// Version 2 added `failure_reason.preconditions_unmet` and
    /// `failure_reason.participant_unavailable`. Version 3 added signed
    /// statements about a session (`request_attestation`, `attestation`,
    /// `attestation_failed`) and the configuration's
    /// `deny_participant_network` and `deny_owner_network`.
    public static let version: UInt32 = 3

    /// The first version with `request_attestation`.
    public static let attestationSince: UInt32 = 3

    public static let managerInterface = "carrel_assessment_manager_v1"
    public static let configurationInterface = "carrel_assessment_configuration_v1"
    public static let sessionInterface = "carrel_assessment_session_v1"

    /// Whether a compositor offering `version` can take a session with
    /// participants: from version 2, the first that can tell a client a
    /// participant could not be started (`participant_unavailable`); at
    /// version 1 such a failure would arrive as `other`.
    public static func supportsMultipleParticipants(version: UInt32) -> Bool { version >= 2 }

    /// Whether a compositor offering `version` lets a configuration take
    /// the network away from a participant or from the session's owner
    /// (`deny_participant_network`, `deny_owner_network`).
    public static func supportsNetworkDenial(version: UInt32) -> Bool { version >= 3 }

    /// Whether a compositor offering `version` can replace an active
    /// session's configuration: `update` exists from version 1.
    public static func supportsConfigurationUpdates(version: UInt32) -> Bool { version >= 1 }
}
