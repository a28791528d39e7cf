import CarrelCore
import Testing

@Suite("Single App Mode: when to relaunch")
struct RelaunchScheduleTests {
    let quick = Duration.milliseconds(40)

    func schedule(max: Int = 5, initial: Duration = .milliseconds(250), maximum: Duration = .seconds(10)) -> RelaunchSchedule {
        RelaunchSchedule(policy: KioskPolicy(enabled: true, maximumRelaunches: max,
                                             initialBackoff: initial, maximumBackoff: maximum))
    }

    @Test("the back-off doubles from the initial one up to the maximum")
    func backoffDoubles() {
        var s = schedule(max: 8, initial: .milliseconds(250), maximum: .seconds(2))
        var delays: [Duration] = []
        for _ in 0..<8 {
            guard case .relaunch(let delay, _) = s.appExited(lived: quick) else {
                Issue.record("gave up too early"); return
            }
            delays.append(delay)
        }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2),
                           .seconds(2), .seconds(2), .seconds(2), .seconds(2)])
    }

    @Test("gives up after maximumRelaunches quick relaunches in a row", arguments: [0, 1, 3, 5])
    func givesUp(max: Int) {
        // 250 ms doubling, well under the 10 s maximum for five attempts.
        let delays: [Duration] = [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4)]
        var s = schedule(max: max)
        for attempt in 1...(max + 1) {
            let decision = s.appExited(lived: quick)
            if attempt <= max {
                #expect(decision == .relaunch(after: delays[attempt - 1], attempt: attempt))
            } else {
                #expect(decision == .giveUp(relaunches: max))
            }
        }
    }

    @Test("a run that lived through the stability window resets the count and the back-off")
    func stableRunResets() {
        var s = schedule(max: 2)
        #expect(s.appExited(lived: quick) == .relaunch(after: .milliseconds(250), attempt: 1))
        #expect(s.appExited(lived: quick) == .relaunch(after: .milliseconds(500), attempt: 2))
        #expect(s.appExited(lived: .seconds(30)) == .relaunch(after: .milliseconds(250), attempt: 1))
        #expect(s.appExited(lived: .seconds(29)) == .relaunch(after: .milliseconds(500), attempt: 2))
        #expect(s.appExited(lived: quick) == .giveUp(relaunches: 2))
    }

    @Test("the stability window comes from the policy")
    func policyWindow() {
        var s = RelaunchSchedule(policy: KioskPolicy(enabled: true, maximumRelaunches: 1,
                                                     stabilityWindow: .seconds(2)))
        #expect(s.appExited(lived: .seconds(5)) == .relaunch(after: .milliseconds(250), attempt: 1))
        #expect(s.appExited(lived: .seconds(2)) == .relaunch(after: .milliseconds(250), attempt: 1))
        #expect(s.appExited(lived: .seconds(1)) == .giveUp(relaunches: 1))
        #expect(RelaunchSchedule(policy: Policy.builtIn.kiosk).stabilityWindow == .seconds(30))
    }

    @Test("nonsense durations neither spin nor trap")
    func clamps() {
        var s = schedule(max: 200, initial: .zero, maximum: .zero)
        for _ in 0..<200 {
            guard case .relaunch(let delay, _) = s.appExited(lived: .zero) else {
                Issue.record("gave up too early"); return
            }
            #expect(delay == .milliseconds(1))
        }
        var t = schedule(max: 100, initial: .seconds(1), maximum: .seconds(60))
        var last = Duration.zero
        for _ in 0..<100 {
            if case .relaunch(let delay, _) = t.appExited(lived: quick) { last = delay }
        }
        #expect(last == .seconds(60))
    }
}

@Suite("Single App Mode: nothing but the app while it is away")
struct KioskScreenTests {
    let app = WindowOwner(client: ClientID(1), role: .app)
    let stranger = WindowOwner(client: ClientID(2), role: .untrusted)
    let participant = WindowOwner(client: ClientID(3), role: .participant, participantID: "calc")

    @Test("a gap is kiosk mode with no mapped app window")
    func gap() {
        #expect(KioskScreen.isGap(kiosk: true, mappedRoles: []))
        #expect(KioskScreen.isGap(kiosk: true, mappedRoles: [.untrusted, .participant]))
        #expect(!KioskScreen.isGap(kiosk: true, mappedRoles: [.untrusted, .app]))
        #expect(!KioskScreen.isGap(kiosk: false, mappedRoles: []))
    }

    @Test("in a gap only app-role windows may show, nothing may focus but them, every output is curtained")
    func gapHides() {
        let rules = ScreenRules(kioskGap: true)
        #expect(rules.shows(app))
        #expect(!rules.shows(stranger))
        #expect(!rules.shows(participant))
        #expect(rules.hidesUntrustedLayer && rules.confinesInput && !rules.untrustedMayFocus)
        #expect(rules.curtainUp(outputIndex: 0) && rules.curtainUp(outputIndex: 1))
    }

    @Test("without a gap or session everything shows; a session's rules are unchanged")
    func noGap() {
        let open = ScreenRules()
        #expect(open.shows(stranger) && open.untrustedMayFocus && !open.hidesUntrustedLayer)
        #expect(!open.curtainUp(outputIndex: 0) && !open.curtainUp(outputIndex: 1))
        let set = RestrictionSet(session: SessionID(1), owner: ClientID(1),
                                 configuration: AssessmentConfiguration(), policy: SessionPolicy())
        let session = ScreenRules(restrictions: set)
        #expect(session.shows(app) && !session.shows(stranger))
        #expect(!session.curtainUp(outputIndex: 0) && session.curtainUp(outputIndex: 1))
        // A gap during a session hides the session owner's non-app windows too.
        let both = ScreenRules(restrictions: set, kioskGap: true)
        #expect(!both.shows(WindowOwner(client: ClientID(1), role: .untrusted)))
    }

    @Test("an app-requested lock (untrusted owner) keeps the untrusted layer; only the owner's windows show and take focus")
    func untrustedOwner() {
        let owner = WindowOwner(client: ClientID(7), role: .untrusted)
        let set = RestrictionSet(session: SessionID(1), owner: owner.client, ownerRole: .untrusted,
                                 configuration: AssessmentConfiguration(), policy: SessionPolicy())
        let rules = ScreenRules(restrictions: set)
        #expect(!rules.hidesUntrustedLayer && rules.untrustedMayFocus && rules.confinesInput)
        #expect(rules.shows(owner) && !rules.shows(WindowOwner(client: ClientID(8), role: .untrusted)))
        // A normal session hides the layer whole and lets no untrusted window focus.
        let normal = ScreenRules(restrictions: RestrictionSet(session: SessionID(2), owner: ClientID(1),
                                                              configuration: AssessmentConfiguration(), policy: SessionPolicy()))
        #expect(normal.hidesUntrustedLayer && !normal.untrustedMayFocus)
    }

    @Test("the audit flags an enabled untrusted window in a gap, and only that")
    func audit() {
        let entries = [
            SceneAudit.Entry(window: WindowID(1), owner: app, isEnabled: true),
            SceneAudit.Entry(window: WindowID(2), owner: stranger, isEnabled: true),
            SceneAudit.Entry(window: WindowID(3), owner: stranger, isEnabled: false),
        ]
        #expect(SceneAudit.violations(entries, under: ScreenRules(kioskGap: true)) == [WindowID(2)])
        #expect(SceneAudit.violations(entries, under: ScreenRules()).isEmpty)
    }
}
