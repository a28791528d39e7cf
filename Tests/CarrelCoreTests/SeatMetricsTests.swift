import CarrelCore
import Testing

@Suite("Seat metrics")
struct SeatMetricsTests {
    let t0 = Instant(nanoseconds: 5_000_000_000)
    let session = SessionID(3)
    /// 2026-11-24T09:00:00Z.
    let nine: Int64 = 1_795_510_800

    @Test("a seat with no session yet: idle since start, no deadline, every series at zero")
    func idleSeat() {
        let metrics = SeatMetrics(version: "0.1.0", unixNow: nine, auditChainOK: true)
        #expect(metrics.exposition == """
            # HELP carrel_build_info Carrel's version on this seat; always 1.
            # TYPE carrel_build_info gauge
            carrel_build_info{version="0.1.0"} 1
            # HELP carrel_session_state The seat's session state: 1 for the current state, 0 for the others.
            # TYPE carrel_session_state gauge
            carrel_session_state{state="idle"} 1
            carrel_session_state{state="pending"} 0
            carrel_session_state{state="active"} 0
            carrel_session_state{state="interrupted"} 0
            carrel_session_state{state="ending"} 0
            # HELP carrel_session_state_since_seconds When the seat entered its current state, in seconds since the Unix epoch.
            # TYPE carrel_session_state_since_seconds gauge
            carrel_session_state_since_seconds 1795510800
            # HELP carrel_session_deadline_seconds When the session's time limit passes, in seconds since the Unix epoch; 0 when no time limit runs.
            # TYPE carrel_session_deadline_seconds gauge
            carrel_session_deadline_seconds 0
            # HELP carrel_blocked_attempts_total Attempts to get around a session's restrictions that Carrel blocked, by kind.
            # TYPE carrel_blocked_attempts_total counter
            carrel_blocked_attempts_total{kind="hidden_global"} 0
            carrel_blocked_attempts_total{kind="capture"} 0
            carrel_blocked_attempts_total{kind="virtual_input"} 0
            carrel_blocked_attempts_total{kind="foreign_window"} 0
            carrel_blocked_attempts_total{kind="focus_steal"} 0
            carrel_blocked_attempts_total{kind="clipboard"} 0
            # HELP carrel_interruptions_total Sessions interrupted, by cause.
            # TYPE carrel_interruptions_total counter
            carrel_interruptions_total{cause="other"} 0
            carrel_interruptions_total{cause="integrity"} 0
            carrel_interruptions_total{cause="administrative"} 0
            carrel_interruptions_total{cause="time_limit"} 0
            carrel_interruptions_total{cause="shutdown"} 0
            # HELP carrel_sessions_total Sessions that came to an end (or were refused), by outcome.
            # TYPE carrel_sessions_total counter
            carrel_sessions_total{outcome="ended"} 0
            carrel_sessions_total{outcome="failed"} 0
            carrel_sessions_total{outcome="destroyed"} 0
            # HELP carrel_audit_chain_ok 1 when the audit log's chain verified at start and every write since succeeded, else 0.
            # TYPE carrel_audit_chain_ok gauge
            carrel_audit_chain_ok 1

            """)
    }

    /// The lines of `metrics` whose series is `name` (with labels), as "series value".
    func samples(_ metrics: SeatMetrics, _ name: String) -> [String] {
        metrics.exposition.split(separator: "\n").map(String.init).filter { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") }
    }

    @Test("a session's life: pending, active with its deadline, interrupted by an administrator, ended")
    func lifecycle() {
        var metrics = SeatMetrics(version: "0.1.0", unixNow: nine, auditChainOK: true)
        metrics.observe(live: session, phase: .restricting, timeLimitDeadline: nil, now: t0, unixNow: nine + 60)
        #expect(samples(metrics, "carrel_session_state") == [
            "carrel_session_state{state=\"idle\"} 0", "carrel_session_state{state=\"pending\"} 1",
            "carrel_session_state{state=\"active\"} 0", "carrel_session_state{state=\"interrupted\"} 0",
            "carrel_session_state{state=\"ending\"} 0",
        ])
        #expect(samples(metrics, "carrel_session_state_since_seconds") == ["carrel_session_state_since_seconds 1795510860"])

        // Still pending a moment later (awaiting the frame): the state's start does not move.
        metrics.observe(live: session, phase: .awaitingPresentation(deadline: t0.advanced(by: .seconds(3))),
                        timeLimitDeadline: nil, now: t0.advanced(by: .seconds(1)), unixNow: nine + 61)
        #expect(samples(metrics, "carrel_session_state_since_seconds") == ["carrel_session_state_since_seconds 1795510860"])

        // began, with a 90-minute limit; the deadline is the wall-clock moment it passes.
        let began = t0.advanced(by: .seconds(2))
        metrics.record(.began, session: session)
        metrics.observe(live: session, phase: .active, timeLimitDeadline: began.advanced(by: .seconds(5400)), now: began, unixNow: nine + 62)
        #expect(metrics.state == .active)
        #expect(samples(metrics, "carrel_session_state_since_seconds") == ["carrel_session_state_since_seconds 1795510862"])
        #expect(samples(metrics, "carrel_session_deadline_seconds") == ["carrel_session_deadline_seconds 1795516262"])

        // The wall clock read a second off later: the deadline already given does not wobble.
        metrics.observe(live: session, phase: .active, timeLimitDeadline: began.advanced(by: .seconds(5400)),
                        now: began.advanced(by: .seconds(10)), unixNow: nine + 73)
        #expect(samples(metrics, "carrel_session_deadline_seconds") == ["carrel_session_deadline_seconds 1795516262"])

        metrics.record(.interrupted(.administrative, message: "stopped by the invigilator"), session: session)
        metrics.observe(live: session, phase: .interrupted(.administrative), timeLimitDeadline: nil,
                        now: began.advanced(by: .seconds(600)), unixNow: nine + 662)
        #expect(metrics.state == .interrupted)
        #expect(samples(metrics, "carrel_session_deadline_seconds") == ["carrel_session_deadline_seconds 0"])
        #expect(samples(metrics, "carrel_interruptions_total").contains("carrel_interruptions_total{cause=\"administrative\"} 1"))

        metrics.record(.ended, session: session)
        metrics.observe(live: nil, phase: nil, timeLimitDeadline: nil, now: began.advanced(by: .seconds(700)), unixNow: nine + 762)
        #expect(metrics.state == .idle)
        #expect(samples(metrics, "carrel_session_state_since_seconds") == ["carrel_session_state_since_seconds 1795511562"])
        #expect(samples(metrics, "carrel_sessions_total") == [
            "carrel_sessions_total{outcome=\"ended\"} 1", "carrel_sessions_total{outcome=\"failed\"} 0",
            "carrel_sessions_total{outcome=\"destroyed\"} 0",
        ])
    }

    @Test("the time limit or a shutdown makes the seat ending, not interrupted")
    func ending() {
        #expect(SeatMetrics.State(.interrupted(.timeLimit)) == .ending)
        #expect(SeatMetrics.State(.interrupted(.shutdown)) == .ending)
        #expect(SeatMetrics.State(.interrupted(.integrity)) == .interrupted)
        #expect(SeatMetrics.State(.interrupted(.other)) == .interrupted)
        #expect(SeatMetrics.State(.awaitingConfirmation(deadline: t0)) == .pending)
        #expect(SeatMetrics.State(.ended) == .idle)
        #expect(SeatMetrics.State(.failed(.timeout)) == .idle)
        #expect(SeatMetrics.State(nil) == .idle)
    }

    @Test("blocked attempts count by kind; a refused begin counts as failed; a live session destroyed counts as destroyed")
    func counters() {
        var metrics = SeatMetrics(version: "0.1.0", unixNow: nine, auditChainOK: true)
        metrics.blocked(AuditKind.capture)
        metrics.blocked(AuditKind.capture)
        metrics.blocked(AuditKind.clipboard)
        #expect(samples(metrics, "carrel_blocked_attempts_total") == [
            "carrel_blocked_attempts_total{kind=\"hidden_global\"} 0", "carrel_blocked_attempts_total{kind=\"capture\"} 2",
            "carrel_blocked_attempts_total{kind=\"virtual_input\"} 0", "carrel_blocked_attempts_total{kind=\"foreign_window\"} 0",
            "carrel_blocked_attempts_total{kind=\"focus_steal\"} 0", "carrel_blocked_attempts_total{kind=\"clipboard\"} 1",
        ])

        // Refused at begin: never live, counted once as failed.
        metrics.record(.failed(.notEntitled, message: "clients of role untrusted may not begin sessions"), session: SessionID(1))
        metrics.observe(live: nil, phase: nil, timeLimitDeadline: nil, now: t0, unixNow: nine)
        // Live, then gone with no last event: its client destroyed it.
        metrics.observe(live: session, phase: .active, timeLimitDeadline: nil, now: t0, unixNow: nine + 1)
        metrics.observe(live: nil, phase: nil, timeLimitDeadline: nil, now: t0, unixNow: nine + 2)
        // Failed before began: its failed event counts, not a destroy as well.
        metrics.observe(live: SessionID(4), phase: .restricting, timeLimitDeadline: nil, now: t0, unixNow: nine + 3)
        metrics.record(.failed(.timeout, message: "no frame"), session: SessionID(4))
        metrics.observe(live: nil, phase: nil, timeLimitDeadline: nil, now: t0, unixNow: nine + 4)
        #expect(samples(metrics, "carrel_sessions_total") == [
            "carrel_sessions_total{outcome=\"ended\"} 0", "carrel_sessions_total{outcome=\"failed\"} 2",
            "carrel_sessions_total{outcome=\"destroyed\"} 1",
        ])
    }

    @Test("an audit log that failed, and a version with a quote, render as the format requires")
    func chainAndEscaping() {
        var metrics = SeatMetrics(version: "0.1.0 \"dev\"\\x", unixNow: nine, auditChainOK: true)
        metrics.auditChainOK = false
        #expect(samples(metrics, "carrel_audit_chain_ok") == ["carrel_audit_chain_ok 0"])
        #expect(samples(metrics, "carrel_build_info") == ["carrel_build_info{version=\"0.1.0 \\\"dev\\\"\\\\x\"} 1"])
    }

    @Test("while the audit log's chain is still being checked, its sample is left out, not 0 or 1")
    func chainNotKnownYet() {
        var metrics = SeatMetrics(version: "0.1.0", unixNow: nine, auditChainOK: nil)
        #expect(!metrics.exposition.contains("carrel_audit_chain_ok"))
        #expect(metrics.exposition.contains("carrel_session_state{state=\"idle\"} 1"))
        metrics.auditChainOK = true
        #expect(samples(metrics, "carrel_audit_chain_ok") == ["carrel_audit_chain_ok 1"])
        // A failed write is known at once, whatever the start check still says.
        #expect(SeatMetrics.auditChain(verifiedAtStart: nil, writeFailed: false) == nil)
        #expect(SeatMetrics.auditChain(verifiedAtStart: nil, writeFailed: true) == false)
        #expect(SeatMetrics.auditChain(verifiedAtStart: true, writeFailed: true) == false)
        #expect(SeatMetrics.auditChain(verifiedAtStart: true, writeFailed: false) == true)
        #expect(SeatMetrics.auditChain(verifiedAtStart: false, writeFailed: false) == false)
    }

    @Test("a deadline already passed when observed is in the past on the wall clock")
    func passedDeadline() {
        var metrics = SeatMetrics(version: "0.1.0", unixNow: nine, auditChainOK: true)
        metrics.observe(live: session, phase: .active, timeLimitDeadline: t0, now: t0.advanced(by: .seconds(2)), unixNow: nine)
        #expect(metrics.deadline == nine - 2)
    }
}
