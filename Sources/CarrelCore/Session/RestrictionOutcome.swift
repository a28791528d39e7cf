/// How the compositor answers `.applyRestrictions`.
public enum RestrictionOutcome: Sendable, Hashable {
    case applied
    /// Nothing changed; `message` says which restriction could not be applied.
    case failed(String)
}
