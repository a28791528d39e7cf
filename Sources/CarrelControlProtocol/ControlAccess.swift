/// Who may use the admin control socket, and how its file is laid out.
///
/// Two layers, both always on: the file system (the socket's directory and
/// the socket itself belong to root and the policy's group, or to the user
/// Carrel runs as), and a check of every connection's peer credentials
/// (SO_PEERCRED) against the same rule, so a socket made reachable by
/// mistake (a chmod, a bind mount) still refuses everyone else.
///
/// ```swift
/// let rule = ControlAccess(serverUID: 0, groupID: 27)          // root + group 27
/// rule.decide(PeerCredentials(pid: 9, uid: 1000, gid: 1000, groups: [27]))  // .allowed
/// ```
public struct ControlAccess: Sendable, Hashable {
    /// The effective uid Carrel runs as.
    public var serverUID: UInt32
    /// The policy's group, resolved; honoured when Carrel runs as root, or
    /// as a user of its own that is a member of it (`serverGroups`: then it
    /// can give the socket to the group, as the privilege-separated kiosk
    /// unit does with `SupplementaryGroups=carrel-admin`).
    public var groupID: UInt32?

    public init(serverUID: UInt32, groupID: UInt32?, serverGroups: [UInt32] = []) {
        self.serverUID = serverUID
        self.groupID = groupID.flatMap { serverUID == 0 || serverGroups.contains($0) ? $0 : nil }
    }

    /// Whether Carrel runs unprivileged: then its own user, root, and the
    /// group only if Carrel is a member of it may connect.
    public var isUnprivileged: Bool { serverUID != 0 }

    /// The owner, group and mode of the socket's directory (when Carrel
    /// creates it) and of the socket. Root with a group: 0750 / 0660
    /// root:GROUP (or Carrel's user:GROUP when it is a member); root alone:
    /// 0700 / 0600 root:root; unprivileged: 0700 / 0600 owned by Carrel's
    /// user (its own primary group: `nil`).
    public var layout: (directoryMode: UInt32, socketMode: UInt32, group: UInt32?) {
        if let groupID { return (0o750, 0o660, groupID) }
        return (0o700, 0o600, nil)
    }

    /// The peer-credential check for one connection.
    public func decide(_ peer: PeerCredentials) -> ControlAccessDecision {
        if peer.uid == 0 { return .allowed("root") }
        if peer.uid == serverUID { return .allowed("uid \(peer.uid), Carrel's own user") }
        if let groupID {
            if peer.gid == groupID { return .allowed("uid \(peer.uid) with primary group \(groupID)") }
            if peer.groups.contains(groupID) { return .allowed("uid \(peer.uid) in group \(groupID)") }
        }
        let who = "uid \(peer.uid) gid \(peer.gid) (pid \(peer.pid))"
        if let groupID {
            return .refused("\(who) is neither root nor in the control group \(groupID); ask an administrator to add the user to the group the policy names ([control] group)")
        }
        if isUnprivileged {
            return .refused("\(who) is not uid \(serverUID), the user Carrel runs as")
        }
        return .refused("\(who) is not root, and the policy names no control group ([control] group); run carrelctl as root")
    }

    /// The supplementary groups from the text of /proc/PID/status (its
    /// `Groups:` line); nil if the line is missing or malformed.
    public static func supplementaryGroups(fromProcStatus text: String) -> [UInt32]? {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where line.hasPrefix("Groups:") {
            var groups: [UInt32] = []
            for field in line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                guard let gid = UInt32(field) else { return nil }
                groups.append(gid)
            }
            return groups
        }
        return nil
    }
}

/// The credentials of a control connection's peer, as the kernel recorded
/// them at connect (SO_PEERCRED), with the supplementary groups read from
/// /proc (empty if unreadable: only fewer connections are allowed then).
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }
}

public enum ControlAccessDecision: Sendable, Hashable {
    /// Allowed, and why (for the log).
    case allowed(String)
    /// Refused, with the message the client and the log get.
    case refused(String)

    public var isAllowed: Bool {
        if case .allowed = self { return true }
        return false
    }
}
