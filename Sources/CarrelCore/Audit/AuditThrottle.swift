/// Keeps a flood of blocked attempts from flooding the audit log: of each
/// kind of attempt from each client, the first `burst` in a window are
/// recorded in full; the rest are only counted, and the count is written as
/// one summary record when the window closes, the client goes, or a session
/// changes state. Many clients at once (a program reconnecting in a loop)
/// share a second budget, `globalBurst` full records per window across all
/// clients; past it, attempts are counted per kind under `ClientID(0)`
/// ("many clients"). Nothing is lost: recorded + summarised = attempted,
/// and the disk used per window is bounded whatever clients do.
///
/// ```swift
/// var throttle = AuditThrottle(burst: 5, window: .seconds(10))
/// throttle.admit(key, now: t)       // .record (the first five), then .suppress
/// throttle.expired(now: t + 10 s)   // [Summary(key, suppressed: n, ...)]
/// ```
public struct AuditThrottle: Sendable {
    public struct Key: Sendable, Hashable {
        public var client: ClientID
        public var kind: String
        public init(client: ClientID, kind: String) { self.client = client; self.kind = kind }
    }

    /// Attempts of one kind from one client that were counted, not recorded.
    public struct Summary: Sendable, Equatable {
        public var key: Key
        public var suppressed: UInt64
        public var first: Instant
        public var last: Instant

        /// The summary record's detail.
        public var detail: String {
            let within = "within \((last.nanoseconds - first.nanoseconds) / 1_000_000) ms"
            return key.client == AuditThrottle.manyClients
                ? "\(suppressed) more attempt(s) of this kind from many clients \(within), past the log's budget for all clients: counted rather than recorded one by one"
                : "\(suppressed) more attempt(s) of this kind from this client \(within), counted rather than recorded one by one"
        }
    }

    public enum Decision: Sendable, Equatable { case record, suppress }

    private struct Window: Sendable {
        var start: Instant
        var recorded: Int
        var suppressed: UInt64
        var firstSuppressed: Instant
        var lastSuppressed: Instant
    }

    public let burst: Int
    public let globalBurst: Int
    public let window: Duration
    private var windows: [Key: Window] = [:]
    private var globalStart: Instant?
    private var globalRecorded = 0

    /// The key under which attempts past the global budget are counted.
    public static let manyClients = ClientID(0)

    public init(burst: Int = 5, globalBurst: Int = 100, window: Duration = .seconds(10)) {
        precondition(burst >= 1 && globalBurst >= burst, "a throttle records at least one attempt per window")
        self.burst = burst
        self.globalBurst = globalBurst
        self.window = window
    }

    /// Whether this attempt is recorded in full or counted; a window of the
    /// same key that has closed is summarised first (returned).
    public mutating func admit(_ key: Key, now: Instant) -> (Decision, Summary?) {
        if let start = globalStart, start.advanced(by: window) > now {
            if globalRecorded >= globalBurst && key.client != Self.manyClients {
                // Past the budget for everyone: counted under "many clients".
                let (_, closed) = admit(Key(client: Self.manyClients, kind: key.kind), now: now, counted: true)
                return (.suppress, closed)
            }
        } else {
            globalStart = now
            globalRecorded = 0
        }
        let result = admit(key, now: now, counted: false)
        if result.0 == .record { globalRecorded += 1 }
        return result
    }

    private mutating func admit(_ key: Key, now: Instant, counted: Bool) -> (Decision, Summary?) {
        var closed: Summary?
        if let current = windows[key], current.start.advanced(by: window) <= now {
            closed = Self.summary(key, current)
            windows[key] = nil
        }
        guard var current = windows[key] else {
            if counted {
                windows[key] = Window(start: now, recorded: 0, suppressed: 1, firstSuppressed: now, lastSuppressed: now)
                return (.suppress, closed)
            }
            windows[key] = Window(start: now, recorded: 1, suppressed: 0, firstSuppressed: now, lastSuppressed: now)
            return (.record, closed)
        }
        if current.recorded < burst && !counted {
            current.recorded += 1
            windows[key] = current
            return (.record, closed)
        }
        if current.suppressed == 0 { current.firstSuppressed = now }
        current.suppressed += 1
        current.lastSuppressed = now
        windows[key] = current
        return (.suppress, closed)
    }

    /// Summaries of the windows that have closed by `now`; closed windows are forgotten.
    public mutating func expired(now: Instant) -> [Summary] {
        let closed = windows.filter { $0.value.start.advanced(by: window) <= now }
        for key in closed.keys { windows[key] = nil }
        return closed.compactMap { Self.summary($0.key, $0.value) }.sorted(by: Self.order)
    }

    /// Summaries of every open window (of one client, or all): the client
    /// went, a session changed state, or Carrel is stopping.
    public mutating func flush(client: ClientID? = nil) -> [Summary] {
        let open = windows.filter { client == nil || $0.key.client == client }
        for key in open.keys { windows[key] = nil }
        return open.compactMap { Self.summary($0.key, $0.value) }.sorted(by: Self.order)
    }

    /// When the next window holding a count closes (for a timer), if any.
    public var nextDeadline: Instant? {
        windows.values.filter { $0.suppressed > 0 }.map { $0.start.advanced(by: window) }.min()
    }

    /// How many windows are open (bounded by clients × kinds).
    public var openWindows: Int { windows.count }

    private static func summary(_ key: Key, _ window: Window) -> Summary? {
        guard window.suppressed > 0 else { return nil }
        return Summary(key: key, suppressed: window.suppressed, first: window.firstSuppressed, last: window.lastSuppressed)
    }

    private static func order(_ a: Summary, _ b: Summary) -> Bool {
        (a.first, a.key.client, a.key.kind) < (b.first, b.key.client, b.key.kind)
    }
}
