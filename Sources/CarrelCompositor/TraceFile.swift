import CarrelCore
import CarrelSystem
import Glibc

/// `--trace FILE`: one JSON object a line for every effect the Desk decides
/// (`Desk.trace`) and every decision the compositor makes on its own (a
/// popup grab ended, a connection refused, strays ended), each with the
/// milliseconds since Carrel started. Opened for appending at start; a write
/// that fails is dropped (the trace must never stop the compositor). What
/// integration tests assert on, instead of log lines.
final class TraceFile {
    private let fd: Int32
    private let started = monotonicSeconds()

    init(path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CompositorError.configuration("--trace \(path): cannot open it for writing: \(SystemError.current); give a writable path") }
    }

    deinit { close(fd) }

    /// Writes `object` with `ms` (milliseconds since start) added.
    func write(_ object: CanonicalJSON) {
        guard case .object(var fields) = object else { return }
        fields["ms"] = .integer(Int64((monotonicSeconds() - started) * 1000))
        let line = Array((CanonicalJSON.object(fields).text + "\n").utf8)
        _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// A decision of the compositor's own: `event` and its fields.
    func event(_ event: String, _ fields: [String: CanonicalJSON] = [:]) {
        var all = fields
        all["event"] = .string(event)
        write(.object(all))
    }
}
