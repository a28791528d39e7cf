import CarrelCore
import CarrelShim
import Glibc
import Logging

/// The admin control socket `carrelctl` talks to: a Unix stream socket (not
/// Wayland) carrying one JSON request per line, each answered by one JSON
/// line (`ControlRequest`, `ControlResponse`; the decisions are Core's).
///
/// Access has two layers (`ControlAccess`): the file system — the socket's
/// directory (when Carrel creates it) and the socket belong to root and the
/// policy's group, or to Carrel's user when it runs unprivileged — and a
/// peer-credential check (SO_PEERCRED, supplementary groups from /proc) on
/// every connection. A refused peer gets a `permission_denied` line and is
/// disconnected; the log says who.
///
/// Served from the Wayland event loop: every socket is non-blocking, lines
/// and pending output are bounded, connections are capped in number and
/// closed when idle, so a slow or hostile client never blocks the compositor.
final class ControlSocket {
    typealias Handler = (ControlRequest) -> ControlResponse

    /// Connections served at once; more are refused with `busy`.
    static let maximumConnections = 8
    /// A connection that sends no complete request for this long is closed.
    static let idleMilliseconds: Int32 = 10_000
    /// Output a client does not read beyond this closes its connection.
    static let maximumPendingOutput = 256 * 1024

    let path: String
    let access: ControlAccess
    private let loop: OpaquePointer
    private let logger: Logger
    private let handle: Handler
    /// Told of every answered request (the audit log's admin records).
    var answered: ((_ peer: String, _ pid: Int32, ControlRequest, ControlResponse) -> Void)?
    private var listenFD: Int32 = -1
    private var acceptSource: OpaquePointer?
    private var connections: [Int32: Connection] = [:]
    /// Device and inode of the socket file bound, so `close` unlinks only ours.
    private var boundFile: (dev: UInt64, ino: UInt64)?
    private var createdDirectory: String?
    private var resumeTimer: OpaquePointer?

    /// Creates the directory if needed, binds and listens. Throws a
    /// `CompositorError.control` that says what was wrong and what to do.
    init(path: String, group: String?, display: OpaquePointer, logger: Logger, handle: @escaping Handler) throws {
        self.path = path
        self.logger = logger
        self.handle = handle
        loop = wl_display_get_event_loop(display)
        let uid = geteuid()
        var groupID: UInt32?
        if let group {
            if uid == 0 {
                guard let entry = getgrnam(group) else {
                    throw CompositorError.control("the control group \"\(group)\" does not exist; create it (groupadd \(group)) or remove [control] group from the policy")
                }
                groupID = entry.pointee.gr_gid
            } else {
                logger.notice("control: not running as root, so the control group \"\(group)\" is ignored; only uid \(uid) may connect")
            }
        }
        access = ControlAccess(serverUID: uid, groupID: groupID)
        try open()
    }

    private func open() throws {
        guard path.hasPrefix("/") else {
            throw CompositorError.control("control socket path \(path) is not absolute; give a full path")
        }
        guard let address = UnixSocketAddress(path: path) else {
            throw CompositorError.control("control socket path \(path) is longer than \(UnixSocketAddress.maximumPathLength) bytes; choose a shorter one")
        }
        let layout = access.layout
        try prepareDirectory(mode: layout.directoryMode, group: layout.group)
        try removeStaleSocket()

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw CompositorError.control("socket(): \(Self.errorText())") }
        // No moment with a wider mode than the final one: the socket is
        // created with the umask's help, then set exactly.
        let previousMask = umask(0o777 & ~mode_t(layout.socketMode))
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        umask(previousMask)
        guard bound == 0 else {
            let message = Self.errorText()
            Glibc.close(fd)
            throw CompositorError.control("cannot bind the control socket \(path): \(message)")
        }
        var info = stat()
        guard chmod(path, mode_t(layout.socketMode)) == 0,
              layout.group.map({ chown(path, geteuid(), $0) == 0 }) ?? true,
              lstat(path, &info) == 0,
              listen(fd, 16) == 0 else {
            let message = Self.errorText()
            Glibc.close(fd)
            unlink(path)
            throw CompositorError.control("cannot set up the control socket \(path): \(message)")
        }
        boundFile = (UInt64(info.st_dev), UInt64(info.st_ino))
        listenFD = fd
        acceptSource = wl_event_loop_add_fd(loop, fd, UInt32(WL_EVENT_READABLE), { fd, _, data in
            Unmanaged<ControlSocket>.fromOpaque(data!).takeUnretainedValue().acceptConnections()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        let owner = layout.group.map { "root:gid \($0)" } ?? "uid \(geteuid())"
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
                throw CompositorError.control("cannot inspect \(name): \(Self.errorText())")
            }
            guard mkdir(name, mode_t(mode)) == 0 else {
                throw CompositorError.control("cannot create the control socket's directory \(name): \(Self.errorText()); run as root, create it, or pass --control-socket PATH")
            }
            createdDirectory = name
            guard chmod(name, mode_t(mode)) == 0, group.map({ chown(name, geteuid(), $0) == 0 }) ?? true else {
                throw CompositorError.control("cannot set the mode of \(name): \(Self.errorText())")
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

    // MARK: - Connections

    private func acceptConnections() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EMFILE || errno == ENFILE { pauseAccepting() }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            guard let peer = Self.peerCredentials(fd) else {
                logger.warning("control: refused a connection whose credentials could not be read: \(Self.errorText())")
                refuse(fd, ControlFailure(.permissionDenied, "Carrel could not read this connection's credentials"))
                continue
            }
            switch access.decide(peer) {
            case .refused(let message):
                logger.warning("control: refused a connection: \(message)")
                refuse(fd, ControlFailure(.permissionDenied, message))
            case .allowed(let why):
                guard connections.count < Self.maximumConnections else {
                    logger.warning("control: refused a connection from pid \(peer.pid): \(Self.maximumConnections) already open")
                    refuse(fd, ControlFailure(.busy, "\(Self.maximumConnections) control connections are already open; try again"))
                    continue
                }
                logger.info("control: connection from pid \(peer.pid) (\(why))")
                add(Connection(fd: fd, peer: "pid \(peer.pid) uid \(peer.uid)", pid: Int32(peer.pid)))
            }
        }
    }

    /// Out of file descriptors: the pending connection would wake the
    /// (level-triggered) loop again at once, so accepting pauses for a second.
    private func pauseAccepting() {
        guard let source = acceptSource, resumeTimer == nil else { return }
        logger.error("control: out of file descriptors; not accepting control connections for 1 s")
        wl_event_source_fd_update(source, 0)
        resumeTimer = wl_event_loop_add_timer(loop, { data in
            let socket = Unmanaged<ControlSocket>.fromOpaque(data!).takeUnretainedValue()
            if let timer = socket.resumeTimer { wl_event_source_remove(timer) }
            socket.resumeTimer = nil
            if let source = socket.acceptSource { wl_event_source_fd_update(source, UInt32(WL_EVENT_READABLE)) }
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        if let timer = resumeTimer { wl_event_source_timer_update(timer, 1000) }
    }

    /// SO_PEERCRED (pid, uid, gid as the kernel recorded them at connect)
    /// plus the supplementary groups from /proc/PID/status.
    private static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }, which Glibc's
        // Swift module does not import.
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) == 0, length == 12 else { return nil }
        let groups = readSmallFile("/proc/\(raw.0)/status").flatMap(ControlAccess.supplementaryGroups(fromProcStatus:)) ?? []
        return PeerCredentials(pid: raw.0, uid: raw.1, gid: raw.2, groups: groups)
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Best effort: one line saying why, then the connection closes.
    private func refuse(_ fd: Int32, _ failure: ControlFailure) {
        let line = Array((ControlResponse.failure(failure).line + "\n").utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(fd)
    }

    private func add(_ connection: Connection) {
        connections[connection.fd] = connection
        let context = Unmanaged.passUnretained(connection).toOpaque()
        connection.owner = self
        connection.source = wl_event_loop_add_fd(loop, connection.fd, UInt32(WL_EVENT_READABLE), { _, mask, data in
            let connection = Unmanaged<Connection>.fromOpaque(data!).takeUnretainedValue()
            connection.owner?.service(connection, mask: mask)
            return 0
        }, context)
        connection.timer = wl_event_loop_add_timer(loop, { data in
            let connection = Unmanaged<Connection>.fromOpaque(data!).takeUnretainedValue()
            connection.owner?.expire(connection)
            return 0
        }, context)
        if let timer = connection.timer { wl_event_source_timer_update(timer, Self.idleMilliseconds) }
        if connection.source == nil || connection.timer == nil {
            logger.error("control: could not watch a connection; closing it")
            drop(connection)
        }
    }

    private func service(_ connection: Connection, mask: UInt32) {
        if mask & UInt32(WL_EVENT_READABLE) != 0, !connection.closing {
            readRequests(connection)
        }
        if mask & UInt32(WL_EVENT_HANGUP | WL_EVENT_ERROR) != 0, !connection.closing {
            connection.closing = true
        }
        flush(connection)
    }

    private func readRequests(_ connection: Connection) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !connection.closing {
            let count = read(connection.fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { break }
                connection.closing = true
                break
            }
            if count == 0 {
                connection.closing = true  // answers already queued are still sent
                break
            }
            connection.input += chunk[..<count]
            while let newline = connection.input.firstIndex(of: UInt8(ascii: "\n")) {
                let line = connection.input[..<newline]
                connection.input.removeSubrange(...newline)
                answer(line, on: connection)
            }
            if connection.input.count > ControlRequest.maximumLineLength {
                logger.warning("control: \(connection.peer) sent a line longer than \(ControlRequest.maximumLineLength) bytes; closing")
                queue(.failure(ControlFailure(.badRequest, "request line longer than \(ControlRequest.maximumLineLength) bytes")), on: connection)
                connection.input.removeAll()
                connection.closing = true
            }
        }
    }

    private func answer(_ line: ArraySlice<UInt8>, on connection: Connection) {
        var line = line
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard !line.isEmpty else { return }
        if let timer = connection.timer { wl_event_source_timer_update(timer, Self.idleMilliseconds) }
        switch ControlRequest.parse(line) {
        case .success(let request):
            let response = handle(request)
            answered?(connection.peer, connection.pid, request, response)
            if response.ok {
                logger.notice("control: \(connection.peer): \(request.command) done")
            } else if let error = response.error {
                logger.notice("control: \(connection.peer): \(request.command) refused: \(error)")
            }
            queue(response, on: connection)
        case .failure(let failure):
            logger.notice("control: \(connection.peer): bad request: \(failure)")
            queue(.failure(failure), on: connection)
        }
    }

    private func queue(_ response: ControlResponse, on connection: Connection) {
        connection.output += Array((response.line + "\n").utf8)
    }

    /// Writes what the client will take; waits for writability for the rest.
    private func flush(_ connection: Connection) {
        while !connection.output.isEmpty {
            let sent = connection.output.withUnsafeBytes { send(connection.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { break }
                drop(connection)
                return
            }
            connection.output.removeFirst(sent)
        }
        if connection.output.count > Self.maximumPendingOutput {
            logger.warning("control: \(connection.peer) does not read its answers; closing")
            drop(connection)
            return
        }
        if connection.output.isEmpty && connection.closing {
            drop(connection)
            return
        }
        if let source = connection.source {
            let wanted = connection.output.isEmpty ? UInt32(WL_EVENT_READABLE) : UInt32(WL_EVENT_READABLE | WL_EVENT_WRITABLE)
            wl_event_source_fd_update(source, connection.closing ? UInt32(WL_EVENT_WRITABLE) : wanted)
        }
    }

    private func expire(_ connection: Connection) {
        logger.info("control: \(connection.peer) idle for \(Self.idleMilliseconds) ms; closing")
        drop(connection)
    }

    private func drop(_ connection: Connection) {
        // Removing a source from inside its own callback is safe in libwayland.
        if let source = connection.source { wl_event_source_remove(source) }
        if let timer = connection.timer { wl_event_source_remove(timer) }
        connection.source = nil
        connection.timer = nil
        connection.owner = nil
        Glibc.close(connection.fd)
        connections[connection.fd] = nil
    }

    /// Closes every connection and the socket, and removes the socket file
    /// (if it is still the one bound) and a directory Carrel created.
    func close() {
        for connection in Array(connections.values) { drop(connection) }
        if let source = acceptSource { wl_event_source_remove(source) }
        acceptSource = nil
        if let timer = resumeTimer { wl_event_source_remove(timer) }
        resumeTimer = nil
        if listenFD >= 0 { Glibc.close(listenFD) }
        listenFD = -1
        var info = stat()
        if let bound = boundFile, lstat(path, &info) == 0,
           UInt64(info.st_dev) == bound.dev, UInt64(info.st_ino) == bound.ino {
            unlink(path)
        }
        boundFile = nil
        if let directory = createdDirectory { rmdir(directory) }
        createdDirectory = nil
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }

    /// One client connection: bytes in until a newline, answers out.
    private final class Connection {
        let fd: Int32
        let peer: String
        var input: [UInt8] = []
        var output: [UInt8] = []
        /// Set once the client hung up or broke a limit: nothing more is
        /// read; the connection closes when its output is sent.
        var closing = false
        var source: OpaquePointer?
        var timer: OpaquePointer?
        weak var owner: ControlSocket?
        /// The peer's pid, for the audit log.
        var pid: Int32 = 0
        init(fd: Int32, peer: String, pid: Int32 = 0) { self.fd = fd; self.peer = peer; self.pid = pid }
    }
}
