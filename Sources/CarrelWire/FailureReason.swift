/// Why a session failed to begin (`failed`) or an update was not applied
/// (`update_failed`). Raw values are the entries of the protocol's
/// `carrel_assessment_session_v1.failure_reason` enum.
public enum FailureReason: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible, WireReason {
    /// Catch-all, and what clients of older versions receive for newer reasons.
    case other = 0
    /// Another session, of this client or another, is pending or active.
    case alreadyActive = 1
    /// The policy does not entitle the client's role to begin sessions.
    case notEntitled = 2
    /// A denied feature nobody can enforce, an unknown participant, or a time
    /// limit above the policy's maximum.
    case unsupportedConfiguration = 3
    /// The session's toplevel is not mapped when `begin` is handled.
    case surfaceNotReady = 4
    /// No frame showing only the session was presented on every enabled
    /// output within the bounded wait.
    case timeout = 5
    /// A restriction could not be applied, or stopped holding before `began`;
    /// everything applied was undone first.
    case restrictionFailed = 6
    /// The compositor met an internal error.
    case `internal` = 7
    /// `update_failed` only: an interrupted session can only be ended.
    case interrupted = 8
    /// Before `began`, an administrator stopped the session or the
    /// compositor began shutting down.
    case cancelled = 9
    /// The machine does not meet the administrator's preconditions for
    /// sessions (for example, it runs nested in another display server).
    /// Version 2; version-1 clients receive `other`.
    case preconditionsUnmet = 10
    /// A participant the configuration names could not be started: its
    /// command is missing or not executable, it exited at once, or it showed
    /// no window within the bounded wait. Nothing was left applied.
    /// Version 2; version-1 clients receive `other`.
    case participantUnavailable = 11

    /// The protocol version that introduced the reason.
    public var since: UInt32 {
        switch self {
        case .preconditionsUnmet, .participantUnavailable: return 2
        default: return 1
        }
    }

    public var protocolName: String {
        switch self {
        case .other: return "other"
        case .alreadyActive: return "already_active"
        case .notEntitled: return "not_entitled"
        case .unsupportedConfiguration: return "unsupported_configuration"
        case .surfaceNotReady: return "surface_not_ready"
        case .timeout: return "timeout"
        case .restrictionFailed: return "restriction_failed"
        case .internal: return "internal"
        case .interrupted: return "interrupted"
        case .cancelled: return "cancelled"
        case .preconditionsUnmet: return "preconditions_unmet"
        case .participantUnavailable: return "participant_unavailable"
        }
    }

    public var description: String { protocolName }
}
