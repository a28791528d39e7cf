import ArgumentParser
import CarrelCompositor
import CarrelCore
import CarrelPolicyFile
import Glibc
import Logging

/// `carrel [options] [-- APP [ARGS...]]`
struct CarrelCommand: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "carrel",
        abstract: "A Wayland compositor for exam sessions: shows one exam app and nothing else.",
        usage: """
        carrel [--policy <path>] [<options>] [-- <app> [<args> ...]]
        carrel check-policy <file>
        carrel hash-passcode < passcode-file
        carrel keygen [--key-dir <dir>] [--force]
        """,
        discussion: """
        Starts APP with WAYLAND_DISPLAY set to a private app socket and exits \
        with APP's exit status (128+N if a signal N killed it). Other clients \
        connect through the public socket as untrusted. Without APP, Carrel \
        runs alone until SIGTERM or SIGINT.

        Headless: WLR_BACKENDS=headless WLR_RENDERER=pixman carrel -- APP

        The policy (--policy) is validated as a whole before anything starts: \
        an invalid one stops Carrel with exit status 2 and every problem, one \
        per line.
        """,
        version: version,
        subcommands: [CheckPolicyCommand.self, HashPasscodeCommand.self, KeygenCommand.self, MetricsRehearseCommand.self]
    )

    @Option(name: .long, help: ArgumentHelp("The policy file. Without this option: \(PolicyFile.defaultPath) if it exists, else the built-in policy (docs/POLICY.md).", valueName: "path"))
    var policy: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: LogLevel = .info

    @Flag(name: .shortAndLong, help: "Verbose: same as --log-level debug.")
    var verbose = false

    @Option(name: .long, help: ArgumentHelp("Write the public socket name and a newline to this file descriptor once clients can connect, then close it.", valueName: "fd"))
    var readyFd: Int32?

    @Option(name: .long, help: ArgumentHelp("Size of an output without modes of its own: Carrel's window on X11 or Wayland, or a headless output.", valueName: "WxH"))
    var windowSize: SizeArgument = SizeArgument(size: Size(width: 1280, height: 720))

    @Option(name: .long, help: ArgumentHelp("Print the globals a role sees (app, participant, untrusted), one per line, and exit.", valueName: "role"))
    var printGlobals: RoleArgument?

    @Flag(name: .long, help: "Single App Mode: relaunch APP whenever it exits (back-off and limit from the policy), showing nothing else meanwhile.")
    var kiosk = false

    @Flag(name: .long, help: "Begin an assessment session on APP's behalf when its first window maps; end it when APP exits. For apps that do not speak carrel-assessment-v1.")
    var assessment = false

    @Option(name: .long, help: ArgumentHelp("The --assessment session's configuration (implies --assessment): a TOML file with time_limit_minutes (or time_limit_seconds) and allow = [feature names]. Same as --assessment=FILE.", valueName: "file"))
    var assessmentConfig: String?

    @Option(name: .long, help: ArgumentHelp("The admin control socket carrelctl uses (default \(ControlPolicy.defaultSocketPath)); Carrel stops if it cannot open it.", valueName: "path"))
    var controlSocket: String?

    // Policy overrides for the app-requested lock ([app_lock] in the policy).
    @Option(name: .long, help: ArgumentHelp("Policy override: an executable (absolute real path) whose untrusted clients may ask for a lock-only session. Repeatable.", valueName: "path"))
    var appLockAllow: [String] = []

    @Flag(name: .long, help: "Policy override: the person at the machine confirms each app-requested lock on screen (Y / N / Escape).")
    var appLockConfirm = false

    @Option(name: .long, help: ArgumentHelp("Policy override: show a banner naming the app and time limit for this many seconds when an app-requested lock begins, 0 to 30 (0: none).", valueName: "n"))
    var bannerSeconds: Int?

    @Option(name: .customLong("provider"), help: ArgumentHelp("Enable a restriction provider (network, media) in addition to the policy's. Repeatable.", valueName: "name"))
    var providers: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where the restriction providers' state is recorded (default: $XDG_RUNTIME_DIR/carrel).", valueName: "dir"))
    var providerStateDir: String?

    @Option(name: .long, help: ArgumentHelp("How often applied restriction providers are verified, in milliseconds (default 1000).", valueName: "ms"))
    var providerVerifyInterval: Int?

    @Option(name: .long, help: ArgumentHelp("Testing only: do not check this precondition (nested, x_server, seat, policy_file, kernel_keys, virtual_input, input_readers) before a session begins. Repeatable. Never on an exam machine.", valueName: "name"))
    var waivePrecondition: [String] = []

    @Option(name: .long, help: ArgumentHelp("Start APP as this user (uid, gid and groups, no capabilities, no_new_privs) through setpriv; Carrel must run as root. For an exam machine: the compositor keeps root's powers, the exam app gets none.", valueName: "user"))
    var appUser: String?

    @Option(name: .long, help: ArgumentHelp("The socket of carrel-privileged: the network provider's nftables table and the app's start (as the helper's app user, in its own cgroup) go through it, so Carrel runs as an unprivileged user of its own and refuses to run as root.", valueName: "socket"))
    var privilegedHelper: String?

    @Option(name: .long, help: ArgumentHelp("The audit log (default: the policy's [audit] path, \(AuditPolicy.defaultPath)); Carrel stops if it cannot write it.", valueName: "path"))
    var auditLog: String?

    @Option(name: .long, help: ArgumentHelp("Writes every decision's effect and the compositor's own decisions to this file, one JSON object a line (appended; never key text). For tests and debugging.", valueName: "path"))
    var trace: String?

    @Option(name: .long, help: ArgumentHelp("journald's native socket the audit records also go to, as structured entries (default: /run/systemd/journal/socket when it exists; a journald namespace's is /run/systemd/journal.NAME/socket).", valueName: "path"))
    var journalSocket: String?

    @Option(name: .long, help: ArgumentHelp("Also write the audit records in the journal export format to this FIFO or file, for systemd-journal-remote (docs/AUDIT.md).", valueName: "path"))
    var journalExport: String?

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The exam app and its arguments, after --.", valueName: "app"))
    var app: [String] = []

    func validate() throws {
        if let path = controlSocket, !path.hasPrefix("/") {
            throw ValidationError("--control-socket \(path) is not an absolute path; give a full path such as /run/carrel/control.sock")
        }
        for path in appLockAllow {
            guard path.hasPrefix("/") else {
                throw ValidationError("--app-lock-allow \(path): give the executable's absolute path, e.g. /usr/bin/exam")
            }
            guard let resolved = realpath(path, nil) else {
                throw ValidationError("--app-lock-allow \(path): \(String(cString: strerror(errno))); give the path of an installed executable")
            }
            let real = String(cString: resolved)
            free(resolved)
            guard real == path else {
                throw ValidationError("--app-lock-allow \(path) resolves to \(real); Carrel matches the real path of /proc/PID/exe, so give \(real)")
            }
        }
        if let path = privilegedHelper, !path.hasPrefix("/") {
            throw ValidationError("--privileged-helper \(path) is not an absolute path; give the helper's socket, e.g. /run/carrel-privileged/privileged.sock")
        }
        if privilegedHelper != nil, appUser != nil {
            throw ValidationError("--privileged-helper and --app-user: with the helper, its --app-user names the app's user; leave out Carrel's --app-user")
        }
        if let bannerSeconds, !(0...30).contains(bannerSeconds) {
            throw ValidationError("--banner-seconds \(bannerSeconds): give a number of seconds from 0 (no banner) to 30")
        }
        if let fd = readyFd, fcntl(fd, F_GETFD) < 0 {
            throw ValidationError("--ready-fd \(fd) is not an open file descriptor; pass one the parent opened for Carrel")
        }
        if (assessment || assessmentConfig != nil) && app.isEmpty {
            throw ValidationError("--assessment needs the app to begin the session for: carrel --assessment -- APP [ARGS...]")
        }
        if kiosk && app.isEmpty {
            throw ValidationError("--kiosk needs the app to keep running: carrel --kiosk -- APP [ARGS...]")
        }
        if let interval = providerVerifyInterval, !(10...3_600_000).contains(interval) {
            throw ValidationError("--provider-verify-interval \(interval): give milliseconds between 10 and 3600000")
        }
        for name in waivePrecondition {
            guard let kind = Precondition(rawValue: name), Precondition.waivable.contains(kind) else {
                throw ValidationError("--waive-precondition \(name): not a precondition that can be waived; use one of \(Precondition.waivable.map(\.rawValue).joined(separator: ", "))")
            }
        }
        if let path = auditLog, !path.hasPrefix("/") || path.hasSuffix("/") {
            throw ValidationError("--audit-log \(path) is not an absolute path of a file; give a full path such as \(AuditPolicy.defaultPath)")
        }
        for (option, path) in [("--journal-socket", journalSocket), ("--journal-export", journalExport)] {
            if let path, !path.hasPrefix("/") || path.hasSuffix("/") {
                throw ValidationError("\(option) \(path) is not an absolute path of a file; give a full path such as /run/carrel/journal.export")
            }
        }
        var check = ProvidersPolicy()
        for name in providers where !check.enable(name) {
            throw ValidationError("--provider \(name): no such restriction provider; use one of \(ProvidersPolicy.knownNames.joined(separator: ", "))")
        }
    }

    func run() throws {
        // A bad file stops Carrel before anything starts (exit status 2).
        var assessmentMode: AssessmentConfiguration?
        if assessment || assessmentConfig != nil {
            assessmentMode = AssessmentConfiguration()
            if let path = assessmentConfig {
                do {
                    assessmentMode = try AssessmentModeFile.parse(try Self.readFile(path), file: path)
                } catch {
                    fputs("carrel: \(error)\n", stderr)
                    throw ExitCode(2)
                }
            }
        }
        let level = verbose ? .debug : logLevel.level
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "carrel")
        // Before anything starts: a policy that is not valid as a whole stops Carrel.
        let loaded: (policy: Policy, path: String?)
        do {
            loaded = try PolicyLoading.load(path: policy)
        } catch {
            PolicyLoading.report(error)
            throw ExitCode(2)
        }
        if let path = loaded.path {
            logger.info("policy \(path): \(loaded.policy.summary)")
        } else {
            logger.info("no policy file at \(PolicyFile.defaultPath): running under the built-in policy: \(loaded.policy.summary)")
        }
        if let role = printGlobals {
            // As Server shapes the table: the policy's capture and assessment roles.
            for name in GlobalAccess.standard.applying(loaded.policy).visibleInterfaces(for: role.role) { print(name) }
            return
        }
        let overrides = Overrides(kiosk: kiosk, controlSocket: controlSocket, appLockAllow: appLockAllow,
                                  appLockConfirm: appLockConfirm, bannerSeconds: bannerSeconds, providers: providers,
                                  providerStateDir: providerStateDir, providerVerifyInterval: providerVerifyInterval,
                                  waivePreconditions: waivePrecondition.compactMap(Precondition.init(rawValue:)), auditLog: auditLog)
        var options = CompositorOptions(app: app, readyFD: readyFd, logLevel: level, windowSize: windowSize.size,
                                        policy: overrides.applied(to: loaded.policy))
        options.requireControlSocket = controlSocket != nil
        options.appUser = appUser
        options.privilegedHelper = privilegedHelper
        options.policyPath = loaded.path
        options.carrelVersion = Self.version
        options.journalSocket = journalSocket
        options.tracePath = trace
        options.journalExport = journalExport
        // `carrelctl reload` reads the same file again, with the same overrides.
        let explicitPath = policy
        options.policySource = PolicySource(path: loaded.path ?? "\(PolicyFile.defaultPath) (absent at start: built-in policy)") {
            do {
                return .success(overrides.applied(to: try PolicyLoading.load(path: explicitPath).policy))
            } catch {
                return .failure(ReloadFailure("\(error)"))
            }
        }
        if options.kiosk.enabled && app.isEmpty {
            fputs("carrel: the policy enables Single App Mode ([kiosk] enabled = true) but no app was given: carrel -- APP [ARGS...]\n", stderr)
            throw ExitCode(2)
        }
        options.assessmentMode = assessmentMode
        let server: Server
        do {
            server = try Server(options: options, logger: logger)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        let status: Int32
        do {
            status = try server.run()
        } catch {
            logger.critical("\(error)")
            server.shutdown()
            throw ExitCode(1)
        }
        server.shutdown()
        throw ExitCode(status)
    }
}

extension CarrelCommand {
    /// `--assessment=FILE` is `--assessment --assessment-config FILE`:
    /// ArgumentParser has no option whose value is optional. Only arguments
    /// before `--` are Carrel's; the app's are left alone.
    static func normalised(_ arguments: [String]) -> [String] {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var result: [String] = []
        for argument in arguments[..<end] {
            if argument.hasPrefix("--assessment=") {
                result += ["--assessment", "--assessment-config", String(argument.dropFirst("--assessment=".count))]
            } else {
                result.append(argument)
            }
        }
        return result + arguments[end...]
    }

    struct FileError: Error, CustomStringConvertible {
        var description: String
    }

    static func readFile(_ path: String) throws -> String {
        guard let file = fopen(path, "r") else {
            throw FileError(description: "\(path): cannot read it: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count > 0 { bytes += buffer[0..<count] }
            if count < buffer.count { break }
            guard bytes.count <= 1 << 20 else { throw FileError(description: "\(path): larger than 1 MiB; is it the right file?") }
        }
        if ferror(file) != 0 { throw FileError(description: "\(path): read error") }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw FileError(description: "\(path): not UTF-8 text")
        }
        return text
    }
}

struct LogLevel: ExpressibleByArgument {
    let level: Logger.Level
    static let info = LogLevel(level: .info)
    init(level: Logger.Level) { self.level = level }
    init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument.lowercased()) else { return nil }
        self.level = level
    }
    static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
    var defaultValueDescription: String { level.rawValue }
}

struct RoleArgument: ExpressibleByArgument {
    let role: Role
    init?(argument: String) {
        guard let role = Role(rawValue: argument) else { return nil }
        self.role = role
    }
    static var allValueStrings: [String] { Role.allCases.map(\.rawValue) }
}

struct SizeArgument: ExpressibleByArgument {
    let size: Size
    init(size: Size) { self.size = size }
    init?(argument: String) {
        let parts = argument.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
              (1...16384).contains(width), (1...16384).contains(height) else { return nil }
        size = Size(width: width, height: height)
    }
    var defaultValueDescription: String { size.description }
}

/// What the command line changes in the policy, applied at start and again
/// to a reloaded file, so a reload compares like with like.
struct Overrides: Sendable {
    var kiosk: Bool
    var controlSocket: String?
    var appLockAllow: [String]
    var appLockConfirm: Bool
    var bannerSeconds: Int?
    var providers: [String]
    var providerStateDir: String?
    var providerVerifyInterval: Int?
    var waivePreconditions: [Precondition] = []
    var auditLog: String?

    func applied(to file: Policy) -> Policy {
        var policy = file
        if kiosk { policy.kiosk.enabled = true }
        if let controlSocket { policy.control.socketPath = controlSocket }
        // The app-lock overrides add to the policy's [app_lock].
        policy.appLock.allowedExecutables.formUnion(appLockAllow)
        if appLockConfirm { policy.appLock.requireConfirmation = true }
        if let bannerSeconds { policy.appLock.bannerDuration = .seconds(bannerSeconds) }
        for name in providers { _ = policy.providers.enable(name) }
        if let providerStateDir { policy.providers.stateDirectory = providerStateDir }
        if let providerVerifyInterval { policy.providers.verifyInterval = .milliseconds(providerVerifyInterval) }
        policy.preconditions.waived.formUnion(waivePreconditions)
        if let auditLog { policy.audit.path = auditLog }
        return policy
    }
}
