/// A restriction outside the compositor (the firewall, media players): three
/// operations, each bounded in time by the provider itself.
///
/// `ProviderCoordinator` decides when each runs and what a failure means;
/// providers only do their one job and say, in one sentence, what went wrong.
public protocol RestrictionProvider: AnyObject {
    /// The name the policy and every message use (`network`, `media`).
    var name: String { get }
    /// What `revert(token:)` needs to undo this provider after a crash,
    /// recorded in the state file BEFORE `apply` runs (one line, no tabs).
    var recoveryToken: String { get }
    /// Puts the restriction up for `set`. On failure nothing of it holds.
    func apply(_ set: RestrictionSet) throws(ProviderError)
    /// Checks the restriction still holds (and may re-assert it, as the media
    /// provider pauses a player that started playing).
    func verify() throws(ProviderError)
    /// Takes the restriction down. Must be safe to call when it is not up.
    func revert() throws(ProviderError)
    /// The session's configuration was updated while the restriction holds:
    /// makes it fit `set` (as the network provider lets a participant the
    /// update adds through). On failure what held before still holds.
    func update(_ set: RestrictionSet) throws(ProviderError)
    /// The last `revert` started work that answers later (the network
    /// table's delete, run without waiting): until the compositor says it
    /// settled (`ProviderCoordinator.revertSettled`) the provider stays on
    /// record, so a crash meanwhile is recovered from.
    var revertInFlight: Bool { get }
}

extension RestrictionProvider {
    /// Most reverts are done when `revert` returns.
    public var revertInFlight: Bool { false }

    /// Most restrictions do not depend on the configuration: nothing to change.
    public func update(_ set: RestrictionSet) throws(ProviderError) {}
}

/// What a provider reports: one sentence saying what failed and what to do.
public struct ProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
