import CarrelCore
import Glibc
import Logging

/// Starting programs through the privileged helper without waiting for its
/// answer: what a session's begin (its participants), the on-screen
/// keyboard and the input method use, so the loop that draws the exam
/// never waits for the helper's spawn. The answer is bounded by the link (`answerTimeout`): a
/// helper silent that long is dropped and the start fails.
extension Server {
    /// The environment a program started through the helper gets.
    static func spawnEnvironment(_ role: PrivilegedRequest.SpawnRole) -> [String: String] {
        var environment = SpawnEnvironment.from(ProcessEnvironment.current())
        if role.hasPrivateHome {
            // Its configuration is in its private home, not where Carrel's is.
            for name in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"] { environment[name] = nil }
        }
        return environment
    }

    /// Asks the helper to start `argv` as `role`'s user in `cgroup`, with
    /// `connection` (closed here once sent) as its Wayland connection;
    /// `done` runs later, on the loop, with the program or why not.
    func spawnThroughHelperLater(_ helper: PrivilegedHelperLink, role: PrivilegedRequest.SpawnRole, argv: [String],
                                 cgroup: String, connection socket: Int32, label: String, files: [String: String] = [:],
                                 done: @escaping (Result<LaunchedApp, CompositorError>) -> Void) {
        let request = PrivilegedRequest.spawn(role: role, argv: argv, environment: Self.spawnEnvironment(role),
                                              cgroup: cgroup, files: files)
        // The helper has its own copy once sent: Carrel's goes now (on a
        // failure the helper's goes too, and with it the client made for it).
        helper.send(request, passing: socket) { [weak self] answer in
            guard let self else { return }
            switch answer {
            case .success(let id?):
                logger.notice("launched \(label) \(argv[0]) through the privileged helper (helper program \(id))")
                done(.success(HelperLaunchedApp(id: id, link: helper, logger: logger)))
            case .success(nil):
                done(.failure(.launch("the privileged helper started \(label) but gave no id")))
            case .failure(let error):
                done(.failure(.launch(error.message)))
            }
        }
        close(socket)
    }

    /// Starts the keyboard through the helper when Carrel has one (as its
    /// role's user, in its role's cgroup, with a private home holding
    /// `files`), without waiting: false without a helper (then `connection`
    /// is still the caller's and `done` never runs); with one, `connection`
    /// is consumed and `done` runs later, on the loop.
    func launchThroughHelperLater(_ role: PrivilegedRequest.SpawnRole, argv: [String], connection: Int32, label: String,
                                  files: [String: String] = [:],
                                  done: @escaping (Result<LaunchedApp, CompositorError>) -> Void) throws -> Bool {
        guard let helper = privilegedHelper else { return false }
        let cgroup = try helperRoleCgroup(role, closingOnFailure: connection)
        spawnThroughHelperLater(helper, role: role, argv: argv, cgroup: cgroup, connection: connection,
                                label: label, files: files, done: done)
        return true
    }

    /// The cgroup `role`'s program is started in through the helper; on
    /// failure `connection`, which would have been its Wayland connection,
    /// is closed here.
    func helperRoleCgroup(_ role: PrivilegedRequest.SpawnRole, closingOnFailure connection: Int32) throws -> String {
        do {
            guard let providerHost else { throw CompositorError.launch("the \(role.rawValue) cannot be started before the providers are set up") }
            return try providerHost.roleCgroup(role)
        } catch {
            close(connection)
            throw error
        }
    }
}
