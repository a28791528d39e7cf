import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// Gives every connection its role from the socket it came through (the
/// launched app's private socket, a participant's, the socket pair of the
/// input method or the on-screen keyboard, or the public one) and answers libwayland's global filter from the
/// Core role table.
///
/// The public socket is libwayland's own (`wl_display_add_socket_auto`); any
/// client Carrel did not accept itself is therefore *untrusted* — the default
/// fails closed. The app socket is a listening socket Carrel accepts on by
/// hand, in a 0700 directory of its own, so it can record the role at accept.
/// Each participant of a live session gets one the same way, beside it
/// (`participant-ID`), open only while that session is.
///
/// Every client's executable is read once, when it connects: the realpath of
/// `/proc/PID/exe` for the pid libwayland took from SO_PEERCRED. Only that —
/// never app_id or anything else a client says — decides whether an untrusted
/// client is on the app-lock allowlist (ASAM).
final class ClientRoles {
    private let display: OpaquePointer
    private let access: GlobalAccess
    /// Read when a client binds (and `carrelctl reload` replaces it).
    var appLock: AppLockPolicy
    private let logger: Logger
    private var roles: [OpaquePointer: Role] = [:]
    private var executables: [OpaquePointer: String] = [:]
    /// Every live client's pid, from SO_PEERCRED at connect (0: unknown).
    private var processes: [OpaquePointer: pid_t] = [:]
    private var createdListener: Listener?
    private var clientListeners: [OpaquePointer: Listener] = [:]
    private var appListenFD: Int32 = -1
    private var appAcceptSource: EventLoopFDSource?
    private(set) var appSocketPath: String?
    /// Whether a session holds restrictions (capture is hidden then).
    var sessionActive: () -> Bool = { false }
    /// A client is disconnecting (its role is still known): the audit log
    /// writes its pending counts.
    var clientGone: (OpaquePointer) -> Void = { _ in }
    private var appSocketDirectory: String?
    /// The user the app runs as, when not Carrel's (`--app-user`).
    var appSocketOwner: (uid: uid_t, gid: gid_t)?
    /// The programs Carrel launched, by pid, for `ProcessLineage`: whose
    /// descendants may connect through the app's and participants' sockets.
    var launchedPrograms: () -> [pid_t: LaunchedProgram] = { [:] }
    /// A connection on a private socket was refused: for `--trace`.
    var refused: (PrivateSocket, String) -> Void = { _, _ in }
    /// The refusals already logged, by pid and socket.
    private var refusalsLogged: Set<String> = []
    /// Participant id of each client that came through a participant socket.
    private var participantIDs: [OpaquePointer: String] = [:]
    /// The open participant sockets, by participant id.
    private var participantSockets: [String: ParticipantSocket] = [:]

    init(display: OpaquePointer, access: GlobalAccess, appLock: AppLockPolicy = AppLockPolicy(), logger: Logger) {
        self.display = display
        self.access = access
        self.appLock = appLock
        self.logger = logger
        createdListener = Listener(clientCreatedOn: display) { [unowned self] data in
            connected(OpaquePointer(data!))
        }
        wl_display_set_global_filter(display, { client, global, data in
            let roles = Unmanaged<ClientRoles>.fromOpaque(data!).takeUnretainedValue()
            return roles.isVisible(global: global!, to: client!)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func role(of client: OpaquePointer) -> Role {
        roles[client] ?? .untrusted
    }

    /// The client's executable as read when it connected; nil if it could
    /// not be read (then it is on no allowlist).
    func executable(of client: OpaquePointer) -> String? {
        executables[client]
    }

    /// Whether an untrusted client's executable is on the app-lock allowlist.
    func isAppLockEntitled(_ client: OpaquePointer) -> Bool {
        role(of: client) == .untrusted && appLock.entitles(executable: executables[client])
    }

    /// Every client, whichever socket it came through: record its executable
    /// now, before it can send a request, and forget it when it goes.
    private func connected(_ client: OpaquePointer) {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        wl_client_get_credentials(client, &pid, &uid, &gid)
        processes[client] = pid
        if pid > 0, let resolved = realpath("/proc/\(pid)/exe", nil) {
            executables[client] = String(cString: resolved)
            free(resolved)
        }
        let listener = Listener(clientDestroyOf: client) { [weak self] _ in
            self?.forget(client)
        }
        clientListeners[client] = listener
        if appLock.entitles(executable: executables[client]) {
            logger.info("client pid \(pid) runs \(executables[client] ?? "?"), on the app-lock allowlist")
        }
    }

    /// The pid of the live client `matches` picks (the process that
    /// connected, as SO_PEERCRED said); nil if none matches or it is unknown.
    /// A client on a socket pair Carrel made (started by the privileged
    /// helper) reads as Carrel's own pid, which is nobody's process to act on.
    func process(where matches: (OpaquePointer) -> Bool) -> pid_t? {
        guard let client = processes.keys.first(where: matches), let pid = processes[client], pid > 0,
              pid != getpid() else { return nil }
        return pid
    }

    /// Whether `client` may bind a global of `interface` now (the audit
    /// log's check of a bind request; unknown interfaces are refused).
    func mayBind(interface: String, client: OpaquePointer) -> Bool {
        access.decision(interface: interface, role: role(of: client), sessionActive: sessionActive(),
                        appLockEntitled: isAppLockEntitled(client)).isVisible
    }

    private func isVisible(global: OpaquePointer, to client: OpaquePointer) -> Bool {
        let interface = String(cString: carrel_global_interface_name(global))
        let role = role(of: client)
        let decision = access.decision(interface: interface, role: role, sessionActive: sessionActive(),
                                       appLockEntitled: isAppLockEntitled(client))
        if decision == .hidden(.unclassified) {
            // Every global Carrel creates must be in the role table; meeting an
            // unclassified one means a new global slipped in without a decision.
            logger.error("global \(interface) is not classified in the role table; hidden from every client")
            assertionFailure("unclassified global \(interface)")
        }
        return decision.isVisible
    }

    /// Opens the app socket under `runtimeDirectory`; returns its absolute path.
    func openAppSocket(runtimeDirectory: String) throws -> String {
        let (directory, path, fd) = try listeningSocket(runtimeDirectory: runtimeDirectory, name: "app")
        if let owner = appSocketOwner {
            // The app runs as another user (`--app-user`): the directory and
            // socket are its, still private to it and to root.
            guard chown(directory, owner.uid, owner.gid) == 0, chown(path, owner.uid, owner.gid) == 0 else {
                throw CompositorError.socket("cannot hand \(directory) to uid \(owner.uid): \(SystemError.current)")
            }
        }
        appSocketDirectory = directory
        appListenFD = fd
        appSocketPath = path
        appAcceptSource = EventLoopFDSource(loop: wl_display_get_event_loop(display), fd: fd) { [unowned self] _ in
            acceptClients(fd, socket: .app) { client in self.assign(.app, to: client) }
        }
        return path
    }

    /// A listening socket `name` in Carrel's private 0700 directory (made
    /// under `runtimeDirectory` on first use).
    private func listeningSocket(runtimeDirectory: String, name: String) throws -> (directory: String, path: String, fd: Int32) {
        let directory = try privateDirectory(runtimeDirectory: runtimeDirectory)
        let path = "\(directory)/\(name)"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw CompositorError.socket("socket(): \(SystemError.current)") }
        guard let address = UnixSocketAddress(path: path) else {
            Glibc.close(fd)
            throw CompositorError.socket("socket path \(path) is longer than \(UnixSocketAddress.maximumPathLength) bytes; use a shorter XDG_RUNTIME_DIR")
        }
        unlink(path)
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        guard bound == 0, listen(fd, 128) == 0 else {
            let message = SystemError.current
            Glibc.close(fd)
            throw CompositorError.socket("cannot listen on \(path): \(message)")
        }
        return (directory, path, fd)
    }

    private func privateDirectory(runtimeDirectory: String) throws -> String {
        if let appSocketDirectory { return appSocketDirectory }
        let directory = "\(runtimeDirectory)/carrel-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard mkdir(directory, 0o700) == 0 else {
            throw CompositorError.socket("cannot create \(directory): \(SystemError.current)")
        }
        appSocketDirectory = directory
        return directory
    }

    private func acceptClients(_ listenFD: Int32, socket: PrivateSocket, _ assignRole: (OpaquePointer) -> Void) {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 { return }
            // The app's children must not inherit the connection by accident.
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if case .refused(let why) = lineage(of: fd, socket: socket) {
                refused(socket, why)
                // Said once per process and socket: a process that keeps
                // knocking must not flood the journal.
                if refusalsLogged.insert("\(carrel_socket_peer_pid(fd)) \(socket)").inserted {
                    if refusalsLogged.count > 1024 { refusalsLogged.removeAll() }
                    logger.warning("refused a connection on \(socket): \(why)")
                }
                Glibc.close(fd)
                continue
            }
            guard let client = wl_client_create(display, fd) else {
                logger.error("could not create a client for an app connection")
                Glibc.close(fd)
                continue
            }
            assignRole(client)
        }
    }

    /// Core's rule on whose descendants may use `socket`, for the process
    /// at the other end of `fd` (SO_PEERCRED's pid, its ancestry from /proc).
    private func lineage(of fd: Int32, socket: PrivateSocket) -> ProcessLineage.Verdict {
        let pid = carrel_socket_peer_pid(fd)
        guard pid > 0 else {
            return .refused("its process cannot be known (SO_PEERCRED: \(pid < 0 ? SystemError.current : "no pid"))")
        }
        return ProcessLineage.mayConnect(to: socket, ancestry: ProcessTable.ancestry(of: pid),
                                         carrel: getpid(), launched: launchedPrograms())
    }

    /// A connection for a program Carrel is about to launch in `role` (the
    /// input method, the on-screen keyboard): one end of a socket pair is a
    /// client with that role, the other (close-on-exec) is returned for the
    /// program's WAYLAND_SOCKET. No path exists that anyone else could
    /// connect through.
    func connect(_ role: Role) throws -> Int32 {
        try connectClient(role).fd
    }

    private func connectClient(_ role: Role) throws -> (client: OpaquePointer, fd: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw CompositorError.socket("\(role): socketpair(): \(SystemError.current)")
        }
        guard let client = wl_client_create(display, fds[0]) else {
            Glibc.close(fds[0])
            Glibc.close(fds[1])
            throw CompositorError.socket("\(role): could not create a client for its connection")
        }
        assign(role, to: client)
        return (client, fds[1])
    }

    // MARK: - Participant sockets

    /// Opens participant `id`'s own socket (only the process Carrel launches
    /// is told where it is); every connection through it has role
    /// `participant` with that id. Returns its absolute path.
    func openParticipantSocket(_ id: String, runtimeDirectory: String) throws -> String {
        closeParticipantSocket(id)
        let (_, path, fd) = try listeningSocket(runtimeDirectory: runtimeDirectory, name: "participant-\(id)")
        let source = EventLoopFDSource(loop: wl_display_get_event_loop(display), fd: fd) { [unowned self] _ in
            acceptClients(fd, socket: .participant(id)) { client in
                self.participantIDs[client] = id
                self.assign(.participant, to: client)
            }
        }
        participantSockets[id] = ParticipantSocket(path: path, fd: fd, source: source)
        return path
    }

    /// A connection for participant `id` started through the privileged
    /// helper: one end of a socket pair is a client with role `participant`
    /// and that id, the other is returned for the program's WAYLAND_SOCKET.
    func connectParticipant(_ id: String) throws -> Int32 {
        let (client, fd) = try connectClient(.participant)
        participantIDs[client] = id
        return fd
    }

    /// Closes participant `id`'s socket and disconnects every client that
    /// came through it (their windows go with them).
    func closeParticipantSocket(_ id: String) {
        if let socket = participantSockets.removeValue(forKey: id) {
            socket.source?.cancel()
            Glibc.close(socket.fd)
            unlink(socket.path)
        }
        for (client, participant) in participantIDs where participant == id {
            wl_client_destroy(client)
        }
    }

    /// The participant id `client` connected as, if it came through a participant socket.
    func participantID(of client: OpaquePointer) -> String? { participantIDs[client] }

    /// Gives `client` its role; its destroy listener is already in place
    /// (`connected` ran inside wl_client_create).
    private func assign(_ role: Role, to client: OpaquePointer) {
        roles[client] = role
        if clientListeners[client] == nil {
            clientListeners[client] = Listener(clientDestroyOf: client) { [weak self] _ in self?.forget(client) }
        }
        logger.debug("client connected with role \(role)")
    }

    /// Ends every live connection of `role` now: an input method being
    /// replaced may send nothing more while its process is still ending.
    func disconnectClients(of role: Role) {
        for (client, held) in roles where held == role { wl_client_destroy(client) }
    }

    private func forget(_ client: OpaquePointer) {
        clientGone(client)
        participantIDs[client] = nil
        roles[client] = nil
        executables[client] = nil
        processes[client] = nil
        clientListeners.removeValue(forKey: client)?.disconnect()
    }

    func close() {
        for id in Array(participantSockets.keys) { closeParticipantSocket(id) }
        createdListener?.disconnect()
        createdListener = nil
        appAcceptSource?.cancel()
        appAcceptSource = nil
        if appListenFD >= 0 { Glibc.close(appListenFD) }
        appListenFD = -1
        if let path = appSocketPath { unlink(path) }
        if let directory = appSocketDirectory { rmdir(directory) }
        appSocketPath = nil
        appSocketDirectory = nil
    }
}

/// One participant's listening socket.
private struct ParticipantSocket {
    let path: String
    let fd: Int32
    let source: EventLoopFDSource?
}
