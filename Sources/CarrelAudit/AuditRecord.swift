import FoundationEssentials

/// One line of the audit log (JSON lines): one event, when it happened, who
/// it concerned, and the hash of the line before it.
///
/// ```json
/// {"event":"began","pid":4242,"prev":"9f…","role":"app","run":"5c0e…","seq":7,"session":1,"time":"2026-11-23T10:31:02.125Z"}
/// ```
public struct AuditRecord: Codable, Sendable, Equatable {
    /// Position in the log, one more than the line before (across restarts).
    public var seq: UInt64
    /// UTC, ISO 8601 with milliseconds.
    public var time: String
    /// Which start of Carrel wrote it: session numbers restart with each run.
    public var run: String
    /// What happened: see `AuditEvent`.
    public var event: String
    public var session: UInt64?
    /// The role and pid of the client concerned (or the admin command's caller).
    public var role: String?
    public var pid: Int32?
    /// Why (a failure or interruption reason, a refusal).
    public var reason: String?
    /// Which kind of blocked attempt (`blocked`, `blocked_summary`).
    public var kind: String?
    /// Human-readable detail.
    public var detail: String?
    /// `blocked_summary`: how many attempts it stands for.
    public var count: UInt64?
    /// `admin`: the name the request gave for who asked (an SSH key's, from
    /// `carrelctl ssh-command --actor`); absent when none was given.
    public var actor: String?
    /// SHA-256 (hex) of the previous line's bytes; 64 zeros for the first.
    public var prev: String

    public init(seq: UInt64 = 0, time: String, run: String, event: String, session: UInt64? = nil,
                role: String? = nil, pid: Int32? = nil, reason: String? = nil, kind: String? = nil,
                detail: String? = nil, count: UInt64? = nil, actor: String? = nil, prev: String = "") {
        self.seq = seq
        self.time = time
        self.run = run
        self.event = event
        self.session = session
        self.role = role
        self.pid = pid
        self.reason = reason
        self.kind = kind
        self.detail = detail
        self.count = count
        self.actor = actor
        self.prev = prev
    }

    /// The record as one line of JSON (keys sorted, no newline inside).
    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        let data = try! encoder.encode(self)
        return String(decoding: data, as: UTF8.self)
    }

    /// The record in `line`, or nil if it is not one.
    public static func parse(_ line: Substring) -> AuditRecord? {
        try? JSONDecoder().decode(AuditRecord.self, from: Data(line.utf8))
    }
}

/// The events Carrel records.
public enum AuditEvent {
    /// Lifecycle, as the client hears it (flushed to disk before it does).
    public static let transitions: Set<String> = ["began", "failed", "interrupted", "ended", "updated", "update_failed"]
    public static let started = "started"
    public static let stopped = "stopped"
    public static let begin = "begin"
    public static let destroyed = "destroyed"
    public static let blocked = "blocked"
    public static let blockedSummary = "blocked_summary"
    public static let providerFailed = "provider_failed"
    public static let admin = "admin"
    /// The app of a force-ended session is being stopped (SIGTERM, SIGKILL).
    public static let appStop = "app_stop"
    /// A signed statement about the session was sent to its app.
    public static let attestation = "attestation"
}
