import CarrelHelperRequests
import CarrelSystem
import Glibc

/// Starts a program for the compositor as the role's user: through
/// util-linux's `setpriv` with that user's uid, gid and groups, no
/// capabilities (inheritable and bounding sets cleared), no_new_privs, a
/// process group of its own, and exactly the environment the request gave
/// plus the user's identity and its Wayland connection (WAYLAND_SOCKET, the
/// descriptor that came with the request).
///
/// The request's environment is set only after the drop, by `env -i`:
/// setpriv runs as root until it drops, and the dynamic loader would obey
/// LD_PRELOAD, LD_LIBRARY_PATH or GLIBC_TUNABLES given to it, so setpriv
/// gets a fixed environment of the helper's choosing. Standard input is
/// /dev/null; standard output and error are the helper's (the unit's
/// journal), where the helper's own lines carry its pid.
struct ProgramSpawner {
    static let setpriv = "/usr/bin/setpriv"
    static let env = "/usr/bin/env"
    /// All setpriv and env see before the program: nothing the compositor chose.
    static let fixedEnvironment = ["PATH=/usr/bin:/bin", "LC_ALL=C"]
    /// The descriptor number the Wayland connection has in the program.
    static let waylandFD: Int32 = 3

    let app: Account
    let participant: Account
    /// The input method's and the keyboard's users; nil when the helper was
    /// not given one, and then that role is not started through it.
    let inputMethod: Account?
    let keyboard: Account?

    /// The user `role` runs as; throws when the helper has none for it.
    func user(for role: PrivilegedRequest.SpawnRole) throws(HelperError) -> Account {
        switch role {
        case .app: return app
        case .participant: return participant
        case .inputMethod:
            guard let inputMethod else { throw HelperError("no user for the input method: start carrel-privileged with --input-method-user NAME") }
            return inputMethod
        case .onScreenKeyboard:
            guard let keyboard else { throw HelperError("no user for the on-screen keyboard: start carrel-privileged with --keyboard-user NAME") }
            return keyboard
        }
    }

    /// Starts `argv` as `user`; `home`, when given (a private home), is its
    /// HOME and XDG_RUNTIME_DIR instead of the user's own home.
    func spawn(as user: Account, argv: [String], environment: [String: String], home: String?, connection: Int32) throws(HelperError) -> pid_t {
        var variables = environment
        variables["WAYLAND_DISPLAY"] = nil
        variables["WAYLAND_SOCKET"] = "\(Self.waylandFD)"
        variables["HOME"] = home ?? user.home
        variables["XDG_RUNTIME_DIR"] = home
        variables["USER"] = user.name
        variables["LOGNAME"] = user.name
        if variables["PATH"] == nil { variables["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        // `env -i -- NAME=VALUE... PROGRAM ARGS`, run as the user: argv[0] holds no '=' (the parser refuses it).
        let command = [Self.setpriv, "--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--inh-caps=-all",
                       "--bounding-set=-all", "--no-new-privs", "--", Self.env, "-i", "--"]
            + variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + argv
        let cArgv = command.map { strdup($0) } + [nil]
        let cEnv = Self.fixedEnvironment.map { strdup($0) } + [nil]
        defer {
            cArgv.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy (onto itself too, in glibc).
        posix_spawn_file_actions_adddup2(&actions, connection, Self.waylandFD)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        var pid: pid_t = 0
        let result = withCleanSpawnAttributes(ownProcessGroup: true) { attributes in
            posix_spawn(&pid, Self.setpriv, &actions, &attributes, cArgv, cEnv)
        }
        guard result == 0 else {
            throw HelperError("could not start \(argv[0]) as \(user.name): \(Self.setpriv): \(SystemError.describe(result)) (install util-linux)")
        }
        return pid
    }
}
