import ArgumentParser
import CarrelCompositor
import CarrelCore
import Glibc
import Logging

/// `carrel [options] [-- APP [ARGS...]]`
struct CarrelCommand: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "carrel",
        abstract: "A Wayland compositor for exam sessions: shows one exam app and nothing else.",
        discussion: """
        Starts APP with WAYLAND_DISPLAY set to a private app socket and exits \
        with APP's exit status (128+N if a signal N killed it). Other clients \
        connect through the public socket as untrusted. Without APP, Carrel \
        runs alone until SIGTERM or SIGINT.

        Headless: WLR_BACKENDS=headless WLR_RENDERER=pixman carrel -- APP
        """,
        version: version
    )

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

    @Option(name: .customLong("provider"), help: ArgumentHelp("Enable a restriction provider (network, media) in addition to the policy's. Repeatable.", valueName: "name"))
    var providers: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where the restriction providers' state is recorded (default: $XDG_RUNTIME_DIR/carrel).", valueName: "dir"))
    var providerStateDir: String?

    @Option(name: .long, help: ArgumentHelp("How often applied restriction providers are verified, in milliseconds (default 1000).", valueName: "ms"))
    var providerVerifyInterval: Int?

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The exam app and its arguments, after --.", valueName: "app"))
    var app: [String] = []

    func validate() throws {
        if let fd = readyFd, fcntl(fd, F_GETFD) < 0 {
            throw ValidationError("--ready-fd \(fd) is not an open file descriptor; pass one the parent opened for Carrel")
        }
        if let interval = providerVerifyInterval, !(10...3_600_000).contains(interval) {
            throw ValidationError("--provider-verify-interval \(interval): give milliseconds between 10 and 3600000")
        }
        var check = ProvidersPolicy()
        for name in providers where !check.enable(name) {
            throw ValidationError("--provider \(name): no such restriction provider; use one of \(ProvidersPolicy.knownNames.joined(separator: ", "))")
        }
    }

    func run() throws {
        if let role = printGlobals {
            for name in GlobalAccess.standard.visibleInterfaces(for: role.role) { print(name) }
            return
        }
        let level = verbose ? .debug : logLevel.level
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "carrel")
        var options = CompositorOptions(app: app, readyFD: readyFd, logLevel: level, windowSize: windowSize.size)
        for name in providers { _ = options.providers.enable(name) }
        if let providerStateDir { options.providers.stateDirectory = providerStateDir }
        if let interval = providerVerifyInterval { options.providers.verifyInterval = .milliseconds(interval) }
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
