import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// The admin control socket `carrelctl` talks to: a Unix stream socket (not
/// Wayland) carrying one JSON request per line, each answered by one JSON
/// line (`ControlRequest`, `ControlResponse`; the decisions are Core's).
///
/// Access has two layers (`ControlAccess`): the file system — the socket's
/// directory and file, set up by `ControlSocketFile` — and a peer-credential
/// check (SO_PEERCRED, supplementary groups from /proc) on every connection,
/// made here when accepting. A refused peer gets a `permission_denied` line
/// and is disconnected; the log says who.
///
/// Served from the Wayland event loop: every socket is non-blocking,
/// connections are capped in number, and each one (`ControlSocketConnection`)
/// bounds its lines and pending output and closes when idle, so a slow or
/// hostile client never blocks the compositor.
final class ControlSocket {
    typealias Handler = (ControlRequest) -> ControlResponse

    /// Connections served at once; more are refused with `busy`.
    static let maximumConnections = 8
    /// How long accepting pauses when Carrel is out of file descriptors.
    static let acceptPause: Duration = .seconds(1)
    /// /proc/PID/status is a few KiB; more is not a status file.
    private static let procStatusLimit = 65536

    var path: String { file.path }
    let access: ControlAccess
    private let file: ControlSocketFile
    private let loop: OpaquePointer
    private let logger: Logger
    private let handle: Handler
    /// Told of every answered request and the actor it named (the audit log's admin records).
    var answered: ((_ peer: String, _ pid: Int32, _ actor: String?, ControlRequest, ControlResponse) -> Void)?
    private var acceptSource: EventLoopFDSource?
    private var connections: [Int32: ControlSocketConnection] = [:]
    private var resumeTimer: EventLoopTimer?

    /// Creates the directory if needed, binds and listens. Throws a
    /// `CompositorError.control` that says what was wrong and what to do.
    init(path: String, group: String?, display: OpaquePointer, logger: Logger, handle: @escaping Handler) throws {
        self.logger = logger
        self.handle = handle
        loop = wl_display_get_event_loop(display)
        access = try ControlSocketFile.access(group: group, logger: logger)
        file = try ControlSocketFile(path: path, layout: access.layout, logger: logger)
        acceptSource = EventLoopFDSource(loop: loop, fd: file.fd) { [unowned self] _ in acceptConnections() }
        if acceptSource == nil {
            file.remove()
            throw CompositorError.control("could not watch the control socket \(path) on the event loop (out of file descriptors or memory)")
        }
    }

    // MARK: - Accepting

    private func acceptConnections() {
        while true {
            let fd = accept(file.fd, nil, nil)
            if fd < 0 {
                if errno == EMFILE || errno == ENFILE { pauseAccepting() }
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            guard let peer = Self.peerCredentials(fd) else {
                logger.warning("control: refused a connection whose credentials could not be read: \(SystemError.current)")
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
                let connection = ControlSocketConnection(
                    fd: fd, peer: "pid \(peer.pid) uid \(peer.uid)", pid: Int32(peer.pid), loop: loop, logger: logger,
                    answer: { [unowned self] connection, line in answer(line, from: connection) },
                    finished: { [unowned self] connection in connections[connection.fd] = nil })
                guard let connection else {
                    logger.error("control: could not watch a connection; closed it")
                    continue
                }
                connections[fd] = connection
            }
        }
    }

    /// Out of file descriptors: the pending connection would wake the
    /// (level-triggered) loop again at once, so accepting pauses a moment.
    private func pauseAccepting() {
        guard resumeTimer == nil else { return }
        logger.error("control: out of file descriptors; not accepting control connections for \(Self.acceptPause.secondsText)")
        acceptSource?.watch(0)
        resumeTimer = EventLoopTimer(loop: loop) { [unowned self] in
            resumeTimer?.cancel()
            resumeTimer = nil
            acceptSource?.watch(UInt32(WL_EVENT_READABLE))
        }
        if let resumeTimer {
            resumeTimer.arm(after: Self.acceptPause)
        } else {
            acceptSource?.watch(UInt32(WL_EVENT_READABLE))  // no timer to resume with: keep accepting
        }
    }

    /// SO_PEERCRED (pid, uid, gid as the kernel recorded them at connect)
    /// plus the supplementary groups from /proc/PID/status.
    private static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }, which Glibc's
        // Swift module does not import.
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) == 0, length == 12 else { return nil }
        let groups = BoundedFile.text("/proc/\(raw.0)/status", limit: procStatusLimit)
            .flatMap(ControlAccess.supplementaryGroups(fromProcStatus:)) ?? []
        return PeerCredentials(pid: raw.0, uid: raw.1, gid: raw.2, groups: groups)
    }

    /// Best effort: one line saying why, then the connection closes.
    private func refuse(_ fd: Int32, _ failure: ControlFailure) {
        let line = Array((ControlResponse.failure(failure).line + "\n").utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(fd)
    }

    // MARK: - Dispatch

    private func answer(_ line: ArraySlice<UInt8>, from connection: ControlSocketConnection) -> ControlResponse {
        switch ControlRequest.parseNamingActor(line) {
        case .success(let (request, actor)):
            let response = handle(request)
            answered?(connection.peer, connection.pid, actor, request, response)
            let who = connection.peer + (actor.map { " as \($0)" } ?? "")
            if response.ok {
                logger.notice("control: \(who): \(request.command) done")
            } else if let error = response.error {
                logger.notice("control: \(who): \(request.command) refused: \(error)")
            }
            return response
        case .failure(let failure):
            logger.notice("control: \(connection.peer): bad request: \(failure)")
            return .failure(failure)
        }
    }

    /// Closes every connection and the socket, and removes the socket file
    /// (if it is still the one bound) and a directory Carrel created.
    func close() {
        for connection in Array(connections.values) { connection.close() }
        acceptSource?.cancel()
        acceptSource = nil
        resumeTimer?.cancel()
        resumeTimer = nil
        file.remove()
    }
}
