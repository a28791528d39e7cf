import CarrelCore
import CarrelSystem
import Glibc

/// Starts a program for the compositor as the role's user: through
/// util-linux's `setpriv` with that user's uid, gid and groups, no
/// capabilities (inheritable and bounding sets cleared), no_new_privs, a
/// process group of its own, and exactly the environment the request gave
/// plus the user's identity and its Wayland connection (WAYLAND_SOCKET, the
/// descriptor that came with the request). Nothing of the helper's own
/// environment or descriptors reaches it.
struct ProgramSpawner {
    static let setpriv = "/usr/bin/setpriv"
    /// The descriptor number the Wayland connection has in the program.
    static let waylandFD: Int32 = 3

    let app: Account
    let participant: Account

    func spawn(role: PrivilegedRequest.SpawnRole, argv: [String], environment: [String: String], connection: Int32) throws(HelperError) -> pid_t {
        let user = role == .app ? app : participant
        let command = [Self.setpriv, "--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--inh-caps=-all",
                       "--bounding-set=-all", "--no-new-privs", "--"] + argv
        var variables = environment
        variables["WAYLAND_DISPLAY"] = nil
        variables["WAYLAND_SOCKET"] = "\(Self.waylandFD)"
        variables["HOME"] = user.home
        variables["USER"] = user.name
        variables["LOGNAME"] = user.name
        if variables["PATH"] == nil { variables["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        let cArgv = command.map { strdup($0) } + [nil]
        let cEnv = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArgv.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy (onto itself too, in glibc).
        posix_spawn_file_actions_adddup2(&actions, connection, Self.waylandFD)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptySet = sigset_t()
        sigemptyset(&emptySet)
        posix_spawnattr_setsigmask(&attributes, &emptySet)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, Self.setpriv, &actions, &attributes, cArgv, cEnv)
        guard result == 0 else {
            throw HelperError("could not start \(argv[0]) as \(user.name): \(Self.setpriv): \(SystemError.describe(result)) (install util-linux)")
        }
        return pid
    }
}
