import CarrelAudit
import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// Who an audit record is about: a client's identity for Core, its role and pid.
struct AuditSubject {
    var client: ClientID
    /// A Wayland client's role, or "admin" for a carrelctl caller.
    var role: String
    var pid: Int32
}

/// The audit log file: one JSON line per event, chained by hash
/// (CarrelAudit), appended with O_APPEND. A record of a session transition
/// is on disk (fdatasync) before the client is told; blocked attempts are
/// throttled per client and kind (Core's `AuditThrottle`) into summaries
/// that keep the count. A write that fails makes `problem` non-nil: every
/// later begin fails on the audit-log precondition until Carrel restarts.
final class AuditLog {
    let path: String
    /// Which start of Carrel this is: the records' `run`.
    let run: String
    private var fd: Int32
    private var chain: AuditChain
    private var throttle = AuditThrottle(burst: 5, window: .seconds(10))
    /// Writes the summaries whose window closed while nothing else was recorded.
    private var timer: EventLoopTimer?
    private let logger: Logger
    /// Why the log can no longer be trusted to hold everything, if so.
    private(set) var problem: String?
    /// Whether the chain of what the file held when Carrel opened it
    /// verified (an empty or new file does); false for a broken chain or a
    /// file too large or unreadable; nil while it is still being checked.
    private(set) var chainVerifiedAtStart: Bool?
    /// Told once, on the loop, when `chainVerifiedAtStart` is known.
    var chainChecked: (() -> Void)?
    /// Reads and walks the file's chain off the loop (see `checkChain`).
    private var chainCheck: BackgroundJob<ChainCheck>?

    /// Logs beyond this are not read through at start (their chain counts as unverified).
    static let verifyLimit = 64 * 1024 * 1024

    /// Opens (creating it and its directory, mode 0750, when missing) the log
    /// at `path` and resumes its chain. Throws with what to do when it cannot.
    init(path: String, loop: OpaquePointer, logger: Logger) throws {
        self.path = path
        self.logger = logger
        var bytes = [UInt8](repeating: 0, count: 8)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
        run = bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        try Self.makeDirectory(of: path)
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            throw CompositorError.configuration("cannot open the audit log \(path): \(SystemError.current); set [audit] path in the policy (or --audit-log PATH) to a file Carrel may write")
        }
        // What the chain check reads is fixed before Carrel writes anything.
        let existing = Self.openForChainCheck(path)
        let (last, torn) = Self.tail(of: path)
        chain = AuditChain(resumingAfter: last.map { Substring($0) })
        if torn {
            // The last line was cut short (a crash of the machine mid-write):
            // start the next record on its own line; verify shows the torn one.
            logger.warning("audit: \(path) ends inside a record (the machine stopped while it was written); continuing on a new line")
            _ = writeAll(Array("\n".utf8))
        }
        timer = EventLoopTimer(loop: loop) { [unowned self] in summariseExpired() }
        checkChain(existing, loop: loop)
    }

    deinit {
        chainCheck?.cancel()
        timer?.cancel()
        if fd >= 0 { Glibc.close(fd) }
    }

    /// The chain's head: the hash of the last line.
    var head: String { chain.head }
    var seq: UInt64 { chain.seq }

    // MARK: - Recording

    /// Where each record also goes, as a journal entry (nil: nowhere).
    var journal: JournalForwarder?

    /// Set by `close`: nothing more is written.
    private var closed = false

    /// Appends one record; `sync`: on disk before this returns.
    func record(_ event: String, session: SessionID? = nil, subject: AuditSubject? = nil, reason: String? = nil,
                kind: String? = nil, detail: String? = nil, count: UInt64? = nil, actor: String? = nil,
                sync: Bool = false) {
        let record = AuditRecord(time: Self.wallClock(), run: run, event: event, session: session?.raw,
                                 role: subject?.role, pid: subject.map(\.pid), reason: reason, kind: kind,
                                 detail: detail, count: count, actor: actor)
        let line = chain.append(record)
        guard writeAll(Array((line + "\n").utf8)) else { return }
        if sync && fdatasync(fd) != 0 {
            fail("cannot flush the audit log \(path) to disk: \(SystemError.current)")
        }
        if let journal {
            var written = record
            written.seq = chain.seq
            journal.forward(written, hash: chain.head)
        }
    }

    /// A session transition, as its client is about to hear it: pending
    /// summaries first (so the story keeps its order), then the record, on disk.
    func transition(_ event: String, session: SessionID, subject: AuditSubject?, reason: String? = nil, detail: String? = nil) {
        summariseAll(session: session)
        record(event, session: session, subject: subject, reason: reason, detail: detail, sync: true)
    }

    /// A blocked attempt: in full, or counted into a later summary.
    func blocked(_ kind: String, subject: AuditSubject?, session: SessionID?, detail: String) {
        let key = AuditThrottle.Key(client: subject?.client ?? ClientID(0), kind: kind)
        let (decision, closed) = throttle.admit(key, now: Self.monotonic())
        if let closed { summarise([closed], session: session) }
        switch decision {
        case .record:
            record(AuditEvent.blocked, session: session, subject: subject, kind: kind, detail: detail)
        case .suppress:
            armTimer()
        }
    }

    /// The client went: its counts are written now.
    func clientGone(_ subject: AuditSubject, session: SessionID?) {
        summarise(throttle.flush(client: subject.client), session: session, subject: subject)
    }

    /// Carrel is stopping: every count, then `stopped`, on disk.
    func close(detail: String) {
        guard !closed else { return }
        summariseAll(session: nil)
        record(AuditEvent.stopped, detail: detail, sync: true)
        journal?.close()
        closed = true
        timer?.cancel()
        timer = nil
        // A check still walking a long log is dropped (its thread ends with the process).
        chainCheck?.cancel()
        logger.notice("audit: \(path) closed at seq \(chain.seq), chain head \(chain.head)")
    }

    // MARK: - Summaries

    /// Who each summary's client was, by its ClientID (set by the server).
    var subjectOf: (ClientID) -> AuditSubject? = { _ in nil }
    /// The session live now, for summaries written by the timer.
    var liveSession: () -> SessionID? = { nil }

    private func summariseAll(session: SessionID?) {
        summarise(throttle.flush(), session: session)
    }

    private func summariseExpired() {
        summarise(throttle.expired(now: Self.monotonic()), session: liveSession())
        armTimer()
    }

    private func summarise(_ summaries: [AuditThrottle.Summary], session: SessionID?, subject known: AuditSubject? = nil) {
        for summary in summaries {
            // The client may have gone: then the summary names no one.
            let subject = known ?? subjectOf(summary.key.client)
            record(AuditEvent.blockedSummary, session: session, subject: subject, kind: summary.key.kind,
                   detail: summary.detail, count: summary.suppressed)
        }
    }

    private func armTimer() {
        guard let timer else { return }
        guard let deadline = throttle.nextDeadline else {
            timer.disarm()
            return
        }
        let now = Self.monotonic()
        // Rounded up: a timer that fires early would find nothing expired yet.
        let ms = deadline > now ? (deadline.nanoseconds - now.nanoseconds + 999_999) / 1_000_000 : 1
        timer.arm(after: .milliseconds(Int64(clamping: max(1, ms))))
    }

    // MARK: - File

    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                fail("cannot write the audit log \(path): \(SystemError.current)")
                return false
            }
            offset += n
        }
        return true
    }

    private func fail(_ message: String) {
        if problem == nil {
            logger.error("audit: \(message); sessions cannot begin until this is fixed and Carrel restarted")
        }
        problem = message + " (records may be missing; fix it and restart Carrel)"
    }

    private static func makeDirectory(of path: String) throws {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        var built = ""
        for part in directory.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o750) != 0 && errno != EEXIST {
                throw CompositorError.configuration("cannot create the audit log's directory \(built): \(SystemError.current); create it, or set [audit] path (or --audit-log PATH) to a file Carrel may write")
            }
        }
    }

    /// What checking the chain found: the walk's report, or why the file could not be read through.
    typealias ChainCheck = Result<AuditVerifier.Report, FileReadError>

    /// A descriptor and the length to read through it: what the file holds
    /// before Carrel appends, so the check never meets a line being written.
    private static func openForChainCheck(_ path: String) -> Result<(fd: Int32, length: Int), FileReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(FileReadError(SystemError.current)) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let why = SystemError.current
            Glibc.close(fd)
            return .failure(FileReadError(why))
        }
        guard info.st_size <= Self.verifyLimit else {
            Glibc.close(fd)
            return .failure(FileReadError(BoundedFile.Failure.tooLarge(limit: Self.verifyLimit).description))
        }
        return .success((fd, Int(info.st_size)))
    }

    /// Verifies the chain, as `carrelctl audit verify` does, on a thread: a
    /// log of months must hold up neither the socket nor the app, nor be
    /// held in memory whole. A break is logged; the metrics show the outcome
    /// once it is known.
    private func checkChain(_ existing: Result<(fd: Int32, length: Int), FileReadError>, loop: OpaquePointer) {
        let reader: Int32, length: Int
        switch existing {
        case .failure(let why): return chainCheckDone(.failure(why))
        case .success(let opened): (reader, length) = opened
        }
        guard length > 0 else {
            // A new or empty log: nothing to walk, no thread for it.
            Glibc.close(reader)
            return chainCheckDone(.success(AuditVerifier.verify("")))
        }
        let walk: @Sendable () -> ChainCheck = {
            defer { Glibc.close(reader) }
            return AuditVerifier.verify(fileDescriptor: reader, length: length)
        }
        chainCheck = BackgroundJob(loop: loop, work: walk) { [unowned self] check in chainCheckDone(check) }
        if chainCheck == nil { chainCheckDone(walk()) }
    }

    private func chainCheckDone(_ check: ChainCheck) {
        switch check {
        case .success(let report):
            if let broken = report.broken {
                logger.warning("audit: \(path) does not verify at line \(broken.line): \(broken.reason); `carrelctl audit verify` shows it")
            } else {
                logger.info("audit: \(path) verified: \(report.records) records, chain head \(report.head)")
            }
            chainVerifiedAtStart = report.isIntact
        case .failure(let why):
            logger.warning("audit: could not verify \(path) at start (\(why)); its chain is reported as unverified")
            chainVerifiedAtStart = false
        }
        chainChecked?()
    }

    /// The last complete line of the file, and whether it ends mid-line.
    private static func tail(of path: String) -> (String?, Bool) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return (nil, false) }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return (nil, false) }
        // Records are well under 64 KiB; read enough to hold the last two.
        let length = min(Int(info.st_size), 128 * 1024)
        var buffer = [UInt8](repeating: 0, count: length)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, length, off_t(info.st_size) - off_t(length)) }
        guard n == length else { return (nil, false) }
        let text = String(decoding: buffer, as: UTF8.self)
        let (line, torn) = AuditChain.lastLine(of: Substring(text))
        return (line.map(String.init), torn)
    }

    static func monotonic() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }

    /// Now, UTC, ISO 8601 with milliseconds.
    static func wallClock() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var t = tm()
        var seconds = ts.tv_sec
        gmtime_r(&seconds, &t)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(t.tm_year + 1900, 4))-\(pad(t.tm_mon + 1, 2))-\(pad(t.tm_mday, 2))T\(pad(t.tm_hour, 2)):\(pad(t.tm_min, 2)):\(pad(t.tm_sec, 2)).\(pad(Int32(ts.tv_nsec / 1_000_000), 3))Z"
    }
}
