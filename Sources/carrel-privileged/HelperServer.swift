import CarrelSystem
import Glibc

/// The listening socket and the loop: one connection at a time, from the
/// configured Carrel user only (SO_PEERCRED), and the helper's children
/// reaped every `tick` so Carrel hears of an ended program within it.
final class HelperServer {
    private let options: HelperOptions
    private let carrel: Account
    private let spawner: ProgramSpawner
    private var listener: Int32 = -1
    private var connection: CarrelConnection?
    static let tick: Int32 = 50  // milliseconds

    init(options: HelperOptions) throws(HelperError) {
        self.options = options
        carrel = try Account(options.carrelUser, for: "--carrel-user")
        let app = try Account(options.appUser, for: "--app-user")
        let participant = try options.participantUser.map { (name) throws(HelperError) in try Account(name, for: "--participant-user") } ?? app
        guard app.uid != carrel.uid, participant.uid != carrel.uid else {
            throw HelperError("the app and participants must not run as Carrel's user \(carrel.name): they could then signal and trace it; name another user")
        }
        let inputMethod = try options.inputMethodUser.map { (name) throws(HelperError) in try Account(name, for: "--input-method-user") }
        let keyboard = try options.keyboardUser.map { (name) throws(HelperError) in try Account(name, for: "--keyboard-user") }
        // Each of these is a user of its own: the engine sees every key, the
        // keyboard types; neither may signal, trace or enter the files of
        // Carrel, the app, a participant or each other.
        let users: [(what: String, account: Account?)] = [
            ("Carrel's user", carrel), ("the app's user", app), ("the participants' user", participant),
            ("the input method's user (--input-method-user)", inputMethod), ("the keyboard's user (--keyboard-user)", keyboard)]
        for (index, role) in users.enumerated().dropFirst(3) {
            guard let account = role.account else { continue }
            if let clash = users.enumerated().first(where: { $0.offset != index && $0.element.account?.uid == account.uid }) {
                throw HelperError("\(role.what), \(account.name), is also \(clash.element.what); give each role a user of its own (useradd --system --no-create-home carrel-input, carrel-keyboard)")
            }
        }
        spawner = ProgramSpawner(app: app, participant: participant, inputMethod: inputMethod, keyboard: keyboard)
    }

    func listen() throws(HelperError) {
        guard let address = UnixSocketAddress(path: options.socketPath) else {
            throw HelperError("--socket \(options.socketPath) is longer than \(UnixSocketAddress.maximumPathLength) bytes")
        }
        // The socket is chowned and chmodded by path, as root: in a directory anyone
        // else may write (Carrel's runtime directory, say), the name could be swapped
        // for a symlink to a file of root's between bind and chown.
        let directory = options.socketPath.lastIndex(of: "/").map { String(options.socketPath[..<$0]) } ?? "."
        var info = stat()
        guard lstat(directory.isEmpty ? "/" : directory, &info) == 0 else {
            throw HelperError("--socket \(options.socketPath): its directory \(directory): \(SystemError.current); make it (RuntimeDirectory=carrel-privileged in the unit)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == 0, info.st_mode & 0o022 == 0 else {
            throw HelperError("--socket \(options.socketPath): its directory \(directory) must be a directory of root's that nobody else may write (it is mode \(String(info.st_mode & 0o7777, radix: 8)), uid \(info.st_uid)); use /run/carrel-privileged")
        }
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw HelperError("socket(): \(SystemError.current)") }
        unlink(options.socketPath)
        // Made with no permissions at all, then handed to Carrel's user: no window for anyone else.
        let previous = umask(0o777)
        let bound = address.withSockaddr { bind(listener, $0, $1) }
        umask(previous)
        guard bound == 0 else { throw HelperError("cannot bind \(options.socketPath): \(SystemError.current)") }
        // The mode first, while root still owns the socket: once it is Carrel's,
        // changing its mode would take CAP_FOWNER, which the unit does not grant.
        guard chmod(options.socketPath, 0o600) == 0, lchown(options.socketPath, carrel.uid, carrel.gid) == 0 else {
            throw HelperError("cannot hand \(options.socketPath) to \(carrel.name): \(SystemError.current)")
        }
        guard Glibc.listen(listener, 4) == 0 else { throw HelperError("listen: \(SystemError.current)") }
        log("listening on \(options.socketPath) for \(carrel.name) (uid \(carrel.uid)); cgroups under /sys/fs/cgroup/\(options.cgroupSubtree)")
    }

    /// Runs until SIGTERM or SIGINT (then reverts what the connection had, as if it had closed).
    func run() {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGINT)
        sigprocmask(SIG_BLOCK, &blocked, nil)
        var noWait = timespec()
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            if let connection { fds.append(pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&fds, nfds_t(fds.count), Self.tick)
            // Blocked, so they wait here; a stop is seen within a tick.
            if sigtimedwait(&blocked, nil, &noWait) > 0 {
                log("stopping on a signal")
                connection?.revertAll()
                unlink(options.socketPath)
                return
            }
            if fds.count > 1, fds[1].revents != 0, let current = connection, !current.readable() {
                log("Carrel (pid \(current.peer)) closed its connection; reverting everything it asked for")
                current.revertAll()
                connection = nil
            }
            if fds[0].revents != 0 { accept() }
            reap()
            connection?.removeLeftHomes()
        }
    }

    private func accept() {
        let fd = Glibc.accept(listener, nil, nil)
        guard fd >= 0 else { return }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) == 0, length == 12 else {
            log("refused a connection: its credentials could not be read (\(SystemError.current))")
            close(fd)
            return
        }
        guard raw.1 == carrel.uid else {
            log("refused a connection from uid \(raw.1) (pid \(raw.0)): only \(carrel.name) (uid \(carrel.uid)) may ask")
            close(fd)
            return
        }
        guard connection == nil else {
            log("refused a second connection from pid \(raw.0): Carrel (pid \(connection!.peer)) is connected")
            close(fd)
            return
        }
        connection = CarrelConnection(fd: fd, peer: raw.0, options: options, spawner: spawner)
        log("Carrel connected (pid \(raw.0))")
    }

    private func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            guard pid > 0 else { return }
            // A program of a closed connection (killed then) has nobody to tell.
            _ = connection?.exited(pid, status: status)
        }
    }
}
