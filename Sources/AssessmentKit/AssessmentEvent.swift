/// One lifecycle event of an ``AssessmentSession``, as its ``AssessmentSession/events`` stream yields it.
///
/// A session yields exactly one of `.began` and `.failed` per `begin()`;
/// `.failed` and `.ended` are last. `.interrupted` is not last: restrictions
/// hold until the app ends the session, so hide the exam content at once,
/// save progress if you like, then call `end()`.
public enum AssessmentEvent: Hashable, Sendable {
    case began
    case failed(AssessmentError)
    case interrupted(AssessmentError)
    case ended
    /// The configuration now in force.
    case updated(AssessmentConfiguration)
    /// The configuration that was refused; the previous one still holds.
    case updateFailed(AssessmentConfiguration, AssessmentError)

    /// Whether no event follows this one.
    public var isTerminal: Bool {
        switch self {
        case .failed, .ended: return true
        default: return false
        }
    }

    /// An event without its payload, for counting and waiting.
    public enum Kind: Hashable, Sendable {
        case began, failed, interrupted, ended, updated, updateFailed
    }

    public var kind: Kind {
        switch self {
        case .began: return .began
        case .failed: return .failed
        case .interrupted: return .interrupted
        case .ended: return .ended
        case .updated: return .updated
        case .updateFailed: return .updateFailed
        }
    }
}
