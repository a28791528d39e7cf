/// Why a request for a signed statement was not answered with one. Raw
/// values are the entries of the protocol's
/// `carrel_assessment_session_v1.attestation_failure_reason` enum (version 3).
public enum AttestationFailureReason: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible, WireReason {
    /// Catch-all, and what clients receive for reasons newer than they bound.
    case other = 0
    /// No attestation key is configured, or it could not be read at start.
    case unavailable = 1
    /// The nonce is shorter or longer than the protocol's bounds.
    case invalidNonce = 2
    /// The session has not begun, or is ending.
    case notActive = 3
    /// The statement would not fit in one Wayland event.
    case tooLarge = 4

    /// Every entry arrived with version 3, the version that added the request.
    public var since: UInt32 { 3 }

    public var protocolName: String {
        switch self {
        case .other: return "other"
        case .unavailable: return "unavailable"
        case .invalidNonce: return "invalid_nonce"
        case .notActive: return "not_active"
        case .tooLarge: return "too_large"
        }
    }

    public var description: String { protocolName }
}
