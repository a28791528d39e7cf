import CarrelCore
import CarrelSystem
import Glibc
import Logging

/// `carrel.prom` in node-exporter's textfile directory (`[metrics]
/// textfile_dir`): Core's `SeatMetrics` rendered, replaced atomically (a
/// temporary file in the same directory, then rename) whenever they change
/// and every 15 s, so a stale file means a seat that stopped reporting.
/// Carrel itself listens on nothing; node-exporter serves the file.
final class MetricsTextfile {
    /// The file node-exporter reads.
    let path: String
    private let directory: String
    private(set) var metrics: SeatMetrics
    /// Why the last write failed, with what to do; nil after a good write.
    private(set) var problem: String?
    private var written: SeatMetrics?
    private var timer: EventLoopTimer?
    private let logger: Logger
    /// Brings the metrics up to date before each renewal (the audit log may
    /// have failed a write the timer made, with no session change since).
    var refreshing: (inout SeatMetrics) -> Void = { _ in }

    /// How often the file is rewritten even when nothing changed.
    static let refresh: Duration = .seconds(15)
    static let fileName = "carrel.prom"

    /// `renewal`: how often the file is rewritten unchanged (`refresh`,
    /// shorter only for a rehearsal against shortened alert rules).
    init(directory: String, metrics: SeatMetrics, loop: OpaquePointer, logger: Logger, renewal: Duration = refresh) {
        self.directory = directory
        path = directory + "/" + Self.fileName
        self.metrics = metrics
        self.logger = logger
        timer = EventLoopTimer(loop: loop) { [unowned self] in
            refreshing(&self.metrics)
            write()
            timer?.arm(after: renewal)
        }
        write()
        timer?.arm(after: renewal)
    }

    deinit { timer?.cancel() }

    /// Changes the metrics; the file follows at once when they changed.
    func update(_ change: (inout SeatMetrics) -> Void) {
        change(&metrics)
        if metrics != written { write() }
    }

    /// The last state, written once more; no more refreshes (the file goes
    /// stale, which is how the room's alerts see a seat that stopped).
    func close() {
        timer?.cancel()
        timer = nil
        write()
    }

    private func write() {
        let text = metrics.exposition
        if let failure = replace(with: Array(text.utf8)) {
            if problem == nil {
                logger.error("metrics: cannot write \(path): \(failure); expected a directory Carrel may write (node-exporter's --collector.textfile.directory); the seat goes on without metrics — fix the directory or [metrics] textfile_dir, Carrel retries every \(Self.refresh.components.seconds) s")
            }
            problem = "cannot write \(path): \(failure); make the directory writable for Carrel or change [metrics] textfile_dir"
            written = nil
            return
        }
        if problem != nil {
            logger.notice("metrics: \(path) written again")
            problem = nil
        }
        written = metrics
    }

    /// Writes `bytes` to a temporary file beside `path` and renames it over
    /// `path`: node-exporter never reads half a file. Returns what failed.
    private func replace(with bytes: [UInt8]) -> String? {
        // Not ending in .prom: node-exporter ignores it if Carrel dies mid-write.
        var template = Array((directory + "/." + Self.fileName + ".XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return "creating a temporary file there failed: \(SystemError.current)" }
        // Children Carrel starts (the app, participants) must not inherit it.
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let temporary = String(cString: template)
        var failure: String?
        // node-exporter runs as its own user: the file must be readable by others.
        if fchmod(fd, 0o644) != 0 { failure = "fchmod failed: \(SystemError.current)" }
        var offset = 0
        while failure == nil && offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = "writing failed: \(SystemError.current)"
            } else {
                offset += n
            }
        }
        if Glibc.close(fd) != 0 && failure == nil { failure = "closing failed: \(SystemError.current)" }
        if failure == nil && rename(temporary, path) != 0 { failure = "renaming into place failed: \(SystemError.current)" }
        if failure != nil { unlink(temporary) }
        return failure
    }
}
