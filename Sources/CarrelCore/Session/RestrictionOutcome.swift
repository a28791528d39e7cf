/// How the compositor answers `.applyRestrictions`.
public enum RestrictionOutcome: Sendable, Hashable {
    case applied
    /// Nothing changed; `message` says which restriction could not be applied.
    case failed(String)
    /// Nothing changed: the machine does not meet the policy's preconditions
    /// (`message` lists every unmet one); the session fails with
    /// `preconditions_unmet` (`other` for a version-1 client).
    case unsupported(String)
    /// Nothing changed: a participant the configuration names could not be
    /// started (`message` names it and says why); the session fails, or the
    /// update is refused, with `participant_unavailable`.
    case participantUnavailable(String)
}
