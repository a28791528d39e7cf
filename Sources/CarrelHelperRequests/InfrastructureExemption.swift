/// The seat's own services that keep the network while a session holds it:
/// the fleet's way in (sshd, node-exporter, journal upload) and what keeps
/// the machine on the network at all (the DHCP client, the DNS resolver,
/// time sync). The policy names them as systemd units
/// (`providers.network_exempt_units`); each running one is its cgroup
/// `system.slice/UNIT`, whose sockets (and those of every process the unit
/// starts, born there) the ruleset lets through like the app's. An accepted
/// connection belongs to the listening socket's cgroup, so sshd's sessions
/// pass even when PAM moves the login's processes elsewhere.
public enum InfrastructureExemption {
    public static let slice = "system.slice"

    /// Whether `pattern` is a unit name the policy may list: a service,
    /// socket or scope name (`ssh.service`, `ifup@*.service`), where `*`
    /// stands for any run of characters.
    public static func isUnitPattern(_ pattern: String) -> Bool {
        guard pattern.utf8.count <= 255, [".service", ".socket", ".scope"].contains(where: { pattern.hasSuffix($0) }),
              let first = pattern.first, first != "." else { return false }
        return pattern.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.@:\\*".contains($0)) }
    }

    /// Whether `name` matches `pattern` (`*`: any run of characters, none included).
    public static func matches(_ name: String, pattern: String) -> Bool {
        let parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 else { return name == pattern }
        var rest = Substring(name)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for middle in parts.dropFirst().dropLast() where !middle.isEmpty {
            guard let found = rest.firstRange(of: middle) else { return false }
            rest = rest[found.upperBound...]
        }
        let last = parts[parts.count - 1]
        return rest.count >= last.count && rest.hasSuffix(last)
    }

    /// The cgroups to let through: each unit running now (`present`, the
    /// names in `/sys/fs/cgroup/system.slice`) that a pattern of `units`
    /// matches, as `system.slice/NAME`, sorted. A listed unit that is not
    /// running has no cgroup (nftables refuses a path that does not exist):
    /// it is let through from the verify after it starts.
    public static func cgroups(units: [String], present: [String]) -> [String] {
        let patterns = units.filter(isUnitPattern)
        return present.filter { name in isUnitPattern(name) && !name.contains("*") && patterns.contains { matches(name, pattern: $0) } }
            .sorted().map { "\(slice)/\($0)" }
    }

    /// Whether the privileged helper may let `path` through: `system.slice/UNIT`
    /// for one unit, never Carrel's own `subtree` nor anything inside it.
    public static func isInfrastructureCgroup(_ path: String, subtree: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == slice, isUnitPattern(String(parts[1])), !parts[1].contains("*") else { return false }
        return !(subtree == path || subtree.hasPrefix(path + "/"))
    }
}
