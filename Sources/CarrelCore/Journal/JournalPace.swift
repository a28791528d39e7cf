/// How many audit records go to the systemd journal one by one. journald
/// drops a service's messages past its rate limit (by default 10,000 in
/// 30 s), and what it drops it only counts; so Carrel keeps well under it:
/// records that tell a session's story (transitions, admin commands, start
/// and stop) always go, while blocked attempts go one by one only up to
/// `burst` in each `window`; the rest are counted and sent as one
/// `journal_coalesced` entry when the window closes, naming their kinds and
/// sequence numbers (every record stays in the audit log).
public struct JournalPace: Sendable {
    /// What the journal is told instead of records held back in one window.
    public struct Summary: Sendable, Equatable {
        public var count: UInt64 { UInt64(seqs.count) }
        /// Records held back, by `CARREL_KIND` (or event when it has none).
        public var byKind: [String: UInt64]
        public var seqs: [UInt64]
        public var window: Duration

        public init(byKind: [String: UInt64], seqs: [UInt64], window: Duration) {
            self.byKind = byKind
            self.seqs = seqs
            self.window = window
        }
    }

    public enum Decision: Sendable, Equatable {
        /// Send the record's entry now.
        case send
        /// Count it into the window's summary.
        case hold
    }

    /// Events that may come in floods: everything else is always sent. The
    /// audit log's own `blocked_summary` records are at most one per client and
    /// kind a window, and carry a count of attempts a coalesced entry would lose.
    public static let floodable: Set<String> = ["blocked"]

    public let burst: Int
    public let window: Duration
    private var windowStart: Instant?
    private var sentInWindow = 0
    private var held: Summary?

    public init(burst: Int = 50, window: Duration = .seconds(10)) {
        self.burst = burst
        self.window = window
    }

    /// Whether the record (`event`, `kind`, `seq`) made at `now` goes now;
    /// `closed`: the summary of a window that ended before `now`, to send first.
    public mutating func admit(event: String, kind: String?, seq: UInt64, now: Instant) -> (decision: Decision, closed: Summary?) {
        let closed = expired(now: now)
        guard Self.floodable.contains(event) else { return (.send, closed) }
        if windowStart == nil {
            windowStart = now
            sentInWindow = 0
        }
        if sentInWindow < burst {
            sentInWindow += 1
            return (.send, closed)
        }
        var summary = held ?? Summary(byKind: [:], seqs: [], window: window)
        summary.byKind[kind ?? event, default: 0] += 1
        summary.seqs.append(seq)
        held = summary
        return (.hold, closed)
    }

    /// Whether records are held for the current window's summary.
    public var isHolding: Bool { held != nil }

    /// When the current window ends (nil: no window open).
    public var windowEnd: Instant? { windowStart.map { $0.advanced(by: window) } }

    /// The summary of the window if it has ended by `now` (a new one opens
    /// with the next floodable record).
    public mutating func expired(now: Instant) -> Summary? {
        guard let end = windowEnd, now >= end else { return nil }
        return flush()
    }

    /// Carrel is stopping: what is held, now.
    public mutating func flush() -> Summary? {
        windowStart = nil
        sentInWindow = 0
        defer { held = nil }
        return held
    }
}

extension JournalEntry {
    /// The entry that stands for the records `summary` counts (the journal
    /// entry format is a module of its own; the pace is Carrel's decision).
    public init(coalesced summary: JournalPace.Summary, run: String? = nil) {
        self.init(coalescedByKind: summary.byKind, seqs: summary.seqs, window: summary.window.secondsText, run: run)
    }
}
