import CarrelHelperRequests
import Glibc

/// The helper's command line. Everything it may be asked about is fixed
/// here, by whoever starts it (the unit), never by the compositor: which
/// user may connect, which users programs run as, which cgroup subtree is
/// Carrel's, which nftables table is Carrel's.
struct HelperOptions {
    var socketPath = "/run/carrel-privileged/privileged.sock"
    var carrelUser = "carrel"
    var appUser = "exam"
    /// Participants run as this user; the app's when not given.
    var participantUser: String?
    /// The input method and the on-screen keyboard run as these users, each
    /// its own; without one, that role is not started through the helper.
    var inputMethodUser: String?
    var keyboardUser: String?
    /// Carrel's delegated cgroup subtree, relative to /sys/fs/cgroup.
    var cgroupSubtree = "system.slice/carrel-kiosk.service"
    var tableName = NetworkRuleset.defaultTableName
    var recoverOnly = false
    /// Where private homes are made: the socket's directory (root's,
    /// writable by nobody else; the listener checks it).
    var homesDirectory: String {
        socketPath.lastIndex(of: "/").map { String(socketPath[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
    }

    static let usage = """
        usage: carrel-privileged [--socket PATH] [--carrel-user NAME] [--app-user NAME] [--participant-user NAME]
                                 [--input-method-user NAME] [--keyboard-user NAME] [--cgroup-subtree PATH] [--table NAME]
               carrel-privileged --recover [--cgroup-subtree PATH] [--table NAME]
        Runs as root. Listens on PATH (default /run/carrel-privileged/privileged.sock, mode 0600, owned by the Carrel user;
        its directory must be root's and writable by nobody else)
        for one connection at a time from the Carrel user (default carrel); starts the app as --app-user
        (default exam), participants as --participant-user (default: the app user), the input method as
        --input-method-user and the on-screen keyboard as --keyboard-user (each a user of its own, with a fresh
        private home made beside the socket for each run; without one, that role is refused); session cgroups must be
        under --cgroup-subtree (default system.slice/carrel-kiosk.service, relative to /sys/fs/cgroup).
        When Carrel's connection closes, everything it asked for is undone at once.
        --recover: delete the nftables table inet NAME (default carrel) a crashed helper left, remove empty
        session cgroups under the subtree, and exit.
        """

    /// Parses `arguments` (without the program name); throws a message naming the bad one.
    init(arguments: [String]) throws(HelperError) {
        var rest = arguments[...]
        func value(_ flag: String) throws(HelperError) -> String {
            guard let next = rest.popFirst(), !next.hasPrefix("--") else {
                throw HelperError("\(flag) needs a value\n\(Self.usage)")
            }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--socket": socketPath = try value(argument)
            case "--carrel-user": carrelUser = try value(argument)
            case "--app-user": appUser = try value(argument)
            case "--participant-user": participantUser = try value(argument)
            case "--input-method-user": inputMethodUser = try value(argument)
            case "--keyboard-user": keyboardUser = try value(argument)
            case "--cgroup-subtree": cgroupSubtree = try value(argument)
            case "--table": tableName = try value(argument)
            case "--recover": recoverOnly = true
            case "--help", "-h": throw HelperError(Self.usage, status: 0)
            default: throw HelperError("unknown argument \(argument)\n\(Self.usage)")
            }
        }
        guard SessionCgroupName.isSubtree(cgroupSubtree) else {
            throw HelperError("--cgroup-subtree \(cgroupSubtree): give a path relative to /sys/fs/cgroup without '..', spaces or quotes, e.g. system.slice/carrel-kiosk.service")
        }
        guard (try? NetworkRuleset(tableName: tableName, allowedCgroups: []).text()) != nil else {
            throw HelperError("--table \(tableName): a table name is letters, digits, '_' or '-'")
        }
    }
}
