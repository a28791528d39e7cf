/// What one seat tells the room's Prometheus, in its text exposition format
/// (version 0.0.4) for node-exporter's textfile collector: the session
/// state, when the seat entered it, the time limit's deadline, and counters
/// of blocked attempts, interruptions and sessions. The values come from
/// CarrelCore's `SeatMetrics`, which follows the seat's sessions; this is
/// the file's format only, so dashboards, alert rules and tools that read it
/// share one definition.
///
/// Every label is a closed set (states, audit kinds, interruption causes,
/// outcomes): no session id, name or free text reaches a metric, so the
/// room's time series stay few and say nothing about who sits where.
public struct SeatExposition: Sendable {
    /// The seat's state, as an invigilator's board shows it.
    public enum State: String, CaseIterable, Sendable {
        /// No session is pending or begun.
        case idle
        /// `begin` accepted; restrictions going up, waiting for `began`.
        case pending
        /// `began` sent: the exam is running.
        case active
        /// Interrupted by something that needs a person: a restriction
        /// stopped holding, an administrator, or an unknown cause.
        case interrupted
        /// Interrupted because the session is over (time limit, Carrel
        /// stopping); restrictions hold until the app ends it. Kept apart
        /// from `interrupted` so a whole room reaching its time limit raises
        /// no alert.
        case ending
    }

    /// How a session that was begun (or refused) came to an end.
    public enum Outcome: String, CaseIterable, Sendable {
        /// `ended` was sent: the app ended it.
        case ended
        /// `failed` was sent: refused at `begin`, or failed before `began`.
        case failed
        /// Its client destroyed it or disconnected while it was live.
        case destroyed
    }

    /// Carrel's version, the one free-text label (it comes from the build).
    public var version: String
    public var state: State
    /// Seconds since the Unix epoch when the seat entered `state`.
    public var stateSince: Int64
    /// Seconds since the Unix epoch when the time limit passes; nil while no limit runs.
    public var deadline: Int64?
    /// Blocked attempts by audit kind, in the order the file lists them (every kind, 0 included).
    public var blockedAttempts: [(kind: String, count: UInt64)]
    /// Interruptions by cause (the protocol's names), in the order the file lists them.
    public var interruptions: [(cause: String, count: UInt64)]
    /// Sessions by outcome; a missing outcome is 0.
    public var sessions: [Outcome: UInt64]
    /// Whether the audit log's chain verified and every write since
    /// succeeded; nil leaves the sample out (not known yet).
    public var auditChainOK: Bool?

    public init(version: String, state: State, stateSince: Int64, deadline: Int64?,
                blockedAttempts: [(kind: String, count: UInt64)], interruptions: [(cause: String, count: UInt64)],
                sessions: [Outcome: UInt64], auditChainOK: Bool?) {
        self.version = version
        self.state = state
        self.stateSince = stateSince
        self.deadline = deadline
        self.blockedAttempts = blockedAttempts
        self.interruptions = interruptions
        self.sessions = sessions
        self.auditChainOK = auditChainOK
    }

    /// The file node-exporter serves, every series present from the start
    /// so that `increase()` sees the first attempt.
    public var text: String {
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        family("carrel_build_info", "gauge", "Carrel's version on this seat; always 1.",
               [("{version=\"\(Self.escaped(version))\"}", "1")])
        family("carrel_session_state", "gauge", "The seat's session state: 1 for the current state, 0 for the others.",
               State.allCases.map { ("{state=\"\($0.rawValue)\"}", $0 == state ? "1" : "0") })
        family("carrel_session_state_since_seconds", "gauge", "When the seat entered its current state, in seconds since the Unix epoch.",
               [("", String(stateSince))])
        family("carrel_session_deadline_seconds", "gauge", "When the session's time limit passes, in seconds since the Unix epoch; 0 when no time limit runs.",
               [("", String(deadline ?? 0))])
        family("carrel_blocked_attempts_total", "counter", "Attempts to get around a session's restrictions that Carrel blocked, by kind.",
               blockedAttempts.map { ("{kind=\"\(Self.escaped($0.kind))\"}", String($0.count)) })
        family("carrel_interruptions_total", "counter", "Sessions interrupted, by cause.",
               interruptions.map { ("{cause=\"\(Self.escaped($0.cause))\"}", String($0.count)) })
        family("carrel_sessions_total", "counter", "Sessions that came to an end (or were refused), by outcome.",
               Outcome.allCases.map { ("{outcome=\"\($0.rawValue)\"}", String(sessions[$0] ?? 0)) })
        if let auditChainOK {
            family("carrel_audit_chain_ok", "gauge", "1 when the audit log's chain verified at start and every write since succeeded, else 0.",
                   [("", auditChainOK ? "1" : "0")])
        }
        return text
    }

    /// A label value as the exposition format quotes it.
    public static func escaped(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
