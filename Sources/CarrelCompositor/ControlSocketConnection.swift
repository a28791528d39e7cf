import CarrelCore
import CarrelShim
import Glibc
import Logging

/// One `carrelctl` connection on the control socket, served from the Wayland
/// event loop without ever blocking it: requests are read up to a newline
/// (a longer line is refused and closes the connection), answers are queued
/// and written as the client takes them (too much unread output closes it),
/// and a connection that sends no complete request for `idleTimeout` closes.
final class ControlSocketConnection {
    /// A connection that sends no complete request for this long is closed.
    static let idleTimeout: Duration = .seconds(10)
    /// Output a client does not read beyond this closes its connection.
    static let maximumPendingOutput = 256 * 1024

    let fd: Int32
    /// "pid P uid U", how the log and the audit log name the client.
    let peer: String
    /// The peer's pid, for the audit log.
    let pid: Int32
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    /// Set once the client hung up or broke a limit: nothing more is read;
    /// the connection closes when its output is sent.
    private var closing = false
    private var source: EventLoopFDSource?
    private var timer: EventLoopTimer?
    private let logger: Logger
    /// Answers one request line (CR stripped, never empty).
    private let answer: (ControlSocketConnection, ArraySlice<UInt8>) -> ControlResponse
    /// The connection is finished: its fd is closed, forget it.
    private let finished: (ControlSocketConnection) -> Void

    /// Watches `fd` (which it now owns) on `loop`; nil when the loop could
    /// not watch it (the fd is closed then).
    init?(fd: Int32, peer: String, pid: Int32, loop: OpaquePointer, logger: Logger,
          answer: @escaping (ControlSocketConnection, ArraySlice<UInt8>) -> ControlResponse,
          finished: @escaping (ControlSocketConnection) -> Void) {
        self.fd = fd
        self.peer = peer
        self.pid = pid
        self.logger = logger
        self.answer = answer
        self.finished = finished
        source = EventLoopFDSource(loop: loop, fd: fd) { [unowned self] mask in service(mask) }
        timer = EventLoopTimer(loop: loop) { [unowned self] in
            logger.info("control: \(peer) idle for \(Self.idleTimeout.secondsText); closing")
            close()
        }
        guard source != nil, timer != nil else {
            source?.cancel()
            timer?.cancel()
            Glibc.close(fd)
            return nil
        }
        timer?.arm(after: Self.idleTimeout)
    }

    private func service(_ mask: UInt32) {
        if mask & UInt32(WL_EVENT_READABLE) != 0, !closing {
            readRequests()
        }
        if mask & UInt32(WL_EVENT_HANGUP | WL_EVENT_ERROR) != 0, !closing {
            closing = true
        }
        flush()
    }

    private func readRequests() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !closing {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { break }
                closing = true
                break
            }
            if count == 0 {
                closing = true  // answers already queued are still sent
                break
            }
            input += chunk[..<count]
            while let newline = input.firstIndex(of: UInt8(ascii: "\n")) {
                var line = input[..<newline]
                input.removeSubrange(...newline)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                guard !line.isEmpty else { continue }
                timer?.arm(after: Self.idleTimeout)
                queue(answer(self, line))
            }
            if input.count > ControlRequest.maximumLineLength {
                logger.warning("control: \(peer) sent a line longer than \(ControlRequest.maximumLineLength) bytes; closing")
                queue(.failure(ControlFailure(.badRequest, "request line longer than \(ControlRequest.maximumLineLength) bytes")))
                input.removeAll()
                closing = true
            }
        }
    }

    private func queue(_ response: ControlResponse) {
        output += Array((response.line + "\n").utf8)
    }

    /// Writes what the client will take; waits for writability for the rest.
    private func flush() {
        guard source != nil else { return }  // closed while answering
        while !output.isEmpty {
            let sent = output.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { break }
                close()
                return
            }
            output.removeFirst(sent)
        }
        if output.count > Self.maximumPendingOutput {
            logger.warning("control: \(peer) does not read its answers; closing")
            close()
            return
        }
        if output.isEmpty && closing {
            close()
            return
        }
        let wanted = output.isEmpty ? UInt32(WL_EVENT_READABLE) : UInt32(WL_EVENT_READABLE | WL_EVENT_WRITABLE)
        source?.watch(closing ? UInt32(WL_EVENT_WRITABLE) : wanted)
    }

    /// Stops watching, closes the fd and tells the socket. Safe from inside
    /// the connection's own callbacks, and more than once.
    func close() {
        guard source != nil || timer != nil else { return }
        closing = true
        source?.cancel()
        timer?.cancel()
        source = nil
        timer = nil
        Glibc.close(fd)
        finished(self)
    }
}
