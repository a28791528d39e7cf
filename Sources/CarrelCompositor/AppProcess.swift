import CarrelSystem
import Glibc
import Logging

/// How the app ended, from waitpid's status word.
public struct AppExit: Equatable, CustomStringConvertible {
    public enum Kind: Equatable { case exited(Int32), signaled(Int32) }
    public let kind: Kind

    init(waitStatus status: Int32) {
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift cannot import.
        let signal = status & 0x7f
        kind = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// Carrel's own exit status: the app's, or 128+N when a signal killed it,
    /// as shells report it.
    public var carrelExitStatus: Int32 {
        switch kind {
        case .exited(let code): return code
        case .signaled(let signal): return 128 + signal
        }
    }

    public var description: String {
        switch kind {
        case .exited(let code): return "status \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }
}

/// The exam app Carrel launched, watched by its own pid: a detached
/// grandchild it leaves behind does not keep Carrel alive.
final class AppProcess {
    let pid: pid_t
    private let logger: Logger
    private var exited = false
    /// It leads a process group of its own: ending it ends what it started.
    private let leadsGroup: Bool

    private init(pid: pid_t, logger: Logger, leadsGroup: Bool) {
        self.pid = pid
        self.logger = logger
        self.leadsGroup = leadsGroup
    }

    /// How a launched program reaches Carrel: a socket path it connects to
    /// (WAYLAND_DISPLAY), or one end of a socket pair Carrel already accepted
    /// as a client of a role (WAYLAND_SOCKET, kept open across exec).
    enum Connection {
        case socketPath(String)
        case connectedSocket(Int32)
    }

    /// Launches `command` connected to Carrel through `appSocket` only;
    /// `label` names it in the log (the app, or a participant).
    /// `ownProcessGroup`: it leads a new process group, so `terminate` ends
    /// its children too (a participant started through a shell).
    static func launch(_ command: [String], appSocket: String, logger: Logger, label: String = "app",
                       ownProcessGroup: Bool = false) throws -> AppProcess {
        try launch(command, connection: .socketPath(appSocket), logger: logger, label: label, ownProcessGroup: ownProcessGroup)
    }

    /// Launches `command` reaching Carrel through `connection` only;
    /// `environment` sets (or, with nil, removes) variables beyond that.
    static func launch(_ command: [String], connection: Connection, environment: [String: String?] = [:],
                       logger: Logger, label: String, ownProcessGroup: Bool) throws -> AppProcess {
        let pid: pid_t
        do {
            pid = try spawn(command, connection: connection, environment: environment, ownProcessGroup: ownProcessGroup)
        } catch {
            throw CompositorError.launch("\(error.program): \(error.reason); check the command exists and is executable")
        }
        logger.notice("launched \(label) \(command[0]) as pid \(pid)")
        return AppProcess(pid: pid, logger: logger, leadsGroup: ownProcessGroup)
    }

    /// Why a program could not be started: posix_spawn's error, as text.
    struct SpawnFailure: Error {
        let program: String
        let reason: String
    }

    /// Starts `command` with Carrel's environment, its connection set as
    /// `connection` says, no X display, `environment` applied on top; a new
    /// process group when `ownProcessGroup`. Every program Carrel launches
    /// (the app, participants, the input method, the on-screen keyboard)
    /// starts here.
    static func spawn(_ command: [String], connection: Connection, environment overrides: [String: String?] = [:],
                      ownProcessGroup: Bool) throws(SpawnFailure) -> pid_t {
        var environment: [String: String] = [:]
        for (key, value) in ProcessEnvironment.current() { environment[key] = value }
        // The program and its children reach Carrel only through this connection.
        switch connection {
        case .socketPath(let path):
            environment["WAYLAND_DISPLAY"] = path
            environment.removeValue(forKey: "WAYLAND_SOCKET")
        case .connectedSocket(let fd):
            environment["WAYLAND_SOCKET"] = String(fd)
            environment.removeValue(forKey: "WAYLAND_DISPLAY")
        }
        // No Xwayland: X11 clients could read every other client's input.
        environment.removeValue(forKey: "DISPLAY")
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        for (key, value) in overrides { environment[key] = value }

        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if case .connectedSocket(let fd) = connection {
            // dup2 onto itself clears close-on-exec in the child only.
            posix_spawn_file_actions_adddup2(&actions, fd, fd)
        }
        var pid: pid_t = 0
        let result = withCleanSpawnAttributes(ownProcessGroup: ownProcessGroup) { attributes in
            posix_spawnp(&pid, command[0], &actions, &attributes, argv, envp)
        }
        guard result == 0 else { throw SpawnFailure(program: command[0], reason: SystemError.describe(result)) }
        return pid
    }

    /// Reaps the app if it has exited; nil while it runs.
    func reap() -> AppExit? {
        guard !exited else { return nil }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid else { return nil }
        exited = true
        return AppExit(waitStatus: status)
    }

    /// Asks the app to end, then kills it after `grace` seconds. What it
    /// started goes with it: its process group, and every descendant that
    /// left the group (setsid) but not the tree, as the tree was before
    /// the stop began; one that left the tree too is Carrel's orphan (see
    /// `Server.endStrays`).
    func terminate(grace: Double) {
        let family = ProcessTable.descendants(of: pid)
        defer { ProcessTable.kill(family) }
        guard !exited else {
            endGroup()
            return
        }
        Glibc.kill(leadsGroup ? -pid : pid, SIGTERM)
        let deadline = monotonicSeconds() + grace
        while monotonicSeconds() < deadline {
            if reap() != nil {
                endGroup()
                return
            }
            usleep(10_000)
        }
        logger.warning("pid \(pid) ignored SIGTERM for \(grace)s; killing it")
        Glibc.kill(leadsGroup ? -pid : pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exited = true
    }

    /// Ends it and everything under it now: SIGKILL to its process group (or
    /// itself) and to every process in its tree, a setsid child included.
    /// Nothing waits: SIGCHLD brings the reap.
    func kill() {
        guard !exited else { return }
        let family = ProcessTable.descendants(of: pid)
        Glibc.kill(leadsGroup ? -pid : pid, SIGKILL)
        ProcessTable.kill(family)
    }

    /// What is left of its process group once it has exited (nothing when
    /// it leads none): killed, so nothing it started outlives it.
    func endGroup() {
        guard leadsGroup else { return }
        Glibc.kill(-pid, SIGKILL)
    }

}

enum ProcessEnvironment {
    static func current() -> [(key: String, value: String)] {
        var result: [(String, String)] = []
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            }
            pointer += 1
        }
        return result
    }
}
