/// Where one session is in its lifecycle.
///
/// ```
/// begin ─▶ restricting ─▶ [awaitingConfirmation] ─▶ awaitingPresentation ─▶ active ⇄ interrupted
///             │                   │                          │                 │          │
///             └──── failed ◀──────┴──────────────────────────┘                 └─ ended ◀─┘
/// ```
/// `awaitingConfirmation` only for an app-requested lock whose policy asks
/// the person at the machine to confirm it.
/// `restricting`, `awaitingConfirmation` and `awaitingPresentation` are *pending*; `active` and
/// `interrupted` have *begun*; `failed` and `ended` are *inert*.
public enum SessionPhase: Sendable, Hashable, CustomStringConvertible {
    /// `begin` accepted; the compositor is applying the restrictions.
    case restricting
    /// Restrictions hold; the on-screen prompt asks the person at the
    /// machine to confirm an app-requested lock, until `deadline`.
    case awaitingConfirmation(deadline: Instant)
    /// Restrictions hold; waiting for a frame showing only the session on
    /// every enabled output, until `deadline`.
    case awaitingPresentation(deadline: Instant)
    /// `began` sent; restrictions hold.
    case active
    /// `interrupted` sent (most recently for `reason`); restrictions still hold.
    case interrupted(InterruptionReason)
    /// `failed` sent: inert, nothing restricted.
    case failed(FailureReason)
    /// `ended` sent: inert, nothing restricted.
    case ended

    /// Pending or begun: the one session the lock is about.
    public var isLive: Bool { isPending || hasBegun }

    /// Waiting for `began` or `failed`.
    public var isPending: Bool {
        switch self {
        case .restricting, .awaitingConfirmation, .awaitingPresentation: return true
        default: return false
        }
    }

    /// `began` has been sent and neither `ended` nor destruction followed.
    public var hasBegun: Bool {
        switch self {
        case .active, .interrupted: return true
        default: return false
        }
    }

    /// After a terminal event: only `destroy` (and a second `end`) matter.
    public var isInert: Bool { !isLive }

    /// Whether the restrictions are confirmed to hold in this phase.
    /// `restricting` is pending but not yet confirmed.
    public var holdsRestrictions: Bool {
        switch self {
        case .awaitingConfirmation, .awaitingPresentation, .active, .interrupted: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .restricting: return "restricting"
        case .awaitingConfirmation: return "awaiting-confirmation"
        case .awaitingPresentation: return "awaiting-presentation"
        case .active: return "active"
        case .interrupted(let reason): return "interrupted(\(reason))"
        case .failed(let reason): return "failed(\(reason))"
        case .ended: return "ended"
        }
    }
}
