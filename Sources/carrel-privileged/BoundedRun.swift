import CarrelSystem
import Glibc

/// Runs a short command (nft) with `input` on its stdin, waiting at most
/// `timeout` seconds; its output and errors come back as text.
enum BoundedRun {
    struct Result {
        let status: Int32
        let output: String
        let errors: String
        var succeeded: Bool { status == 0 }
    }

    static func run(_ argv: [String], input: String = "", timeout: Double = 5) throws(HelperError) -> Result {
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1], stderrPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw HelperError("pipe: \(SystemError.current)")
        }
        // The helper is single-threaded: nothing can spawn between pipe and these.
        for fd in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        let cArgv = argv.map { strdup($0) } + [nil]
        defer { cArgv.forEach { free($0) } }
        let path = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
        let cEnv = [strdup(path), nil]
        defer { cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, argv[0], &actions, nil, cArgv, cEnv)
        close(stdinPipe[0]); close(stdoutPipe[1]); close(stderrPipe[1])
        defer { close(stdoutPipe[0]); close(stderrPipe[0]) }
        guard spawned == 0 else {
            close(stdinPipe[1])
            throw HelperError("cannot run \(argv[0]): \(SystemError.describe(spawned)) (install nftables)")
        }
        let bytes = Array(input.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(stdinPipe[1], $0.baseAddress, $0.count) }
            if written <= 0 { break }
            offset += written
        }
        close(stdinPipe[1])
        var output: [UInt8] = [], errors: [UInt8] = []
        let deadline = monotonic() + timeout
        var open = [stdoutPipe[0], stderrPipe[0]]
        while !open.isEmpty, monotonic() < deadline {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 100) >= 0 || errno == EINTR else { break }
            for entry in fds where entry.revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(entry.fd, &buffer, buffer.count)
                if count <= 0 {
                    open.removeAll { $0 == entry.fd }
                } else if output.count + errors.count < 1 << 20 {
                    if entry.fd == stdoutPipe[0] { output += buffer[..<count] } else { errors += buffer[..<count] }
                }
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if monotonic() >= deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw HelperError("\(argv.joined(separator: " ")) did not finish within \(timeout) s; killed")
            }
            usleep(10_000)
        }
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: code, output: String(decoding: output, as: UTF8.self), errors: String(decoding: errors, as: UTF8.self))
    }

    static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
