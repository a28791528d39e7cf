/// Why an active session was interrupted. Raw values are the entries of the
/// protocol's `carrel_assessment_session_v1.interruption_reason` enum.
///
/// An interruption is not terminal: the restrictions stay until the exam app
/// ends or destroys the session, so the app can hide its content first.
public enum InterruptionReason: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible, WireReason {
    /// Catch-all, and what clients of older versions receive for newer reasons.
    case other = 0
    /// A restriction stopped holding.
    case integrity = 1
    /// An administrator interrupted the session.
    case administrative = 2
    /// The session's time limit passed.
    case timeLimit = 3
    /// The compositor is shutting down.
    case shutdown = 4

    /// The protocol version that introduced the reason.
    public var since: UInt32 { 1 }

    public var protocolName: String {
        switch self {
        case .other: return "other"
        case .integrity: return "integrity"
        case .administrative: return "administrative"
        case .timeLimit: return "time_limit"
        case .shutdown: return "shutdown"
        }
    }

    public var description: String { protocolName }
}
