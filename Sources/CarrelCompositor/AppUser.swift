import CarrelSystem
import Glibc

/// The user the app runs as when Carrel runs as root (`--app-user`): the
/// compositor keeps what only root may do (nftables, cgroups, the control
/// socket's group, the seat), and the exam app, which the restrictions are
/// about, gets none of it. It is started through util-linux's `setpriv`
/// with that user's uid, gid and groups, no capabilities and
/// no_new_privs, and reaches Carrel through the app socket, whose private
/// directory belongs to it.
struct AppUser {
    let name: String
    let uid: uid_t
    let gid: gid_t
    let home: String

    /// Where `setpriv` is; Debian's util-linux puts it there.
    static let setpriv = "/usr/bin/setpriv"

    /// Looks `name` up; throws a message saying what to do when it cannot be used.
    init(name: String) throws {
        guard geteuid() == 0 else {
            throw CompositorError.configuration("--app-user \(name): Carrel is not running as root, so it cannot start the app as another user; run Carrel as root (dist/carrel-kiosk.service does) or leave out --app-user")
        }
        guard let entry = getpwnam(name) else {
            throw CompositorError.configuration("--app-user \(name): no such user; create it (useradd -m \(name)) or name an existing one")
        }
        guard entry.pointee.pw_uid != 0 else {
            throw CompositorError.configuration("--app-user \(name): that is root; name the unprivileged user the exam app should run as")
        }
        guard access(Self.setpriv, X_OK) == 0 else {
            throw CompositorError.configuration("--app-user \(name): \(Self.setpriv) is missing (\(SystemError.current)); install util-linux")
        }
        self.name = name
        uid = entry.pointee.pw_uid
        gid = entry.pointee.pw_gid
        home = String(cString: entry.pointee.pw_dir)
    }

    /// `command` run as this user.
    func wrap(_ command: [String]) -> [String] {
        [Self.setpriv, "--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "--inh-caps=-all",
         "--bounding-set=-all", "--no-new-privs", "--"] + command
    }

    /// The app's environment on top of Carrel's: its own identity, its
    /// runtime directory the app socket's (which it owns), and no session
    /// bus of root's, which it could not use anyway.
    func environment(runtimeDirectory: String) -> [String: String?] {
        ["HOME": home, "USER": name, "LOGNAME": name, "XDG_RUNTIME_DIR": runtimeDirectory,
         "DBUS_SESSION_BUS_ADDRESS": nil]
    }
}
