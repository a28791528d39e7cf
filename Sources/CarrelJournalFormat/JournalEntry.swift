/// One audit record as an entry of the systemd journal: the record's facts
/// as structured fields (`CARREL_EVENT`, `CARREL_SESSION`, ...), a
/// `MESSAGE_ID` per kind of event that `dist/journal/carrel.catalog`
/// explains (`journalctl -x`), and a one-line `MESSAGE`. Encoded for
/// journald's native socket or in the journal export format that
/// `systemd-journal-remote` reads.
public struct JournalEntry: Sendable {
    /// Field names and values in order; every name is upper case ASCII.
    public private(set) var fields: [(name: String, value: String)]

    /// The journal's view of one audit record: `seq` and `hash` (the SHA-256
    /// of its line, the next record's `prev`) tie the entry to the log's chain.
    public init(event: String, session: UInt64?, cause: String?, kind: String?, count: UInt64?,
                actor: String?, seq: UInt64, hash: String, role: String? = nil, pid: Int32? = nil,
                detail: String? = nil, run: String? = nil) {
        var message = "carrel: \(event)"
        if let session { message += " session \(session)" }
        if let cause { message += " (\(cause))" }
        if let kind { message += " \(kind)" }
        if let count { message += " ×\(count)" }
        if let role { message += " by \(role)" + (pid.map { " pid \($0)" } ?? "") }
        if let actor { message += " as \(actor)" }
        if let detail, !detail.isEmpty { message += ": \(detail)" }
        fields = [("MESSAGE", Self.oneLine(message)),
                  ("MESSAGE_ID", Self.messageID(for: event)),
                  ("PRIORITY", String(Self.priority(for: event, cause: cause))),
                  ("SYSLOG_IDENTIFIER", "carrel"),
                  ("CARREL_EVENT", event)]
        if let session { fields.append(("CARREL_SESSION", String(session))) }
        if let cause { fields.append(("CARREL_CAUSE", cause)) }
        if let kind { fields.append(("CARREL_KIND", kind)) }
        if let count { fields.append(("CARREL_COUNT", String(count))) }
        if let actor { fields.append(("CARREL_ACTOR", actor)) }
        if let run { fields.append(("CARREL_RUN", run)) }
        fields.append(("CARREL_AUDIT_SEQ", String(seq)))
        fields.append(("CARREL_AUDIT_HASH", hash))
    }

    /// The entry that stands for audit records the journal was not sent one
    /// by one (CarrelCore's `JournalPace` holds them back): how many, of
    /// which kinds (`byKind`: count by `CARREL_KIND`), their sequence numbers,
    /// and the window they were held in as log lines show it ("10.000s"), so
    /// the journal still accounts for every record.
    public init(coalescedByKind byKind: [String: UInt64], seqs: [UInt64], window: String, run: String? = nil) {
        let kinds = byKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let ranges = Self.ranges(seqs)
        fields = [("MESSAGE", "carrel: \(seqs.count) audit records in the last \(window) sent to the journal as this one (\(kinds)); each is in the audit log, seq \(ranges)"),
                  ("MESSAGE_ID", Self.messageID(for: Self.coalescedEvent)),
                  ("PRIORITY", "4"),
                  ("SYSLOG_IDENTIFIER", "carrel"),
                  ("CARREL_EVENT", Self.coalescedEvent),
                  ("CARREL_COUNT", String(seqs.count)),
                  ("CARREL_KIND", byKind.keys.sorted().joined(separator: ","))]
        if let run { fields.append(("CARREL_RUN", run)) }
        fields.append(("CARREL_AUDIT_SEQ_RANGES", ranges))
    }

    /// `CARREL_EVENT` of a coalesced entry.
    public static let coalescedEvent = "journal_coalesced"

    /// The value of field `name`, if the entry has it.
    public subscript(name: String) -> String? { fields.first { $0.name == name }?.value }

    // MARK: - Message ids

    /// One id per kind of event; `dist/journal/carrel.catalog` has an entry
    /// for each, and an unknown event gets `otherMessageID`.
    public static let messageIDs: [String: String] = [
        "started": "10d4059da1a14d1695f953f0f3819e4b",
        "stopped": "f87c57837f794e61be2c3f8362a64017",
        "begin": "f1bc567728bd4d42af0e5e883a6ab35e",
        "preconditions": "c34e14b776614f8ab1a8a51482069884",
        "restrictions_applied": "5126c865922d408e8b98f03ab167322f",
        "began": "c04a2916d57a45f5a085d754a67b65cd",
        "failed": "609dc0f7858347b7a3608f5ecd4a269c",
        "interrupted": "ca136980efc24dfdbdd117283314eb7a",
        "updated": "fe4e5e2097d6470ca6f66c11e5def926",
        "update_failed": "a83ef195b6d64813b2b121d9fb62de11",
        "ended": "fd284dcec08648dbaf1b2f419206ff48",
        "destroyed": "d4ed7005c2f8404db782d75d2d04b461",
        "restrictions_reverted": "fc6906a7685d486c877441982b65d274",
        "blocked": "12f4b95372cb4d0781bb05c4c11aadeb",
        "blocked_summary": "f795c585acab4137b445d0cc7a8209cc",
        "provider_failed": "083955e558454952a8c270b0f5fa93ae",
        "admin": "ee72d3d749804f2993aa282425bb9570",
        "app_stop": "c766da4982a64e18921708f217f38166",
        "attestation": "6388ea7734534aabadd1a264b32b7c62",
        "magnifier_unavailable": "a9ee5c3efe8a40a3894ee49f4b47775e",
        "participant_unavailable": "7dd894a84a6a4176900bf08c425ddc25",
        coalescedEvent: "67087e59323e4605b64c62387ea10554",
    ]
    public static let otherMessageID = "be75e8d98c534ec283140f5d142d64d7"

    public static func messageID(for event: String) -> String { messageIDs[event] ?? otherMessageID }

    /// syslog priorities: what needs a person is a warning or worse.
    static func priority(for event: String, cause: String?) -> Int {
        switch event {
        case "interrupted": return cause == "time_limit" || cause == "shutdown" ? 5 : 4
        case "failed", "update_failed", "blocked", "blocked_summary", "provider_failed", "magnifier_unavailable",
             "participant_unavailable": return 4
        case "preconditions": return cause == "unmet" ? 4 : 6
        default: return 6
        }
    }

    // MARK: - Encoding

    /// A datagram for journald's native socket (`/run/systemd/journal/socket`):
    /// `NAME=value` lines, and the length-prefixed form for a value with a newline.
    public var nativeDatagram: [UInt8] {
        var out: [UInt8] = []
        for (name, value) in fields { Self.append(name, value, to: &out) }
        return out
    }

    /// The entry in the journal export format (`systemd-journal-remote -`
    /// reads it): the fields, the time it was made, and an empty line.
    public func exportEntry(realtimeMicroseconds: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        Self.append("__REALTIME_TIMESTAMP", String(realtimeMicroseconds), to: &out)
        for (name, value) in fields { Self.append(name, value, to: &out) }
        out.append(UInt8(ascii: "\n"))
        return out
    }

    private static func append(_ name: String, _ value: String, to out: inout [UInt8]) {
        out += Array(name.utf8)
        if value.utf8.contains(UInt8(ascii: "\n")) {
            out.append(UInt8(ascii: "\n"))
            var length = UInt64(value.utf8.count).littleEndian
            withUnsafeBytes(of: &length) { out += $0 }
            out += Array(value.utf8)
        } else {
            out.append(UInt8(ascii: "="))
            out += Array(value.utf8)
        }
        out.append(UInt8(ascii: "\n"))
    }

    private static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
    }

    /// Sequence numbers as sorted ranges: 3-5,9.
    static func ranges(_ seqs: [UInt64]) -> String {
        var runs: [(first: UInt64, last: UInt64)] = []
        for seq in seqs.sorted() {
            if let run = runs.last, seq == run.last + 1 {
                runs[runs.count - 1].last = seq
            } else {
                runs.append((seq, seq))
            }
        }
        return runs.map { $0.first == $0.last ? "\($0.first)" : "\($0.first)-\($0.last)" }.joined(separator: ",")
    }
}
