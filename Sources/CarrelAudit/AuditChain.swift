import Crypto
import FoundationEssentials

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

    public static func verify(_ text: Substring) -> Report {
        var report = Report(records: 0, head: AuditChain.genesis, broken: nil, continuesEarlierLog: false)
        var previous: (line: Substring, record: AuditRecord)?
        var number = 0
        var headBeforePrevious = AuditChain.genesis
        var rest = text[...]
        while !rest.isEmpty {
            number += 1
            guard let newline = rest.firstIndex(of: "\n") else {
                report.broken = Broken(line: number, reason: "incomplete: the file ends inside this line (Carrel stopped while writing it, or the file was cut)")
                return report
            }
            let line = rest[..<newline]
            rest = rest[rest.index(after: newline)...]
            guard let record = AuditRecord.parse(line) else {
                report.broken = Broken(line: number, reason: "not a valid audit record (not JSON, or a field is missing or of the wrong type)")
                return report
            }
            if let previous {
                if record.seq != previous.record.seq &+ 1 {
                    report.broken = Broken(line: number, reason: "seq jumps from \(previous.record.seq) to \(record.seq): records were removed or inserted before this line")
                    return report
                }
                if record.prev != AuditChain.hash(previous.line) {
                    // The previous line is the one that cannot be trusted.
                    report.records -= 1
                    report.head = headBeforePrevious
                    report.broken = Broken(line: number - 1, reason: "changed after it was written: line \(number) carries a hash of it that no longer matches")
                    return report
                }
            } else if record.prev != AuditChain.genesis {
                report.continuesEarlierLog = true
            }
            report.records += 1
            headBeforePrevious = report.head
            report.head = AuditChain.hash(line)
            previous = (line, record)
        }
        return report
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
