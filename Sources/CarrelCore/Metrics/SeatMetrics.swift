/// What one seat tells the room's Prometheus: its session state, when it
/// entered it, the time limit's deadline, and counters of blocked attempts,
/// interruptions and sessions since Carrel started. Fed by the session the
/// Invigilator holds live, the events sent on sessions and the blocked
/// attempts the audit log records; rendered in Prometheus' text exposition
/// format for node-exporter's textfile collector (`SeatExposition`, the
/// format's own module).
///
/// Every label is a closed set (states, audit kinds, interruption reasons,
/// outcomes): no session id, name or free text reaches a metric, so the
/// room's time series stay few and say nothing about who sits where.
public struct SeatMetrics: Sendable, Equatable {
    /// The seat's state, as an invigilator's board shows it (the metrics
    /// file's format is a module of its own, `CarrelMetricsFormat`).
    public typealias State = SeatExposition.State
    /// How a session that was begun (or refused) came to an end.
    public typealias Outcome = SeatExposition.Outcome

    /// Carrel's version, the one free-text label (it comes from the build).
    public let version: String
    public private(set) var state: State = .idle
    /// Seconds since the Unix epoch when the seat entered `state`.
    public private(set) var stateSince: Int64
    /// Seconds since the Unix epoch when the time limit passes; nil while no limit runs.
    public private(set) var deadline: Int64?
    public private(set) var blockedAttempts: [String: UInt64]
    public private(set) var interruptions: [InterruptionReason: UInt64]
    public private(set) var sessions: [Outcome: UInt64]
    /// The audit log's chain verified when Carrel started and every write
    /// since succeeded; nil while the chain is still being checked (the
    /// sample is left out until it is known).
    public var auditChainOK: Bool?

    /// The live session last observed, and whether its last event was seen.
    private var liveSession: SessionID?
    private var liveSessionAnswered = false
    /// The monotonic deadline `deadline` was converted from.
    private var deadlineInstant: Instant?

    /// `auditChainOK` from what the audit log knows: a failed write is 0 at
    /// once; otherwise the start check's outcome, nil (no sample) while it
    /// is still running.
    public static func auditChain(verifiedAtStart: Bool?, writeFailed: Bool) -> Bool? {
        writeFailed ? false : verifiedAtStart
    }

    /// A seat with no session, as of `unixNow` (when Carrel started).
    public init(version: String, unixNow: Int64, auditChainOK: Bool?) {
        self.version = version
        stateSince = unixNow
        self.auditChainOK = auditChainOK
        blockedAttempts = Dictionary(uniqueKeysWithValues: AuditKind.all.map { ($0, 0) })
        interruptions = Dictionary(uniqueKeysWithValues: InterruptionReason.allCases.map { ($0, 0) })
        sessions = Dictionary(uniqueKeysWithValues: Outcome.allCases.map { ($0, 0) })
    }

    // MARK: - Feeding

    /// The Invigilator's live session now (nil: none), with its phase and
    /// the monotonic deadline of its time limit. `now` and `unixNow` are the
    /// same moment on the monotonic and the wall clock.
    public mutating func observe(live session: SessionID?, phase: SessionPhase?, timeLimitDeadline: Instant?,
                                 now: Instant, unixNow: Int64) {
        if let previous = liveSession, previous != session {
            if !liveSessionAnswered { sessions[.destroyed, default: 0] += 1 }
            liveSession = nil
        }
        if let session, liveSession != session {
            liveSession = session
            liveSessionAnswered = false
        }
        let new = State(session == nil ? nil : phase)
        if new != state {
            state = new
            stateSince = unixNow
        }
        if timeLimitDeadline != deadlineInstant {
            deadlineInstant = timeLimitDeadline
            // Converted once per deadline, so the wall-clock value does not
            // wobble by a rounding second from one observation to the next.
            deadline = timeLimitDeadline.map { instant in
                let left = instant.duration(since: now).wholeMilliseconds
                let late = now.duration(since: instant).wholeMilliseconds
                return unixNow + (left > 0 ? (left + 500) / 1000 : -((late + 500) / 1000))
            }
        }
    }

    /// Convenience for the Invigilator's record of the live session.
    public mutating func observe(_ live: SessionRecord?, now: Instant, unixNow: Int64) {
        observe(live: live?.id, phase: live?.phase, timeLimitDeadline: live?.timeLimitDeadline, now: now, unixNow: unixNow)
    }

    /// `event` was sent on `session`.
    public mutating func record(_ event: SessionEvent, session: SessionID) {
        switch event {
        case .interrupted(let reason, _): interruptions[reason, default: 0] += 1
        case .ended: sessions[.ended, default: 0] += 1
        case .failed: sessions[.failed, default: 0] += 1
        case .began, .updated, .updateFailed: break
        }
        if event.isTerminal && session == liveSession { liveSessionAnswered = true }
    }

    /// A blocked attempt of `kind` (one of `AuditKind.all`) was recorded.
    public mutating func blocked(_ kind: String) {
        blockedAttempts[kind, default: 0] += 1
    }

    // MARK: - Rendering

    /// The values as the metrics file shows them: every audit kind and
    /// every cause listed, 0 included, kinds in `AuditKind.all`'s order.
    public var report: SeatExposition {
        let kinds = AuditKind.all + blockedAttempts.keys.filter { !AuditKind.all.contains($0) }.sorted()
        return SeatExposition(version: version, state: state, stateSince: stateSince, deadline: deadline,
                              blockedAttempts: kinds.map { ($0, blockedAttempts[$0] ?? 0) },
                              interruptions: InterruptionReason.allCases.map { ($0.protocolName, interruptions[$0] ?? 0) },
                              sessions: sessions, auditChainOK: auditChainOK)
    }

    /// The file node-exporter serves (`SeatExposition.text`).
    public var exposition: String { report.text }
}

extension SeatExposition.State {
    /// The state of a seat whose live session is in `phase` (nil: none).
    public init(_ phase: SessionPhase?) {
        switch phase {
        case nil, .failed?, .ended?: self = .idle
        case .restricting?, .awaitingConfirmation?, .awaitingPresentation?: self = .pending
        case .active?: self = .active
        case .interrupted(.timeLimit)?, .interrupted(.shutdown)?: self = .ending
        case .interrupted?: self = .interrupted
        }
    }
}
