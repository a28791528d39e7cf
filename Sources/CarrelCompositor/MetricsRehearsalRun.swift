import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// `carrel metrics-rehearse`: many seats' `carrel.prom` files written by
/// Carrel's own writer (`MetricsTextfile`) from a script of transitions
/// read on stdin (Core's `MetricsRehearsal`), one directory per seat, so a
/// room's node-exporters, Prometheus and alert rules can be tried at scale
/// without a compositor per seat. Runs until SIGTERM or SIGINT; the files
/// are renewed every `renewal` like a running Carrel's.
public enum MetricsRehearsalRun {
    /// Applies stdin's lines as they arrive; after each read's complete
    /// lines it prints `applied N` (lines so far) on stdout. A bad line is
    /// reported with its number and the run exits 65.
    public static func run(directory: String, renewal: Duration, version: String, logger: Logger) -> Int32 {
        guard let loop = wl_event_loop_create() else {
            fputs("carrel metrics-rehearse: cannot create an event loop\n", stderr)
            return 1
        }
        defer { wl_event_loop_destroy(loop) }
        var seats: [String: (seat: MetricsRehearsal.Seat, file: MetricsTextfile?)] = [:]
        var pending: [UInt8] = []
        var lineNumber = 0
        var status: Int32?

        func apply(_ text: Substring) {
            lineNumber += 1
            guard let parsed = MetricsRehearsal.parse(text) else { return }
            do throws(ControlFailure) {
                let (name, step) = try parsed.get()
                var entry = seats[name] ?? (MetricsRehearsal.Seat(metrics: SeatMetrics(version: version, unixNow: Server.unixNow(), auditChainOK: true)), nil)
                if entry.file == nil {
                    guard seats[name] == nil else { throw ControlFailure(.wrongState, "\(name) was stopped") }
                    let path = directory + "/" + name
                    if mkdir(path, 0o755) != 0 && errno != EEXIST {
                        throw ControlFailure(.unavailable, "cannot create \(path): \(SystemError.current)")
                    }
                    entry.file = MetricsTextfile(directory: path, metrics: entry.seat.metrics, loop: loop, logger: logger, renewal: renewal)
                }
                try entry.seat.apply(step, now: AuditLog.monotonic(), unixNow: Server.unixNow())
                let metrics = entry.seat.metrics
                entry.file?.update { $0 = metrics }
                if step == .stop {
                    entry.file?.close()
                    entry.file = nil
                }
                seats[name] = entry
            } catch {
                fputs("carrel metrics-rehearse: line \(lineNumber): \(error.message)\n", stderr)
                status = 65
            }
        }

        var inputEnded = false
        let input = EventLoopFDSource(loop: loop, fd: STDIN_FILENO) { _ in
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { return }
            if n <= 0 {
                // The end of the script: a last line without a newline counts too;
                // the seats go on renewing their files.
                if !pending.isEmpty, status == nil {
                    apply(Substring(decoding: pending, as: UTF8.self))
                    pending = []
                    print("applied \(lineNumber)")
                    fflush(stdout)
                }
                inputEnded = true
                return
            }
            pending += buffer[..<n]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")), status == nil {
                apply(Substring(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            print("applied \(lineNumber)")
            fflush(stdout)
        }
        // libwayland blocks these and reads them from a signalfd.
        var stopping = false
        let signals = [SIGTERM, SIGINT].compactMap { signal in
            EventLoopSignal(loop: loop, signal: signal) { _ in stopping = true }
        }
        while !stopping && status == nil {
            if wl_event_loop_dispatch(loop, -1) < 0 && errno != EINTR { break }
            // At its end stdin stays readable: stop watching it.
            if inputEnded { input?.cancel() }
        }
        input?.cancel()
        signals.forEach { $0.cancel() }
        for entry in seats.values { entry.file?.close() }
        return status ?? 0
    }
}
