import Glibc

/// Runs a helper program (nft) with text on its stdin and a time bound:
/// past `timeout` seconds it is killed and the run counts as failed. Used by
/// the compositor's in-process network table and by the privileged helper.
public struct BoundedCommand {
    public struct Result {
        public var status: Int32
        public var output: String
        public var errors: String
        public var succeeded: Bool { status == 0 }
    }

    public enum Failure: Error, CustomStringConvertible {
        case launch(String, String)
        case timedOut(String, Double)
        public var description: String {
            switch self {
            case .launch(let program, let reason): return "could not run \(program): \(reason)"
            case .timedOut(let program, let seconds): return "\(program) did not finish within \(seconds) s and was killed"
            }
        }
    }

    /// A started command: its pid and the read ends of its stdout and
    /// stderr (close-on-exec, the caller's to read and close). Its stdin has
    /// had the input and is closed.
    public struct Started {
        public let program: String
        public let pid: pid_t
        public let stdout: Int32
        public let stderr: Int32
    }

    /// Runs `argv` (program looked up in PATH, then /usr/sbin and /sbin).
    public static func run(_ argv: [String], input: String = "", timeout: Double = 5.0) throws(Failure) -> Result {
        let started = try start(argv, input: input)
        var output: [UInt8] = [], errors: [UInt8] = []
        var open = [started.stdout, started.stderr]
        let pid = started.pid
        let deadline = monotonicSeconds() + timeout
        var status: Int32 = 0
        var reaped = false
        while true {
            let left = deadline - monotonicSeconds()
            if left <= 0 {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                open.forEach { close($0) }
                throw .timedOut(argv[0], timeout)
            }
            if open.isEmpty {
                if waitpid(pid, &status, WNOHANG) == pid { reaped = true; break }
                usleep(2_000)
                continue
            }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(max(1, left * 1000)))
            if ready < 0 && errno != EINTR { break }
            for entry in fds where entry.revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(entry.fd, &buffer, buffer.count)
                if count <= 0 {
                    close(entry.fd)
                    open.removeAll { $0 == entry.fd }
                } else if entry.fd == started.stdout {
                    output += buffer[0..<count]
                } else {
                    errors += buffer[0..<count]
                }
            }
        }
        if !reaped { waitpid(pid, &status, 0) }
        return result(status: status, output: output, errors: errors)
    }

    /// Starts `argv` with `input` on its stdin and returns at once; the
    /// caller reads its output, bounds its time and reaps it (the event
    /// loop does, so that it never waits for the command).
    public static func start(_ argv: [String], input: String = "") throws(Failure) -> Started {
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1], stderrPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            let why = SystemError.current
            for fd in stdinPipe + stdoutPipe + stderrPipe where fd >= 0 { close(fd) }
            throw .launch(argv[0], why)
        }
        // Not inherited by anything else the process starts.
        for fd in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)

        let program = resolve(argv[0])
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = withCleanSpawnAttributes { posix_spawn(&pid, program, &actions, &$0, cArgs, environ) }
        for fd in [stdinPipe[0], stdoutPipe[1], stderrPipe[1]] { close(fd) }
        guard spawned == 0 else {
            for fd in [stdinPipe[1], stdoutPipe[0], stderrPipe[0]] { close(fd) }
            throw .launch(argv[0], SystemError.describe(spawned))
        }
        // The ruleset is small: written whole before reading (pipe buffer 64 KiB).
        var bytes = Array(input.utf8)
        var offset = 0
        _ = signal(SIGPIPE, SIG_IGN)
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(stdinPipe[1], $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 { break }
            offset += written
        }
        close(stdinPipe[1])
        return Started(program: argv[0], pid: pid, stdout: stdoutPipe[0], stderr: stderrPipe[0])
    }

    /// The result of a command that ended with waitpid status `status`.
    public static func result(status: Int32, output: [UInt8], errors: [UInt8]) -> Result {
        let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exitCode, output: String(decoding: output, as: UTF8.self),
                      errors: String(decoding: errors, as: UTF8.self))
    }

    private static func resolve(_ program: String) -> String {
        if program.contains("/") { return program }
        var directories: [String] = []
        if let path = getenv("PATH") { directories = String(cString: path).split(separator: ":").map(String.init) }
        for directory in directories + ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
            let candidate = directory + "/" + program
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return program
    }

}
