import Glibc

/// A user programs run as (or the one allowed to connect), looked up once at start.
struct Account {
    let name: String
    let uid: uid_t
    let gid: gid_t
    let home: String

    init(_ name: String, for what: String) throws(HelperError) {
        guard let entry = getpwnam(name) else {
            throw HelperError("\(what) \(name): no such user; create it (useradd --system \(name)) or name another with the option")
        }
        guard entry.pointee.pw_uid != 0, entry.pointee.pw_gid != 0 else {
            throw HelperError("\(what) \(name) is root or in root's group; the point of the helper is that nothing it serves runs as root: name an unprivileged user")
        }
        self.name = name
        uid = entry.pointee.pw_uid
        gid = entry.pointee.pw_gid
        home = String(cString: entry.pointee.pw_dir)
    }
}
