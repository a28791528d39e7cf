import CarrelCore
import Testing

@Suite("Guided Access")
struct GuidedAccessTests {
    let app = ClientID(7)
    let t0 = Instant(nanoseconds: 5_000_000_000)

    func code<T>(_ result: Result<T, ControlFailure>) -> ControlFailureCode? {
        if case .failure(let failure) = result { return failure.code }
        return nil
    }

    @Test("lock needs a passcode in the policy, no live session, no lock already, and an app window")
    func lockAdmission() throws {
        var guided = GuidedAccess()
        #expect(code(guided.admitLock(configured: false, sessionLive: false, topmostApp: app)) == .notConfigured)
        #expect(code(guided.admitLock(configured: true, sessionLive: true, topmostApp: app)) == .wrongState)
        #expect(code(guided.admitLock(configured: true, sessionLive: false, topmostApp: nil)) == .noApp)
        #expect(try guided.admitLock(configured: true, sessionLive: false, topmostApp: app).get() == app)
        guided.locked(SessionID(3))
        #expect(code(guided.admitLock(configured: true, sessionLive: false, topmostApp: app)) == .wrongState)
    }

    @Test("under --assessment Carrel's own session owns the screen: lock is refused whatever else holds")
    func lockUnderAssessmentMode() {
        let guided = GuidedAccess()
        #expect(code(guided.admitLock(configured: true, assessmentMode: true, sessionLive: false, topmostApp: app)) == .wrongState)
        #expect(code(guided.admitLock(configured: false, assessmentMode: true, sessionLive: false, topmostApp: app)) == .wrongState)
    }

    @Test("status names the lock first, then how Carrel was started")
    func controlMode() {
        #expect(GuidedAccess.controlMode(locked: true, kiosk: true, assessmentMode: false) == "guided_access")
        #expect(GuidedAccess.controlMode(locked: false, kiosk: true, assessmentMode: false) == "kiosk")
        #expect(GuidedAccess.controlMode(locked: false, kiosk: false, assessmentMode: true) == "assessment")
        #expect(GuidedAccess.controlMode(locked: false, kiosk: false, assessmentMode: false) == "standard")
    }

    @Test("unlock without a lock is refused before any passcode is checked")
    func unlockWithoutLock() {
        let guided = GuidedAccess()
        #expect(code(guided.admitUnlock(at: t0)) == .wrongState)
    }

    @Test("a wrong passcode is counted; the right one releases the lock and resets the count")
    func wrongThenRight() throws {
        var guided = GuidedAccess()
        guided.locked(SessionID(3))
        #expect(try guided.admitUnlock(at: t0).get() == SessionID(3))
        let wrong = guided.unlockChecked(matched: false, at: t0)
        #expect(code(wrong) == .wrongPasscode)
        #expect(guided.attempts.totalFailures == 1 && guided.session == SessionID(3))
        #expect(try guided.unlockChecked(matched: true, at: t0).get() == SessionID(3))
        #expect(guided.session == nil && guided.attempts.consecutiveFailures == 0)
        #expect(guided.attempts.totalFailures == 1, "the count of wrong passcodes is kept for the log")
    }

    @Test("after three wrong passcodes even the right one is not checked until the wait is over")
    func rateLimited() throws {
        var guided = GuidedAccess()
        guided.locked(SessionID(3))
        for _ in 0..<3 {
            _ = try guided.admitUnlock(at: t0).get()
            _ = guided.unlockChecked(matched: false, at: t0)
        }
        guard case .failure(let failure) = guided.admitUnlock(at: t0.advanced(by: .seconds(1))) else {
            Issue.record("admitted during the wait")
            return
        }
        #expect(failure.code == .rateLimited && failure.message.contains("29 s"))
        #expect(try guided.admitUnlock(at: t0.advanced(by: .seconds(30))).get() == SessionID(3))
    }

    @Test("a session that failed or ended by itself releases the lock; another session's end does not")
    func sessionOver() {
        var guided = GuidedAccess()
        guided.locked(SessionID(3))
        guided.sessionOver(SessionID(2))
        #expect(guided.session == SessionID(3))
        guided.sessionOver(SessionID(3))
        #expect(guided.session == nil)
    }

    @Test("lock and unlock requests parse and round-trip; an empty passcode is refused")
    func requests() throws {
        #expect(try ControlRequest.parse(Array(#"{"command":"lock"}"#.utf8)).get() == .lock)
        #expect(try ControlRequest.parse(Array(#"{"command":"unlock","passcode":"s3cret"}"#.utf8)).get() == .unlock(passcode: "s3cret"))
        for request in [ControlRequest.lock, .unlock(passcode: "pa\"ss code")] {
            #expect(try ControlRequest.parse(Array(request.line.utf8)).get() == request)
        }
        #expect(code(ControlRequest.parse(Array(#"{"command":"unlock"}"#.utf8))) == .badRequest)
        #expect(code(ControlRequest.parse(Array(#"{"command":"unlock","passcode":""}"#.utf8))) == .badArgument)
    }
}
