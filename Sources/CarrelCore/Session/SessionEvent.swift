/// An event the compositor sends on a `carrel_assessment_session_v1`.
public enum SessionEvent: Sendable, Hashable, CustomStringConvertible {
    case began
    case failed(FailureReason, message: String)
    case interrupted(InterruptionReason, message: String)
    case ended
    case updated
    case updateFailed(FailureReason, message: String)

    /// `failed` and `ended` are terminal: no event follows on that session.
    public var isTerminal: Bool {
        switch self {
        case .failed, .ended: return true
        default: return false
        }
    }

    /// `began` and `failed` answer `begin`; exactly one of them does.
    public var answersBegin: Bool {
        switch self {
        case .began, .failed: return true
        default: return false
        }
    }

    /// The event's name in the protocol (and the audit log), its reason's
    /// name and its message, if it has them.
    public var parts: (name: String, reason: String?, message: String?) {
        switch self {
        case .began: return ("began", nil, nil)
        case .failed(let reason, let message): return ("failed", reason.protocolName, message)
        case .interrupted(let reason, let message): return ("interrupted", reason.protocolName, message)
        case .ended: return ("ended", nil, nil)
        case .updated: return ("updated", nil, nil)
        case .updateFailed(let reason, let message): return ("update_failed", reason.protocolName, message)
        }
    }

    public var description: String {
        switch self {
        case .began: return "began"
        case .failed(let reason, let message): return "failed(\(reason), \"\(message)\")"
        case .interrupted(let reason, let message): return "interrupted(\(reason), \"\(message)\")"
        case .ended: return "ended"
        case .updated: return "updated"
        case .updateFailed(let reason, let message): return "update_failed(\(reason), \"\(message)\")"
        }
    }
}
