import CarrelAudit
import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// Every audit record also goes to the systemd journal, as structured fields
/// (Core's `JournalEntry`), paced by Core's `JournalPace` so a flood of
/// blocked attempts never meets journald's rate limit. Two ways out, either
/// or both:
///
/// - journald's native socket (`/run/systemd/journal/socket` when it exists,
///   or `--journal-socket PATH`, e.g. a journald namespace's), one datagram
///   an entry, never blocking: what journald cannot take yet waits in order.
/// - `--journal-export PATH`: the journal export format, for
///   `systemd-journal-remote` reading a FIFO (or a file that grows). While
///   no reader has the FIFO open, entries wait in order (up to
///   `backlogLimit`) and go when one opens it again; the FIFO stays open
///   meanwhile, so what the last reader had not read waits in the pipe too,
///   and the receiver's journal has every sequence number across its restart.
final class JournalForwarder {
    private let socketPath: String?
    private let exportPath: String?
    private let run: String
    private let logger: Logger
    private var pace = JournalPace()
    private var paceTimer: EventLoopTimer?
    private var socketFD: Int32 = -1
    /// Datagrams journald has not taken yet, in order.
    private var nativeBacklog: [[UInt8]] = []
    private var nativeTimer: EventLoopTimer?
    /// Datagrams dropped because the backlog was full, not yet logged.
    private var nativeOverflowed = 0
    private var socketProblem: String?

    private var exportFD: Int32 = -1
    /// Export entries not yet written (the first may be partly written: `exportOffset`).
    private var backlog: [[UInt8]] = []
    private var exportOffset = 0
    private var exportTimer: EventLoopTimer?
    private var exportProblem: String?
    /// Entries dropped because the backlog was full, not yet logged.
    private var overflowed = 0

    /// Entries kept for an absent export reader or a journald that does not take them.
    static let backlogLimit = 10_000
    /// How often a missing export reader or journald is looked for.
    static let exportRetry: Duration = .milliseconds(500)
    static let defaultSocket = "/run/systemd/journal/socket"

    /// nil when there is nowhere to send: no socket given and journald's
    /// absent, and no export path.
    init?(socketPath: String?, exportPath: String?, run: String, loop: OpaquePointer, logger: Logger) {
        let socket = socketPath ?? (access(Self.defaultSocket, W_OK) == 0 ? Self.defaultSocket : nil)
        guard socket != nil || exportPath != nil else { return nil }
        self.socketPath = socket
        self.exportPath = exportPath
        self.run = run
        self.logger = logger
        paceTimer = EventLoopTimer(loop: loop) { [unowned self] in
            if let summary = pace.expired(now: AuditLog.monotonic()) {
                send(JournalEntry(coalesced: summary, run: run))
            } else if pace.isHolding {
                armPaceTimer()  // fired before the window's end
            }
        }
        if let socket {
            socketFD = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            if socketFD < 0 { logger.error("journal: cannot create a socket for \(socket): \(SystemError.current); audit records are not sent to the journal") }
            nativeTimer = EventLoopTimer(loop: loop) { [unowned self] in drainNative() }
        }
        if exportPath != nil {
            exportTimer = EventLoopTimer(loop: loop) { [unowned self] in
                drainExport()
                if !backlog.isEmpty { exportTimer?.arm(after: Self.exportRetry) }
            }
        }
        logger.notice("journal: audit records go to \([socket, exportPath.map { "export \($0)" }].compactMap { $0 }.joined(separator: " and "))")
    }

    deinit {
        paceTimer?.cancel()
        exportTimer?.cancel()
        nativeTimer?.cancel()
        if socketFD >= 0 { Glibc.close(socketFD) }
        if exportFD >= 0 { Glibc.close(exportFD) }
    }

    /// `record`, just appended to the audit log; `hash`: its line's SHA-256.
    func forward(_ record: AuditRecord, hash: String) {
        let (decision, closed) = pace.admit(event: record.event, kind: record.kind, seq: record.seq, now: AuditLog.monotonic())
        if let closed { send(JournalEntry(coalesced: closed, run: run)) }
        switch decision {
        case .send:
            send(JournalEntry(event: record.event, session: record.session, cause: record.reason, kind: record.kind,
                              count: record.count, actor: record.actor, seq: record.seq, hash: hash, role: record.role,
                              pid: record.pid, detail: record.detail, run: record.run))
        case .hold:
            armPaceTimer()
        }
    }

    /// The held records' summary goes when their window ends.
    private func armPaceTimer() {
        guard let end = pace.windowEnd else { return }
        let now = AuditLog.monotonic()
        // Rounded up to the next millisecond: a timer that fires early finds nothing expired.
        let ms = end > now ? (end.nanoseconds - now.nanoseconds + 999_999) / 1_000_000 : 1
        paceTimer?.arm(after: .milliseconds(Int64(clamping: max(1, ms))))
    }

    /// Carrel is stopping: what is held is sent, and the export written as far as a reader takes it.
    func close() {
        if let summary = pace.flush() { send(JournalEntry(coalesced: summary, run: run)) }
        paceTimer?.cancel()
        // journald drains its queue in milliseconds: give it up to a second.
        for _ in 0..<200 where !nativeBacklog.isEmpty && socketProblem == nil {
            drainNative()
            if !nativeBacklog.isEmpty { usleep(5000) }
        }
        if !nativeBacklog.isEmpty {
            logger.warning("journal: \(nativeBacklog.count) entries were not taken by journald at \(socketPath ?? "") before Carrel stopped; they are in the audit log")
        }
        drainExport()
        if !backlog.isEmpty {
            logger.warning("journal: \(backlog.count) entries for \(exportPath ?? "") were never read (no systemd-journal-remote reading it); they are in the audit log")
        }
    }

    private func send(_ entry: JournalEntry) {
        if socketPath != nil, socketFD >= 0 { sendNative(entry) }
        if exportPath != nil {
            if backlog.count >= Self.backlogLimit {
                overflowed += 1
            } else {
                var realtime = timespec()
                clock_gettime(CLOCK_REALTIME, &realtime)
                backlog.append(entry.exportEntry(realtimeMicroseconds: UInt64(realtime.tv_sec) * 1_000_000 + UInt64(realtime.tv_nsec / 1000)))
            }
            drainExport()
            if !backlog.isEmpty { exportTimer?.arm(after: Self.exportRetry) }
        }
    }

    private func sendNative(_ entry: JournalEntry) {
        if nativeBacklog.count >= Self.backlogLimit {
            nativeOverflowed += 1
        } else {
            nativeBacklog.append(entry.nativeDatagram)
        }
        drainNative()
    }

    /// Sends the waiting datagrams in order. journald's socket queue is short
    /// (net.unix.max_dgram_qlen, often 10): a burst meets EAGAIN, and the rest
    /// wait a few milliseconds instead of being lost; an absent journald is
    /// retried every `exportRetry`.
    private func drainNative() {
        guard let socketPath else { return }
        guard let address = UnixSocketAddress(path: socketPath) else {
            noteSocketProblem("the path is longer than \(UnixSocketAddress.maximumPathLength) bytes")
            nativeBacklog.removeAll()
            return
        }
        while let datagram = nativeBacklog.first {
            let sent = datagram.withUnsafeBytes { bytes in
                address.withSockaddr { sendto(socketFD, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, $1) }
            }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    nativeTimer?.arm(after: .milliseconds(5))
                    return
                }
                noteSocketProblem(SystemError.current)
                nativeTimer?.arm(after: Self.exportRetry)
                return
            }
            nativeBacklog.removeFirst()
            if let problem = socketProblem {
                logger.notice("journal: \(socketPath) takes entries again after: \(problem); \(nativeBacklog.count + 1) waiting entries sent")
                socketProblem = nil
            }
        }
        if nativeOverflowed > 0 {
            logger.warning("journal: \(nativeOverflowed) entries for \(socketPath) were dropped while journald did not take them (more than \(Self.backlogLimit) waiting); they are in the audit log")
            nativeOverflowed = 0
        }
    }

    private func noteSocketProblem(_ why: String) {
        guard socketProblem == nil else { return }
        socketProblem = why
        logger.warning("journal: cannot send to \(socketPath ?? ""): \(why); expected a running journald there; entries wait (up to \(Self.backlogLimit)) and are sent when it takes them, every record is in the audit log")
    }

    // MARK: - Export

    /// Writes the backlog while the reader takes it; opens the path when it is not open.
    private func drainExport() {
        guard let exportPath else { return }
        while !backlog.isEmpty {
            if exportFD < 0 {
                // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of waiting.
                exportFD = open(exportPath, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0o640)
                if exportFD < 0 {
                    noteExportProblem("cannot open it: \(SystemError.current)")
                    return
                }
            }
            let entry = backlog[0]
            let n = entry.withUnsafeBytes { write(exportFD, $0.baseAddress! + exportOffset, $0.count - exportOffset) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { return }  // the reader is behind; the timer tries again
                if errno == EPIPE {
                    // The reader went. The FIFO stays open so what it had not read
                    // yet stays in the pipe for the next reader; the timer tries again.
                    noteExportProblem("no reader (\(SystemError.current))")
                    return
                }
                noteExportProblem("writing failed: \(SystemError.current)")
                Glibc.close(exportFD)
                exportFD = -1
                exportOffset = 0
                return
            }
            if let problem = exportProblem {
                logger.notice("journal: \(exportPath) read again after: \(problem); sending \(backlog.count) waiting entries")
                exportProblem = nil
            }
            exportOffset += n
            if exportOffset == entry.count {
                backlog.removeFirst()
                exportOffset = 0
            }
        }
        if overflowed > 0 {
            logger.warning("journal: \(overflowed) entries for \(exportPath) were dropped while no reader took them (more than \(Self.backlogLimit) waiting); they are in the audit log")
            overflowed = 0
        }
    }

    private func noteExportProblem(_ why: String) {
        guard exportProblem == nil, let exportPath else { return }
        exportProblem = why
        logger.warning("journal: \(exportPath): \(why); expected systemd-journal-remote reading it; entries wait (up to \(Self.backlogLimit)) and are sent when it reads again")
    }
}
