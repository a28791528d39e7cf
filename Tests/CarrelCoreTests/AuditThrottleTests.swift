import CarrelCore
import Testing

@Suite("Audit throttle")
struct AuditThrottleTests {
    let t0 = Instant(nanoseconds: 1_000_000_000)
    let key = AuditThrottle.Key(client: ClientID(1), kind: "clipboard")

    @Test("10,000 attempts in one window: five recorded in full, the rest in one summary; nothing lost")
    func flood() {
        var throttle = AuditThrottle(burst: 5, window: .seconds(10))
        var recorded = 0
        for i in 0..<10_000 {
            let (decision, closed) = throttle.admit(key, now: t0.advanced(by: .microseconds(i)))
            #expect(closed == nil)
            if decision == .record { recorded += 1 }
        }
        #expect(recorded == 5)
        #expect(throttle.nextDeadline == t0.advanced(by: .seconds(10)))
        #expect(throttle.expired(now: t0.advanced(by: .seconds(9))).isEmpty)
        let summaries = throttle.expired(now: t0.advanced(by: .seconds(10)))
        #expect(summaries.count == 1 && summaries[0].suppressed == 9_995 && summaries[0].key == key)
        #expect(throttle.openWindows == 0 && throttle.nextDeadline == nil)
    }

    @Test("a new window after one closed returns the old window's summary and records again")
    func nextWindow() {
        var throttle = AuditThrottle(burst: 1, window: .seconds(1))
        #expect(throttle.admit(key, now: t0).0 == .record)
        #expect(throttle.admit(key, now: t0).0 == .suppress)
        let (decision, closed) = throttle.admit(key, now: t0.advanced(by: .seconds(2)))
        #expect(decision == .record && closed?.suppressed == 1)
    }

    @Test("kinds and clients are counted apart; flushing one client leaves the others")
    func separateKeys() {
        var throttle = AuditThrottle(burst: 1, window: .seconds(10))
        let other = AuditThrottle.Key(client: ClientID(2), kind: "clipboard")
        let kind = AuditThrottle.Key(client: ClientID(1), kind: "capture")
        for k in [key, key, other, other, other, kind] { _ = throttle.admit(k, now: t0) }
        let mine = throttle.flush(client: ClientID(1))
        #expect(mine.map(\.key) == [key] && mine[0].suppressed == 1)
        let rest = throttle.flush()
        #expect(rest.map(\.key) == [other] && rest[0].suppressed == 2)
        #expect(throttle.openWindows == 0)
    }
}

@Suite("Audit kinds")
struct AuditKindTests {
    @Test("a refused bind is named by what it tried: capture, virtual input, or a hidden global")
    func refusedBind() {
        #expect(AuditKind.forRefusedBind(interface: "zwlr_screencopy_manager_v1") == AuditKind.capture)
        #expect(AuditKind.forRefusedBind(interface: "zwp_virtual_keyboard_manager_v1") == AuditKind.virtualInput)
        #expect(AuditKind.forRefusedBind(interface: "zwlr_virtual_pointer_manager_v1") == AuditKind.virtualInput)
        #expect(AuditKind.forRefusedBind(interface: "carrel_assessment_manager_v1") == AuditKind.hiddenGlobal)
        #expect(AuditKind.forRefusedBind(interface: "zwlr_layer_shell_v1") == AuditKind.hiddenGlobal)
    }
}

@Suite("Audit throttle across clients")
struct AuditThrottleGlobalTests {
    @Test("10,000 clients with one attempt each: the global budget in full, the rest counted under many clients")
    func manyClients() {
        let t0 = Instant(nanoseconds: 1_000_000_000)
        var throttle = AuditThrottle(burst: 5, globalBurst: 100, window: .seconds(10))
        var recorded = 0
        for i in 1...10_000 {
            let (decision, _) = throttle.admit(.init(client: ClientID(UInt64(i)), kind: "hidden_global"), now: t0.advanced(by: .microseconds(i)))
            if decision == .record { recorded += 1 }
        }
        #expect(recorded == 100)
        let summaries = throttle.expired(now: t0.advanced(by: .seconds(11)))
        #expect(summaries.count == 1 && summaries[0].key.client == AuditThrottle.manyClients && summaries[0].suppressed == 9_900)
        // A new window: the budget is back.
        #expect(throttle.admit(.init(client: ClientID(1), kind: "hidden_global"), now: t0.advanced(by: .seconds(12))).0 == .record)
    }
}

@Suite("Blocked attempts")
struct BlockedAttemptTests {
    let owner = ClientID(1), stranger = ClientID(2)
    var session: RestrictionSet {
        RestrictionSet(session: SessionID(1), owner: owner, configuration: .mostRestrictive, policy: SessionPolicy())
    }

    @Test("a bind is an attempt only when the global was not shown, session or not")
    func binds() {
        #expect(BlockedAttempt.of(.bind(interface: "xdg_wm_base", visible: true), from: stranger, restrictions: session) == nil)
        let hidden = BlockedAttempt.of(.bind(interface: "zwp_virtual_keyboard_manager_v1", visible: false), from: stranger, restrictions: nil)
        #expect(hidden?.kind == AuditKind.virtualInput && hidden?.detail.contains("zwp_virtual_keyboard_manager_v1") == true)
    }

    @Test("raise and clipboard requests are attempts from anyone but the owner, during a session only")
    func ownerOnly() {
        for request in [WatchedRequest.raise(request: "set_fullscreen"), .selection(request: "set_selection")] {
            #expect(BlockedAttempt.of(request, from: stranger, restrictions: nil) == nil)
            #expect(BlockedAttempt.of(request, from: owner, restrictions: session) == nil)
            #expect(BlockedAttempt.of(request, from: stranger, restrictions: session) != nil)
        }
        #expect(BlockedAttempt.of(.raise(request: "set_maximized"), from: stranger, restrictions: session)?.kind == AuditKind.focusSteal)
        #expect(BlockedAttempt.of(.selection(request: "start_drag"), from: stranger, restrictions: session)?.kind == AuditKind.clipboard)
    }

    @Test("a summary says how many, from whom and over how long")
    func summaryDetail() {
        let t0 = Instant(nanoseconds: 1_000_000_000)
        var throttle = AuditThrottle(burst: 1, window: .seconds(10))
        let key = AuditThrottle.Key(client: ClientID(3), kind: "clipboard")
        for i in 0..<3 { _ = throttle.admit(key, now: t0.advanced(by: .milliseconds(i * 20))) }
        let summary = throttle.flush()[0]
        #expect(summary.detail.hasPrefix("2 more attempt(s) of this kind from this client within 20 ms"))
    }
}
