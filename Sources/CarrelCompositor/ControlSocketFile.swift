import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// The control socket's place in the file system: its directory (created
/// when missing, else checked), the socket file bound and listened on with
/// exactly the mode and group `ControlAccess` lays out, and its removal.
/// Serving what arrives on it is `ControlSocket`'s.
final class ControlSocketFile {
    let path: String
    /// The listening socket (non-blocking, close-on-exec); -1 once removed.
    private(set) var fd: Int32 = -1
    /// Device and inode of the socket file bound, so `remove` unlinks only ours.
    private var boundFile: (dev: UInt64, ino: UInt64)?
    private var createdDirectory: String?
    private let logger: Logger

    /// Who may connect: root and the policy's `[control] group` when Carrel
    /// runs as root or is a member of that group; only Carrel's own user
    /// (and root) otherwise (the group is then ignored, and the log says so).
    static func access(group: String?, logger: Logger) throws -> ControlAccess {
        let uid = geteuid()
        var count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
        count = getgroups(count, &groups)
        let own = Array(groups.prefix(Int(max(count, 0)))) + [getegid()]
        var groupID: UInt32?
        if let group {
            if let entry = getgrnam(group) {
                groupID = entry.pointee.gr_gid
            } else if uid == 0 {
                throw CompositorError.control("the control group \"\(group)\" does not exist; create it (groupadd \(group)) or remove [control] group from the policy")
            }
        }
        let access = ControlAccess(serverUID: uid, groupID: groupID, serverGroups: own)
        if let group, access.groupID == nil {
            logger.notice("control: not running as root nor as a member of the control group \"\(group)\", so it is ignored; only uid \(uid) may connect")
        }
        return access
    }

    /// Prepares the directory, removes a stale socket, binds and listens.
    /// Throws a `CompositorError.control` that says what was wrong and what to do.
    init(path: String, layout: (directoryMode: UInt32, socketMode: UInt32, group: UInt32?), logger: Logger) throws {
        self.path = path
        self.logger = logger
        guard path.hasPrefix("/") else {
            throw CompositorError.control("control socket path \(path) is not absolute; give a full path")
        }
        guard let address = UnixSocketAddress(path: path) else {
            throw CompositorError.control("control socket path \(path) is longer than \(UnixSocketAddress.maximumPathLength) bytes; choose a shorter one")
        }
        try prepareDirectory(mode: layout.directoryMode, group: layout.group)
        try removeStaleSocket()

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw CompositorError.control("socket(): \(SystemError.current)") }
        // No moment with a wider mode than the final one: the socket is
        // created with the umask's help, then set exactly.
        let previousMask = umask(0o777 & ~mode_t(layout.socketMode))
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        umask(previousMask)
        guard bound == 0 else {
            let message = SystemError.current
            Glibc.close(fd)
            throw CompositorError.control("cannot bind the control socket \(path): \(message)")
        }
        var info = stat()
        guard chmod(path, mode_t(layout.socketMode)) == 0,
              layout.group.map({ chown(path, geteuid(), $0) == 0 }) ?? true,
              lstat(path, &info) == 0,
              listen(fd, 16) == 0 else {
            let message = SystemError.current
            Glibc.close(fd)
            unlink(path)
            throw CompositorError.control("cannot set up the control socket \(path): \(message)")
        }
        boundFile = (UInt64(info.st_dev), UInt64(info.st_ino))
        self.fd = fd
        let owner = layout.group.map { "uid \(geteuid()):gid \($0)" } ?? "uid \(geteuid())"
        logger.notice("control socket \(path) (mode \(String(layout.socketMode, radix: 8)), \(owner))")
    }

    /// The socket's directory: created with `mode` if missing; an existing
    /// one must be a real directory owned by Carrel's user or root that no
    /// one else may write to (its mode is left alone).
    private func prepareDirectory(mode: UInt32, group: UInt32?) throws {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let name = directory.isEmpty ? "/" : directory
        var info = stat()
        if lstat(name, &info) != 0 {
            guard errno == ENOENT else {
                throw CompositorError.control("cannot inspect \(name): \(SystemError.current)")
            }
            guard mkdir(name, mode_t(mode)) == 0 else {
                throw CompositorError.control("cannot create the control socket's directory \(name): \(SystemError.current); run as root, create it, or pass --control-socket PATH")
            }
            createdDirectory = name
            guard chmod(name, mode_t(mode)) == 0, group.map({ chown(name, geteuid(), $0) == 0 }) ?? true else {
                throw CompositorError.control("cannot set the mode of \(name): \(SystemError.current)")
            }
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CompositorError.control("\(name) is not a directory (or is a symbolic link); the control socket needs a real directory")
        }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw CompositorError.control("\(name) belongs to uid \(info.st_uid); the control socket's directory must belong to root or to uid \(geteuid())")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw CompositorError.control("\(name) is writable by group or others (mode \(String(info.st_mode & 0o7777, radix: 8))); someone could replace the socket — use a directory only its owner can write")
        }
    }

    /// A socket file left by a Carrel that died is removed; one a running
    /// Carrel serves is not taken over.
    private func removeStaleSocket() throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw CompositorError.control("\(path) exists and is not a socket; remove it or choose another --control-socket path")
        }
        if Self.someoneListens(at: path) {
            throw CompositorError.control("another Carrel already serves the control socket \(path); stop it or choose another --control-socket path")
        }
        unlink(path)
        logger.notice("control: removed the stale socket \(path)")
    }

    private static func someoneListens(at path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        guard let address = UnixSocketAddress(path: path) else { return false }
        return address.withSockaddr { connect(fd, $0, $1) } == 0
    }

    /// Closes the listening socket and removes the socket file (if it is
    /// still the one bound) and a directory Carrel created.
    func remove() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        var info = stat()
        if let bound = boundFile, lstat(path, &info) == 0,
           UInt64(info.st_dev) == bound.dev, UInt64(info.st_ino) == bound.ino {
            unlink(path)
        }
        boundFile = nil
        if let directory = createdDirectory { rmdir(directory) }
        createdDirectory = nil
    }
}
