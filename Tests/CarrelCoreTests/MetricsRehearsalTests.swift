import CarrelCore
import Testing

@Suite("Metrics rehearsal")
struct MetricsRehearsalTests {
    let t0 = Instant(nanoseconds: 5_000_000_000)
    /// 2026-11-24T09:00:00Z.
    let nine: Int64 = 1_795_510_800

    func step(_ line: String) throws -> MetricsRehearsal.Step {
        let parsed = try #require(MetricsRehearsal.parse(line[...]))
        let (seat, step) = try parsed.get()
        #expect(seat == "b12-seat07")
        return step
    }

    @Test("each step of the script is read with its argument")
    func steps() throws {
        #expect(try step("b12-seat07 begin") == .begin)
        #expect(try step("b12-seat07 began 3600") == .began(timeLimitSeconds: 3600))
        #expect(try step("  b12-seat07\tblocked clipboard  # a paste") == .blocked(kind: "clipboard"))
        #expect(try step("b12-seat07 interrupted time_limit") == .interrupted(.timeLimit))
        #expect(try step("b12-seat07 ended") == .ended)
        #expect(try step("b12-seat07 failed") == .failed)
        #expect(try step("b12-seat07 destroyed") == .destroyed)
        #expect(try step("b12-seat07 stop") == .stop)
        #expect(MetricsRehearsal.parse("   # nothing"[...]) == nil)
        #expect(MetricsRehearsal.parse(""[...]) == nil)
    }

    @Test("a line that is not a step says what is expected", arguments: [
        ("seat07", "names no step"),
        ("../etc began 10", "not a seat name"),
        ("seat07 began", "not a step"),
        ("seat07 began -5", "whole seconds"),
        ("seat07 blocked paste", "not a blocked kind"),
        ("seat07 interrupted boredom", "not a cause"),
        ("seat07 ended now", "not a step"),
        ("seat07 began 10 20", "words after the step"),
    ])
    func bad(line: String, says: String) {
        guard case .failure(let failure)? = MetricsRehearsal.parse(line[...]) else {
            Issue.record("\(line) was accepted")
            return
        }
        #expect(failure.message.contains(says), "\(failure.message)")
    }

    @Test("a seat's script drives its metrics as a real session would")
    func drives() throws {
        var seat = MetricsRehearsal.Seat(metrics: SeatMetrics(version: "0.1.0", unixNow: nine, auditChainOK: true))
        try seat.apply(.begin, now: t0, unixNow: nine + 1)
        #expect(seat.metrics.state == .pending && seat.metrics.stateSince == nine + 1)
        try seat.apply(.began(timeLimitSeconds: 600), now: t0, unixNow: nine + 2)
        #expect(seat.metrics.state == .active && seat.metrics.deadline == nine + 2 + 600)
        try seat.apply(.blocked(kind: "capture"), now: t0, unixNow: nine + 3)
        try seat.apply(.blocked(kind: "capture"), now: t0, unixNow: nine + 3)
        try seat.apply(.interrupted(.integrity), now: t0, unixNow: nine + 4)
        #expect(seat.metrics.state == .interrupted && seat.metrics.stateSince == nine + 4)
        try seat.apply(.ended, now: t0, unixNow: nine + 5)
        #expect(seat.metrics.state == .idle && seat.metrics.deadline == nil)
        try seat.apply(.begin, now: t0, unixNow: nine + 6)
        try seat.apply(.failed, now: t0, unixNow: nine + 7)
        try seat.apply(.begin, now: t0, unixNow: nine + 8)
        try seat.apply(.destroyed, now: t0, unixNow: nine + 9)
        try seat.apply(.begin, now: t0, unixNow: nine + 10)
        try seat.apply(.began(timeLimitSeconds: 0), now: t0, unixNow: nine + 11)
        try seat.apply(.interrupted(.timeLimit), now: t0, unixNow: nine + 12)
        #expect(seat.metrics.state == .ending && seat.metrics.deadline == nil)
        #expect(seat.metrics.blockedAttempts["capture"] == 2)
        #expect(seat.metrics.interruptions[.integrity] == 1 && seat.metrics.interruptions[.timeLimit] == 1)
        #expect(seat.metrics.sessions == [.ended: 1, .failed: 1, .destroyed: 1])
    }

    @Test("a step that cannot happen in the seat's state is refused and changes nothing", arguments: [
        [MetricsRehearsal.Step.began(timeLimitSeconds: 5)],
        [.ended],
        [.begin, .begin],
        [.begin, .interrupted(.other)],
        [.begin, .began(timeLimitSeconds: 0), .failed],
        [.destroyed],
    ])
    func refused(script: [MetricsRehearsal.Step]) throws {
        var seat = MetricsRehearsal.Seat(metrics: SeatMetrics(version: "0.1.0", unixNow: nine, auditChainOK: true))
        for step in script.dropLast() { try seat.apply(step, now: t0, unixNow: nine) }
        let before = seat.metrics
        #expect(throws: ControlFailure.self) { try seat.apply(script.last!, now: t0, unixNow: nine + 1) }
        #expect(seat.metrics == before)
    }
}
