import CarrelCore
import Testing

@Suite("Guided Access passcode rate limiting")
struct PasscodeAttemptsTests {
    let t0 = Instant(nanoseconds: 1_000_000_000)

    @Test("three wrong passcodes are free, the fourth waits 30 s, then the wait doubles")
    func backOff() {
        var a = PasscodeAttempts()
        for _ in 0..<2 {
            #expect(a.admit(at: t0) == .allowed)
            a.record(success: false, at: t0)
        }
        #expect(a.admit(at: t0) == .allowed)
        a.record(success: false, at: t0)  // third: now locked for 30 s
        #expect(a.admit(at: t0) == .tooSoon(retryAfter: .seconds(30)))
        #expect(a.admit(at: t0.advanced(by: .seconds(29))) == .tooSoon(retryAfter: .seconds(1)))
        let t1 = t0.advanced(by: .seconds(30))
        #expect(a.admit(at: t1) == .allowed)
        a.record(success: false, at: t1)
        #expect(a.admit(at: t1) == .tooSoon(retryAfter: .seconds(60)))
        #expect(a.totalFailures == 4)
    }

    @Test("the wait never exceeds the ceiling")
    func ceiling() {
        var a = PasscodeAttempts()
        var now = t0
        for _ in 0..<40 {
            a.record(success: false, at: now)
            now = now.advanced(by: .seconds(3600))
        }
        a.record(success: false, at: now)
        #expect(a.admit(at: now) == .tooSoon(retryAfter: .seconds(15 * 60)))
    }

    @Test("a right passcode resets the wait but not the total")
    func reset() {
        var a = PasscodeAttempts()
        for _ in 0..<3 { a.record(success: false, at: t0) }
        a.record(success: true, at: t0.advanced(by: .seconds(31)))
        #expect(a.admit(at: t0.advanced(by: .seconds(31))) == .allowed)
        #expect(a.consecutiveFailures == 0)
        #expect(a.totalFailures == 3)
    }
}
