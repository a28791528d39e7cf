/// Which participants of a session keep the network while the network
/// provider holds: those the session names whose policy says
/// `network = true` and whose network the configuration does not deny,
/// each in a cgroup of its own so its sockets are told apart from Carrel's
/// and everyone else's. The rest have none: a configuration can take the
/// network away, never give more than the policy does.
public enum ParticipantNetwork {
    /// The participants of `set` that keep the network, in the session's order.
    public static func allowed(_ set: RestrictionSet, policy participants: [String: ParticipantPolicy]) -> [String] {
        set.participants.filter { participants[$0]?.network == true && !set.networkDeniedParticipants.contains($0) }
    }

    /// The cgroup (relative to the cgroup v2 root) participant `id` of the
    /// Carrel run `pid` is launched into when it keeps the network.
    public static func cgroupName(run pid: Int32, participant id: String) -> String {
        "carrel-\(pid)-participant-\(id)"
    }
}
