import CarrelCore
import CarrelFDPassing
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// Carrel's connection to `carrel-privileged` (`--privileged-helper SOCKET`):
/// a request either waits for its answer (bounded: `request`) or is sent and
/// answered later from the event loop (`send`: what a session's periodic
/// check uses, so that a slow helper never holds up the exam's frames); the
/// helper answers in order. Events (a spawned program `exited`) are handed
/// on from the event loop. When the helper goes away Carrel hears `lost`
/// (restrictions can no longer be guaranteed), every request still waiting
/// hears why, and it tries again every `retryInterval` until it is back.
final class PrivilegedHelperLink {
    let socketPath: String
    private let loop: OpaquePointer
    private let logger: Logger
    private var fd: Int32 = -1
    private var source: EventLoopFDSource?
    private var retryTimer: EventLoopTimer?
    private var dispatchTimer: EventLoopTimer?
    private var buffer: [UInt8] = []
    /// Events read while a request waited for its answer, handed on from the loop.
    private var pendingEvents: [PrivilegedReply] = []
    /// Requests sent with `send`, oldest first: the next answers are theirs.
    private var awaiting: [Awaiting] = []
    /// Answers (or failures) of `send`'s requests read while `request` or
    /// `awaitExit` waited, handed on from the loop like events.
    private var pendingAnswers: [(Awaiting, Result<PrivilegedReply, ProviderError>)] = []
    private var answerTimer: EventLoopTimer?

    private struct Awaiting {
        let name: String
        let deadline: Double
        let done: (Result<PrivilegedReply, ProviderError>) -> Void
    }
    /// Why it is not connected (nil while it is).
    private(set) var problem: String? = "not connected yet"
    /// Counts connections: ids the helper gives are its connection's own.
    private(set) var generation = 0
    /// A spawned program ended: its id (of the current `generation`) and waitpid status word.
    var exited: (UInt64, Int32) -> Void = { _, _ in }
    /// The connection was lost; the sentence says so.
    var lost: (String) -> Void = { _ in }

    /// Above the helper's worst case (two nft runs of 5 s each, in revert and recover).
    static let answerTimeout = 12.0
    static let retryInterval: Duration = .seconds(1)

    init(socketPath: String, loop: OpaquePointer, logger: Logger) {
        self.socketPath = socketPath
        self.loop = loop
        self.logger = logger
        retryTimer = EventLoopTimer(loop: loop) { [unowned self] in
            connect()
        }
        dispatchTimer = EventLoopTimer(loop: loop) { [unowned self] in
            dispatchPending()
        }
        answerTimer = EventLoopTimer(loop: loop) { [unowned self] in
            answersOverdue()
        }
    }

    var isConnected: Bool { fd >= 0 }

    /// Connects (and asks the helper to clear what a previous run of it left);
    /// on failure logs why and tries again later.
    func connect() {
        guard fd < 0 else { return }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0, let address = UnixSocketAddress(path: socketPath) else {
            fail("cannot make a socket for \(socketPath): \(SystemError.current)")
            return
        }
        guard address.withSockaddr({ Glibc.connect(socket, $0, $1) }) == 0 else {
            let why = SystemError.current
            Glibc.close(socket)
            fail("the privileged helper is not reachable at \(socketPath) (\(why)); start carrel-privileged.service")
            return
        }
        fd = socket
        generation += 1
        source = EventLoopFDSource(loop: loop, fd: socket) { [unowned self] _ in readable() }
        do {
            try request(.recover)
        } catch {
            // A helper that refuses Carrel (wrong user) closes without an answer.
            disconnect("the privileged helper at \(socketPath) did not accept Carrel: \(error.message)")
            return
        }
        if problem != nil { logger.notice("privileged helper connected at \(socketPath)") }
        problem = nil
    }

    private func fail(_ message: String) {
        if problem != message { logger.error("\(message); retrying every \(Self.retryInterval.secondsText)") }
        problem = message
        retryTimer?.arm(after: Self.retryInterval)
    }

    private func disconnect(_ message: String) {
        source?.cancel()
        source = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        buffer.removeAll()
        let wasConnected = problem == nil
        fail(message)
        // Their answers will not come: each hears why, from the loop.
        for waiting in awaiting { pendingAnswers.append((waiting, .failure(ProviderError(message)))) }
        awaiting.removeAll()
        answerTimer?.disarm()
        if !pendingAnswers.isEmpty { dispatchTimer?.arm(after: .milliseconds(1)) }
        if wasConnected { lost(message) }
    }

    /// Sends `request` and returns at once; `done` runs on the loop with its
    /// answer, or with why there is none (not connected, the helper went
    /// away, or it did not answer within `answerTimeout`: then, as for
    /// `request`, the connection is dropped). Never before this returns.
    /// `passing`: a descriptor sent with it (the caller's copy stays the caller's).
    func send(_ request: PrivilegedRequest, passing descriptor: Int32 = -1,
              done: @escaping (Result<UInt64?, ProviderError>) -> Void) {
        sendForReply(request, passing: descriptor) { answer in
            done(answer.map { reply in
                if case .ok(let id) = reply { return id }
                return nil
            })
        }
    }

    /// `send`, handing on the whole answer: what `input_readers` needs (its
    /// `holders`).
    func sendForReply(_ request: PrivilegedRequest, passing descriptor: Int32 = -1,
                      done: @escaping (Result<PrivilegedReply, ProviderError>) -> Void) {
        let waiting = Awaiting(name: request.name, deadline: monotonicSeconds() + Self.answerTimeout, done: done)
        guard fd >= 0 else {
            pendingAnswers.append((waiting, .failure(ProviderError(problem ?? "the privileged helper is not connected"))))
            dispatchTimer?.arm(after: .milliseconds(1))
            return
        }
        guard write(request, passing: descriptor) else {
            pendingAnswers.append((waiting, .failure(ProviderError(problem!))))
            dispatchTimer?.arm(after: .milliseconds(1))
            return
        }
        awaiting.append(waiting)
        if awaiting.count == 1 { answerTimer?.arm(after: .milliseconds(Int64(Self.answerTimeout * 1000) + 1)) }
    }

    /// The oldest request sent with `send` has waited past its bound.
    private func answersOverdue() {
        guard let oldest = awaiting.first else { return }
        let left = oldest.deadline - monotonicSeconds()
        guard left <= 0 else {
            answerTimer?.arm(after: .milliseconds(Int64(left * 1000) + 1))
            return
        }
        disconnect("the privileged helper at \(socketPath) did not answer \(oldest.name) within \(Self.answerTimeout) s")
    }

    /// An answer read: the oldest `send` request's, if one waits (true).
    private func answerAwaiting(_ reply: PrivilegedReply) -> Bool {
        guard !awaiting.isEmpty else { return false }
        let waiting = awaiting.removeFirst()
        switch reply {
        case .ok, .holders: pendingAnswers.append((waiting, .success(reply)))
        case .error(let message): pendingAnswers.append((waiting, .failure(ProviderError(message))))
        case .exited: return false
        }
        if let next = awaiting.first {
            answerTimer?.arm(after: .milliseconds(Int64(max(0, next.deadline - monotonicSeconds()) * 1000) + 1))
        } else {
            answerTimer?.disarm()
        }
        dispatchTimer?.arm(after: .milliseconds(1))
        return true
    }

    /// Writes one request line; false (after disconnecting) when it could not.
    private func write(_ request: PrivilegedRequest, passing descriptor: Int32) -> Bool {
        let line = Array((request.line + "\n").utf8)
        let sent = line.withUnsafeBytes { carrel_send_with_fd(fd, $0.baseAddress, $0.count, descriptor) }
        guard sent == line.count else {
            let why = sent < 0 ? SystemError.current : "short write"
            disconnect("the privileged helper at \(socketPath) went away (\(why))")
            return false
        }
        return true
    }

    /// Sends `request` (with `passing`, a descriptor, attached) and waits
    /// for its answer; throws the helper's error, or why there was none.
    @discardableResult
    func request(_ request: PrivilegedRequest, passing descriptor: Int32 = -1) throws(ProviderError) -> UInt64? {
        guard fd >= 0 else { throw ProviderError(problem ?? "the privileged helper is not connected") }
        guard write(request, passing: descriptor) else { throw ProviderError(problem!) }
        let deadline = monotonicSeconds() + Self.answerTimeout
        while true {
            while let reply = takeLine() {
                guard reply.isAnswer else {
                    pendingEvents.append(reply)
                    dispatchTimer?.arm(after: .milliseconds(1))
                    continue
                }
                // Answers to requests sent earlier with `send` come first.
                if answerAwaiting(reply) { continue }
                // What came after the answer in the same read (an `exited`
                // sent right after it, say) waits in the buffer; the socket
                // will not wake the loop for it again, so the timer does.
                if !buffer.isEmpty { dispatchTimer?.arm(after: .milliseconds(1)) }
                switch reply {
                case .ok(let id): return id
                case .holders: return nil
                case .error(let message): throw ProviderError(message)
                case .exited: continue
                }
            }
            let left = deadline - monotonicSeconds()
            guard left > 0 else {
                disconnect("the privileged helper at \(socketPath) did not answer \(request.name) within \(Self.answerTimeout) s")
                throw ProviderError(problem!)
            }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, Int32(left * 1000) + 1)
            guard receive() else { throw ProviderError(problem!) }
        }
    }

    /// Waits up to `timeout` seconds for program `id`'s `exited` event (other
    /// events are kept for the loop); its wait status, or nil.
    func awaitExit(of id: UInt64, timeout: Double) -> Int32? {
        let deadline = monotonicSeconds() + timeout
        while fd >= 0 {
            while let reply = takeLine() {
                if case .exited(id, let status) = reply {
                    if !buffer.isEmpty { dispatchTimer?.arm(after: .milliseconds(1)) }
                    return Int32(truncatingIfNeeded: status)
                }
                if !reply.isAnswer {
                    pendingEvents.append(reply)
                    dispatchTimer?.arm(after: .milliseconds(1))
                } else {
                    _ = answerAwaiting(reply)
                }
            }
            let left = deadline - monotonicSeconds()
            guard left > 0 else { return nil }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, Int32(left * 1000) + 1)
            guard receive() else { return nil }
        }
        return nil
    }

    /// Reads what is there; false (after disconnecting) once the helper is gone.
    private func receive() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 8192)
        let count = Glibc.recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
        guard count > 0 else {
            disconnect("the privileged helper at \(socketPath) closed its connection (it stopped or crashed)")
            return false
        }
        buffer += chunk[..<count]
        if buffer.count > 4 * PrivilegedReply.maximumLineLength {
            disconnect("the privileged helper at \(socketPath) sent a line over \(PrivilegedReply.maximumLineLength) bytes")
            return false
        }
        return true
    }

    private func takeLine() -> PrivilegedReply? {
        guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = Array(buffer[..<newline])
        buffer.removeSubrange(...newline)
        guard let reply = PrivilegedReply.parse(line) else {
            logger.error("privileged helper: ignored a line that is no reply: \(String(decoding: line.prefix(200), as: UTF8.self))")
            return takeLine()
        }
        return reply
    }

    private func readable() {
        guard receive() else { return }
        dispatchPending()
    }

    /// Hands on the events read while a request waited and those still in
    /// the buffer.
    private func dispatchPending() {
        while let reply = takeLine() {
            if reply.isAnswer {
                if !answerAwaiting(reply) {
                    logger.warning("privileged helper: an answer came with no request waiting; ignored")
                }
            } else {
                pendingEvents.append(reply)
            }
        }
        let events = pendingEvents
        pendingEvents.removeAll()
        let answers = pendingAnswers
        pendingAnswers.removeAll()
        for case .exited(let id, let status) in events {
            exited(id, Int32(truncatingIfNeeded: status))
        }
        for (waiting, result) in answers { waiting.done(result) }
    }

    func close() {
        retryTimer?.cancel()
        dispatchTimer?.cancel()
        answerTimer?.cancel()
        awaiting.removeAll()
        pendingAnswers.removeAll()
        source?.cancel()
        source = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

}
