import Glibc

/// The account the input method runs as when Carrel runs as root: `nobody`.
/// It reads every key and needs no privilege, and mozc's server will not
/// even start as root. Nil when Carrel is not root: it then runs as
/// Carrel's own user.
struct HelperUser {
    let uid: uid_t
    let gid: gid_t

    static func whenRoot() -> HelperUser? {
        guard geteuid() == 0, let entry = getpwnam("nobody") else { return nil }
        return HelperUser(uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// `command` run as this user, with no supplementary groups (util-linux's
    /// `setpriv`).
    func wrap(_ command: [String]) -> [String] {
        [AppUser.setpriv, "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"] + command
    }
}
