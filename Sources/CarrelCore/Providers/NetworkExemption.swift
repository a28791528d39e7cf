/// Whose sockets keep the network while the network provider holds: the
/// session owner's, and nobody else's (participants aside, see
/// `ParticipantNetwork`). A configuration that denies the owner's network
/// (`deny_owner_network`) keeps it too: the cgroup is still made, so an
/// update can give the network back, but the ruleset leaves it out
/// (`keepsNetwork`).
///
/// A session of the launched app exempts the app's cgroup (the app and every
/// process it starts, born there). An app-requested lock by another client
/// exempts only that client's process: the launched app, hidden during the
/// lock, loses its network like everyone else.
public enum NetworkExemption: Sendable, Equatable {
    /// The cgroup the launched app was started in.
    case launchedApp
    /// Only the owning client's process (moved into a cgroup of its own for
    /// the session, so sockets it opens from then on are told apart).
    case ownerProcess(pid: Int32)

    /// The exemption for `set`; `ownerProcess` is the owner's pid as the
    /// compositor learnt it from its connection (nil or not positive:
    /// unknown). Throws when the owner is not the app and its process is
    /// unknown: nobody could be exempted on its behalf (fail closed).
    public static func of(_ set: RestrictionSet, ownerProcess: Int32?) throws(ProviderError) -> NetworkExemption {
        if set.ownerRole == .app { return .launchedApp }
        guard let pid = ownerProcess, pid > 0 else {
            throw ProviderError("the process of the \(set.ownerRole) client that owns \(set.session) is unknown, "
                                + "so its network cannot be kept; it must connect over a local socket Carrel can read credentials from")
        }
        return .ownerProcess(pid: pid)
    }

    /// Whether the owner's cgroup is let through under `set`.
    public static func keepsNetwork(_ set: RestrictionSet) -> Bool { !set.ownerNetworkDenied }
}
