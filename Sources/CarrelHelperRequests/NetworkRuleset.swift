/// The nftables ruleset of the network provider, as text for `nft -f -`.
///
/// Only sockets of processes in the session's cgroups (v2) may talk: their
/// connections get a conntrack mark, and packets of marked connections pass
/// in both directions (so the replies of a local server the app connects to
/// pass too). Every other packet to or from a local socket is dropped: a new
/// connection of another process never completes (its SYN is dropped, so
/// `connect` times out), and an established one stops moving in either
/// direction. Neighbour discovery
/// (ICMPv6, which has no socket) keeps working, so the session's own IPv6
/// does; ARP is not in the inet family and is untouched.
public struct NetworkRuleset: Sendable, Equatable {
    /// The table, `inet <tableName>`: Carrel's own, deleted on revert.
    public var tableName: String
    /// Cgroup paths relative to the cgroup v2 root (`/sys/fs/cgroup`), e.g.
    /// `carrel-4711`; their processes and descendants may use the network.
    public var allowedCgroups: [String]
    /// The conntrack mark of the session's connections.
    public var mark: UInt32

    public static let defaultTableName = "carrel"
    public static let defaultMark: UInt32 = 0x6361_7272  // "carr"

    public init(tableName: String = NetworkRuleset.defaultTableName, allowedCgroups: [String],
                mark: UInt32 = NetworkRuleset.defaultMark) {
        self.tableName = tableName
        self.allowedCgroups = allowedCgroups
        self.mark = mark
    }

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case badTableName(String)
        case badCgroup(String)
        public var description: String {
            switch self {
            case .badTableName(let name): return "nftables table name \(name.debugDescription) must be letters, digits, '_' or '-'"
            case .badCgroup(let path): return "cgroup path \(path.debugDescription) must be relative to the cgroup root, without '..', quotes or spaces"
            }
        }
    }

    /// The level nftables' `socket cgroupv2 level N` needs for `path`: its
    /// depth below the root.
    public static func level(of path: String) -> Int {
        path.split(separator: "/").count
    }

    private static func validTableName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    private static func validCgroup(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard !parts.isEmpty, !path.hasPrefix("/") else { return false }
        return parts.allSatisfy { part in
            part != "." && part != ".." && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.@:".contains($0)) }
        }
    }

    /// The whole ruleset. The table is created empty first and flushed, so
    /// loading it again replaces an older one atomically (one transaction).
    public func text() throws(Problem) -> String {
        guard Self.validTableName(tableName) else { throw .badTableName(tableName) }
        for path in allowedCgroups where !Self.validCgroup(path) { throw .badCgroup(path) }
        let markText = "0x" + String(mark, radix: 16)
        var session: [String] = []
        for path in allowedCgroups {
            session.append("socket cgroupv2 level \(Self.level(of: path)) \"\(path)\" ct mark set \(markText) accept")
        }
        let neighbour = "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } accept"
        func chain(_ name: String, hook: String) -> [String] {
            ["    chain \(name) {",
             "        type filter hook \(hook) priority filter; policy accept;",
             "        ct mark \(markText) accept"]
                + session.map { "        " + $0 }
                + ["        " + neighbour,
                   "        counter drop",
                   "    }"]
        }
        let lines = ["table inet \(tableName)", "delete table inet \(tableName)",
                     "table inet \(tableName) {"]
            + chain("output", hook: "output") + chain("input", hook: "input") + ["}"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text for `nft -f -` that removes the table (fails if it is absent;
    /// callers check with `nft list table` first or ignore ENOENT).
    public var deletion: String { "delete table inet \(tableName)\n" }
}
