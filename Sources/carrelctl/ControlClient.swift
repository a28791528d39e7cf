import ArgumentParser
import CarrelControlProtocol
import CarrelSystem
import Glibc

/// One request to Carrel's control socket and its answer, printed for a
/// person or as JSON. Every wait is bounded.
struct ControlClient {
    let options: ControlOptions

    /// How long carrelctl waits to send its request and for the answer.
    static let timeoutSeconds = 10
    /// The longest answer line it reads.
    static let maximumAnswer = 1 << 20

    /// Sends `request`, prints the answer (`render` for people), and exits
    /// with the status the answer calls for.
    func perform(_ request: ControlRequest, actor: String? = nil, render: (ControlResponse) -> String) throws {
        let line = try exchange(request.line(actor: actor))
        guard let response = ControlResponse.parse(Array(line.utf8)) else {
            throw fail(ControlFailure(.badResponse, "Carrel's answer is not a control response: \(line.prefix(200))"), status: ExitStatus.badResponse)
        }
        if options.json { print(line) }
        if let error = response.error ?? (response.ok ? nil : ControlFailure(.badResponse, "Carrel refused without saying why")) {
            printError(error)
            throw ExitCode(ExitStatus.of(error.code))
        }
        if !options.json { print(render(response)) }
    }

    /// Prints `failure` (and its JSON form with --json); returns the exit to throw.
    func fail(_ failure: ControlFailure, status: Int32) -> ExitCode {
        if options.json { print(ControlResponse.failure(failure).line) }
        printError(failure)
        return ExitCode(status)
    }

    private func printError(_ failure: ControlFailure) {
        let text = failure.code == .permissionDenied ? "permission denied: \(failure.message)" : failure.message
        Stderr.write("carrelctl: \(text)")
    }

    /// Connects, writes one line, reads one line.
    private func exchange(_ request: String) throws -> String {
        let path = options.socketPath
        guard let address = UnixSocketAddress(path: path) else {
            throw fail(ControlFailure(.badArgument, "socket path \(path) is longer than \(UnixSocketAddress.maximumPathLength) bytes"), status: ExitStatus.usage)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw fail(ControlFailure(.unavailable, "socket(): \(SystemError.current)"), status: ExitStatus.unavailable)
        }
        defer { close(fd) }
        var timeout = timeval(tv_sec: Self.timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = address.withSockaddr { connect(fd, $0, $1) }
        if connected != 0 {
            let error = errno
            let reason = SystemError.current
            if error == EACCES || error == EPERM {
                throw fail(ControlFailure(.permissionDenied, "cannot connect to \(path): \(reason); run carrelctl as root or as a member of the control group the policy names"), status: ExitStatus.permissionDenied)
            }
            throw fail(ControlFailure(.unavailable, "cannot connect to \(path): \(reason); is Carrel running? (choose the socket with --socket PATH or CARREL_CONTROL_SOCKET)"), status: ExitStatus.unavailable)
        }
        // A refused connection may be closed before this is written; its
        // answer is still there to read.
        let bytes = Array((request + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                break
            }
            offset += sent
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !answer.contains(UInt8(ascii: "\n")) {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw fail(ControlFailure(.unavailable, "Carrel did not answer within \(Self.timeoutSeconds) s"), status: ExitStatus.unavailable)
                }
                if answer.isEmpty {
                    throw fail(ControlFailure(.unavailable, "reading Carrel's answer: \(SystemError.current)"), status: ExitStatus.unavailable)
                }
                break
            }
            if count == 0 { break }
            answer += chunk[..<count]
            if answer.count > Self.maximumAnswer {
                throw fail(ControlFailure(.badResponse, "Carrel's answer is longer than \(Self.maximumAnswer) bytes"), status: ExitStatus.badResponse)
            }
        }
        guard let newline = answer.firstIndex(of: UInt8(ascii: "\n")) else {
            throw fail(ControlFailure(.unavailable, "Carrel closed the connection without answering"), status: ExitStatus.unavailable)
        }
        return String(decoding: answer[..<newline], as: UTF8.self)
    }

}

/// Human-readable reports.
enum Report {
    static func ended(_ response: ControlResponse, reason: String) -> String {
        guard let outcome = response.outcome else { return "done" }
        guard outcome.forced == true else {
            return "session \(outcome.session) interrupted (administrative): \(outcome.message ?? reason)"
        }
        let stop = outcome.appStopGraceSeconds.map { "; its app gets SIGTERM unless it exits, then SIGKILL after \($0) s" } ?? ""
        return "session \(outcome.session) ended by force (administrative): \(outcome.message ?? reason)\(stop)"
    }

    static func extended(_ response: ControlResponse) -> String {
        guard let outcome = response.outcome else { return "done" }
        return "session \(outcome.session) extended by \(outcome.addedSeconds ?? 0) s: time limit \(outcome.timeLimitSeconds ?? 0) s, \(outcome.timeLeftSeconds ?? 0) s left"
    }

    static func status(_ status: ControlStatus) -> String {
        var lines = ["mode: \(status.mode)", "session: \(status.state)"]
        if let session = status.session {
            lines[1] += " (session \(session.id), \(session.phase))"
            let pid = session.app.pid.map { "pid \($0)" } ?? "pid unknown"
            lines.append("app: \(pid), role \(session.app.role), client \(session.app.client)")
            lines.append("participants: \(session.participants.isEmpty ? "none" : session.participants.joined(separator: ", "))")
            let left = session.timeLeftSeconds.map { "\($0) s" } ?? "not started"
            lines.append("time left: \(left) (limit \(session.timeLimitSeconds) s, \(session.addedSeconds) s added)")
        }
        if let r = status.restrictions {
            var held: [String] = []
            if r.hideUntrustedWindows { held.append("hide-untrusted") }
            if r.refuseCapture { held.append("refuse-capture") }
            if r.isolateClipboard { held.append("isolate-clipboard") }
            if r.inputOnlyToSession { held.append("input-only-to-session") }
            lines.append("restrictions: \(held.joined(separator: " "))")
            lines.append("  allowed features: \(r.allowedFeatures.isEmpty ? "none" : r.allowedFeatures.joined(separator: ", "))")
            lines.append("  denied by the compositor: \(r.compositorEnforcedDenials.isEmpty ? "none" : r.compositorEnforcedDenials.joined(separator: ", "))")
        } else {
            lines.append("restrictions: none")
        }
        let clients = status.clients.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("clients: \(clients)")
        if let metrics = status.metrics {
            lines.append("metrics: \(metrics.textfile)" + (metrics.problem.map { " NOT WRITTEN: \($0)" } ?? ""))
        }
        return lines.joined(separator: "\n")
    }
}

/// carrelctl's messages to people: one line on standard error.
enum Stderr {
    static func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
