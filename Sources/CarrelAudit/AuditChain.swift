import Crypto
import FoundationEssentials
import Glibc

/// The hash chain: each line carries the SHA-256 of the line before it, so
/// changing, removing or inserting a line breaks the chain at that point.
///
/// ```swift
/// var chain = AuditChain(resumingAfter: lastLineOfTheFile)  // nil: a new log
/// let line = chain.append(record)   // seq and prev filled in; write line + "\n"
/// ```
public struct AuditChain: Sendable {
    public static let genesis = String(repeating: "0", count: 64)

    /// The seq of the last line (0: none yet).
    public private(set) var seq: UInt64
    /// The hash of the last line: the chain's head, what the next line carries.
    public private(set) var head: String

    /// Continues after `lastLine` (the last complete line of an existing log),
    /// or starts a new chain. A last line that is not a record (a torn write)
    /// still chains: verifying shows it as broken, which it is.
    public init(resumingAfter lastLine: Substring?) {
        guard let lastLine else {
            seq = 0
            head = Self.genesis
            return
        }
        seq = AuditRecord.parse(lastLine)?.seq ?? 0
        head = Self.hash(lastLine)
    }

    /// `record` as the next line (without the newline), chained.
    public mutating func append(_ record: AuditRecord) -> String {
        var record = record
        seq += 1
        record.seq = seq
        record.prev = head
        let line = record.jsonLine()
        head = Self.hash(Substring(line))
        return line
    }

    /// SHA-256 of the line's UTF-8 bytes, lower-case hex.
    public static func hash(_ line: Substring) -> String {
        SHA256.hash(data: Array(line.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The last complete line of a log's text (nil if it has none), and
    /// whether the text ends in the middle of a line (a torn write).
    public static func lastLine(of text: Substring) -> (line: Substring?, torn: Bool) {
        let torn = !text.isEmpty && !text.hasSuffix("\n")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        return (lines.last, torn)
    }
}

/// `carrelctl audit verify`: walks the chain and names the first line that
/// cannot be trusted.
public enum AuditVerifier {
    public struct Report: Sendable, Equatable {
        /// Lines that verified, in order, before the first broken one.
        public var records: Int
        /// The hash of the last line verified: compare with the head Carrel logged at
        /// the end of each session to see that nothing was cut off the end.
        public var head: String
        /// The first line that breaks the chain, if any.
        public var broken: Broken?
        /// The first line continues an earlier file (its prev is not zeros).
        public var continuesEarlierLog: Bool
        public var isIntact: Bool { broken == nil }

        /// The report as one JSON object (`carrelctl audit verify --json`).
        public func jsonLine() -> String {
            struct Wire: Encodable {
                var ok: Bool, records: Int, head: String, continues_earlier_log: Bool
                var broken_line: Int?, reason: String?
            }
            let wire = Wire(ok: isIntact, records: records, head: head, continues_earlier_log: continuesEarlierLog,
                            broken_line: broken?.line, reason: broken?.reason)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // Strings and integers: encoding cannot fail.
            return String(decoding: try! encoder.encode(wire), as: UTF8.self)
        }
    }

    public struct Broken: Sendable, Equatable {
        /// 1-based line number in the file.
        public var line: Int
        public var reason: String
    }

    /// The whole of `text` walked at once.
    public static func verify(_ text: Substring) -> Report {
        var walk = Walk()
        walk.feed(text.utf8)
        return walk.finish()
    }

    /// The chain of what `fd` holds from its first byte, walked as it is
    /// read 64 KiB at a time: up to `length` bytes (what the file held at
    /// one moment, however it grows while it is read), or to its end.
    public static func verify(fileDescriptor fd: Int32, length: Int? = nil) -> Result<Report, FileReadError> {
        var walk = Walk()
        return FilePieces.read(fd, length: length) { piece in
            walk.feed(piece)
            return !walk.isBroken
        }.map { walk.finish() }
    }

    /// The chain walked a piece at a time, as the file is read: what is held
    /// between pieces is the unfinished line and the last record's seq and
    /// hash, so a log of any size is verified in the memory of its longest
    /// line. The pieces may split the file anywhere.
    ///
    /// ```swift
    /// var walk = AuditVerifier.Walk()
    /// while let piece = read(), !walk.isBroken { walk.feed(piece) }
    /// let report = walk.finish()
    /// ```
    public struct Walk: Sendable {
        /// Longer than this without a newline is not a record Carrel wrote
        /// (its records are well under 64 KiB); the walk stops there rather
        /// than hold the rest of the file.
        public static let longestLine = 1 << 20

        private var report = Report(records: 0, head: AuditChain.genesis, broken: nil, continuesEarlierLog: false)
        /// The last verified record's seq, and the head before it (what the
        /// report falls back to if the next line shows it was changed).
        private var previousSeq: UInt64?
        private var headBeforePrevious = AuditChain.genesis
        /// Lines seen, the unfinished one not counted.
        private var number = 0
        private var unfinished: [UInt8] = []

        public init() {}

        /// A break was found: nothing more can change the report.
        public var isBroken: Bool { report.broken != nil }

        /// The next bytes of the file.
        public mutating func feed(_ bytes: some Collection<UInt8>) {
            var rest = bytes[...]
            while !isBroken, let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
                if unfinished.isEmpty {
                    take(line: rest[..<newline])
                } else {
                    unfinished += rest[..<newline]
                    take(line: unfinished)
                    unfinished.removeAll(keepingCapacity: true)
                }
                rest = rest[rest.index(after: newline)...]
            }
            guard !isBroken else { return }
            unfinished += rest
            if unfinished.count > Self.longestLine {
                report.broken = Broken(line: number + 1, reason: "longer than \(Self.longestLine) bytes without a line break: not an audit record")
                unfinished = []
            }
        }

        /// The report, once the whole file was fed.
        public mutating func finish() -> Report {
            if !isBroken, !unfinished.isEmpty {
                report.broken = Broken(line: number + 1, reason: "incomplete: the file ends inside this line (Carrel stopped while writing it, or the file was cut)")
            }
            return report
        }

        private mutating func take(line bytes: some Collection<UInt8>) {
            number += 1
            let line = String(decoding: bytes, as: UTF8.self)[...]
            guard let record = AuditRecord.parse(line) else {
                report.broken = Broken(line: number, reason: "not a valid audit record (not JSON, or a field is missing or of the wrong type)")
                return
            }
            if let previousSeq {
                if record.seq != previousSeq &+ 1 {
                    report.broken = Broken(line: number, reason: "seq jumps from \(previousSeq) to \(record.seq): records were removed or inserted before this line")
                    return
                }
                if record.prev != report.head {
                    // The previous line is the one that cannot be trusted.
                    report.records -= 1
                    report.head = headBeforePrevious
                    report.broken = Broken(line: number - 1, reason: "changed after it was written: line \(number) carries a hash of it that no longer matches")
                    return
                }
            } else if record.prev != AuditChain.genesis {
                report.continuesEarlierLog = true
            }
            report.records += 1
            headBeforePrevious = report.head
            report.head = AuditChain.hash(line)
            previousSeq = record.seq
        }
    }
}

/// `carrelctl audit show --session ID`: one session's records.
public enum AuditStory {
    /// The records of session `session` in run `run` (nil: the last run that
    /// has that session), in order; unreadable lines are skipped (verify
    /// reports them).
    public static func records(in text: Substring, session: UInt64, run: String? = nil) -> [AuditRecord] {
        let all = text.split(separator: "\n").compactMap(AuditRecord.parse)
        let chosenRun = run ?? all.last(where: { $0.session == session })?.run
        guard let chosenRun else { return [] }
        return all.filter { $0.run == chosenRun && $0.session == session }
    }

    /// One line for a person: time, event, who, why.
    public static func describe(_ r: AuditRecord) -> String {
        var parts = [r.time, r.event]
        if let kind = r.kind { parts.append(kind) }
        if let count = r.count { parts.append("×\(count)") }
        if let role = r.role { parts.append("role=\(role)") }
        if let pid = r.pid { parts.append("pid=\(pid)") }
        if let reason = r.reason { parts.append("reason=\(reason)") }
        if let actor = r.actor { parts.append("actor=\(actor)") }
        if let detail = r.detail { parts.append("— \(detail)") }
        return parts.joined(separator: " ")
    }
}
