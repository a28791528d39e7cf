import CarrelCore
import Testing

@Suite("Desk: who gets a key")
struct DeskKeyRoutingTests {
    /// A plain desk with the app's window mapped and focused.
    func plainDesk(virtualTerminals: Bool = true) -> DeskDouble {
        var double = DeskDouble(DeskMode.plain.setup(virtualTerminals: virtualTerminals))
        double.window(1, Owners.app)
        return double
    }

    /// A desk in a session begun on the app's behalf (`--assessment`).
    func sessionDesk() -> DeskDouble {
        var double = DeskDouble(DeskMode.assessment.setup())
        double.window(1, Owners.app)
        #expect(double.events[SessionID(1)] == [.began])
        return double
    }

    struct Case: CustomStringConvertible {
        var name: String
        var key: KeyPress
        var inSession: Bool
        var virtualTerminals = true
        var delivered: Bool
        var vt: Int? = nil
        var interrupts = false
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a letter outside a session", key: .press(Sym.a), inSession: false, delivered: true),
        Case(name: "a letter in a session", key: .press(Sym.a), inSession: true, delivered: true),
        Case(name: "a release outside a session", key: .release(Sym.a), inSession: false, delivered: true),
        Case(name: "Ctrl+Alt+F2 switches VT on a real seat", key: .press(Sym.vt2, [.ctrl, .alt]), inSession: false,
             delivered: false, vt: 2),
        Case(name: "Ctrl+Alt+F2 without terminals is the client's", key: .press(Sym.vt2, [.ctrl, .alt]), inSession: false,
             virtualTerminals: false, delivered: true),
        Case(name: "Ctrl+Alt+F2 in a session goes to the exam", key: .press(Sym.vt2, [.ctrl, .alt]), inSession: true,
             delivered: true),
        Case(name: "the emergency binding outside a session is the client's", key: .press(Sym.delete, [.ctrl, .alt]),
             inSession: false, delivered: true),
        Case(name: "the emergency binding in a session interrupts it", key: .press(Sym.delete, [.ctrl, .alt]),
             inSession: true, delivered: false, interrupts: true),
        Case(name: "the emergency key with other modifiers is the client's", key: .press(Sym.delete, [.ctrl, .alt, .shift]),
             inSession: true, delivered: true),
        Case(name: "the emergency key released is the client's", key: .release(Sym.delete), inSession: true, delivered: true),
        Case(name: "the unlock keys without a lock are the client's", key: .press(Sym.u, [.ctrl, .alt]), inSession: true,
             delivered: true),
    ]

    @Test("each key goes where Core's rules send it", arguments: cases)
    func routing(_ c: Case) {
        var double: DeskDouble
        if c.inSession {
            double = sessionDesk()
        } else {
            double = DeskDouble(DeskMode.plain.setup(virtualTerminals: c.virtualTerminals))
            double.window(1, Owners.app)
        }
        let effects = double.key(c.key)
        #expect(effects.delivers == c.delivered)
        #expect(effects.consumes == !c.delivered)
        #expect(double.vtSwitches == (c.vt.map { [$0] } ?? []))
        let interrupted = double.events[SessionID(1)]?.contains { if case .interrupted(.administrative, _) = $0 { true } else { false } } ?? false
        #expect(interrupted == c.interrupts)
        if c.delivered { #expect(double.deliveredTo == [Owners.app]) }
    }

    @Test("while the confirmation prompt is up every key is consumed; Y allows, N refuses")
    func confirmationPrompt() {
        let refused = SessionEvent.failed(.notEntitled, message: "refused at the machine")
        for (answer, expected) in [(Sym.y, SessionEvent.began), (Sym.n, refused), (Sym.escape, refused)] {
            var setup = DeskMode.plain.setup()
            setup.policy.appLock = AppLockPolicy(allowedExecutables: ["/usr/bin/seb"], requireConfirmation: true)
            var double = DeskDouble(setup)
            double.window(1, Owners.stranger)
            let id = double.desk.allocateSessionID()
            let now = double.now
            let lockOnly = AssessmentConfiguration(allowedFeatures: Set(AssessmentFeature.allCases))
            double.run { $0.begin(id, client: Owners.stranger.client, role: .untrusted, executable: "/usr/bin/seb",
                                  surface: .mappedToplevel, configuration: lockOnly, now: now) }
            #expect(double.desk.askingConfirmation == id)
            #expect(double.key(.press(Sym.a)).consumes)
            #expect(double.key(.release(Sym.a)).consumes)
            #expect(double.deliveredTo.isEmpty)
            #expect(double.key(.press(answer)).consumes)
            #expect(double.desk.askingConfirmation == nil)
            #expect(double.events[id]?.last == expected)
        }
    }

    @Test("the unlock keys during a lock open the passcode entry, which takes every key until Enter")
    func passcodeEntry() {
        var double = plainDesk()
        guard case .success(let id) = double.lock() else { Issue.record("lock refused"); return }
        #expect(double.events[id] == [.began])
        #expect(double.key(.press(Sym.u, [.ctrl, .alt])).consumes)
        #expect(double.desk.passcodeEntry.isOpen)
        for character in "1357" { #expect(double.key(.typed(character)).consumes) }
        #expect(double.key(.release(Sym.a)).consumes)
        #expect(double.key(.press(Sym.enter)).consumes)
        // Wrong: counted, the entry stays open and says so.
        #expect(double.passcodeChecks == 1)
        #expect(double.desk.passcodeEntry.isOpen)
        #expect(double.promptText?.contains("wrong passcode") == true)
        #expect(double.desk.guidedAccess.session == id)
        for character in rightPasscode { double.key(.typed(character)) }
        double.key(.press(Sym.enter))
        #expect(double.passcodeChecks == 2)
        #expect(!double.desk.passcodeEntry.isOpen)
        #expect(double.promptText == nil)
        #expect(double.desk.guidedAccess.session == nil)
        #expect(double.events[id] == [.began, .ended])
        #expect(double.deliveredTo.isEmpty)
        #expect(double.key(.press(Sym.a)).delivers)
    }

    @Test("Escape closes the passcode entry; the lock holds and keys go to the app again")
    func passcodeEntryEscape() {
        var double = plainDesk()
        guard case .success(let id) = double.lock() else { Issue.record("lock refused"); return }
        double.key(.press(Sym.u, [.ctrl, .alt]))
        #expect(double.key(.press(Sym.escape)).consumes)
        #expect(!double.desk.passcodeEntry.isOpen)
        #expect(double.desk.isLive(id))
        #expect(double.key(.press(Sym.a)).delivers)
    }
}

@Suite("Desk: clipboard, primary selection and drag")
struct DeskSelectionTests {
    struct Case: CustomStringConvertible {
        var name: String
        var inSession: Bool
        var focused: ClientID?
        var serialValid: Bool
        var requester: ClientID?
        var accepted: Bool
        var audited: Bool
        var description: String { name }
    }

    static let owner = Owners.app.client
    static let other = Owners.stranger.client
    static let cases: [Case] = [
        Case(name: "anyone outside a session", inSession: false, focused: other, serialValid: false, requester: other,
             accepted: true, audited: false),
        Case(name: "the owner, focused, with its serial", inSession: true, focused: owner, serialValid: true, requester: owner,
             accepted: true, audited: false),
        Case(name: "the owner with a stale serial", inSession: true, focused: owner, serialValid: false, requester: owner,
             accepted: false, audited: true),
        Case(name: "someone else while the owner is focused", inSession: true, focused: owner, serialValid: false,
             requester: other, accepted: false, audited: false),
        Case(name: "anyone while nothing is focused", inSession: true, focused: nil, serialValid: false, requester: other,
             accepted: false, audited: false),
    ]

    func desk(inSession: Bool) -> DeskDouble {
        var double = DeskDouble((inSession ? DeskMode.assessment : .plain).setup())
        double.window(1, Owners.app)
        double.window(2, Owners.stranger)
        return double
    }

    @Test("selections", arguments: cases, [SelectionKind.clipboard, .primary])
    func selection(_ c: Case, kind: SelectionKind) {
        var double = desk(inSession: c.inSession)
        #expect((double.desk.restrictions != nil) == c.inSession)
        double.run { $0.selectionRequested(kind, focusedClient: c.focused, serialFromFocusedClient: c.serialValid,
                                           requester: c.requester) }
        #expect(double.selections.count == 1)
        #expect(double.selections.first?.0 == kind)
        #expect(double.selections.first?.accepted == c.accepted)
        #expect(double.selections.first?.audited == c.audited)
    }

    @Test("drags need a grab serial, and in a session the owner's window",
          arguments: [(false, owner, true, true), (false, other, true, true), (false, owner, false, false),
                      (true, owner, true, true), (true, other, true, false), (true, owner, false, false)])
    func drag(inSession: Bool, origin: ClientID, grab: Bool, accepted: Bool) {
        var double = desk(inSession: inSession)
        double.run { $0.dragRequested(origin: origin, grabSerialValid: grab, requester: origin) }
        #expect(double.selections.first?.0 == .drag)
        #expect(double.selections.first?.accepted == accepted)
    }

    @Test("a drag with no origin surface is refused")
    func dragWithoutOrigin() {
        var double = desk(inSession: false)
        double.run { $0.dragRequested(origin: nil, grabSerialValid: true, requester: nil) }
        #expect(double.selections.first?.accepted == false)
    }
}

@Suite("Desk: focus and what is shown")
struct DeskFocusTests {
    @Test("outside a session the topmost app window has focus; untrusted windows only when nothing else is mapped")
    func plain() {
        var double = DeskDouble(DeskMode.plain.setup())
        double.window(1, Owners.stranger)
        #expect(double.focused == WindowID(1))
        double.window(2, Owners.app)
        #expect(double.focused == WindowID(2))
        double.window(3, Owners.stranger)
        #expect(double.focused == WindowID(2), "an untrusted window never takes focus from the app")
        double.window(4, Owners.helper)
        #expect(double.focused == WindowID(4))
        double.unmap(4)
        #expect(double.focused == WindowID(2))
        double.destroy(2)
        #expect(double.focused == WindowID(3))
        #expect([1, 3].allSatisfy(double.isShown))
    }

    @Test("during a session only the owner's and named participants' windows are shown and focusable")
    func session() {
        var setup = DeskMode.assessment.setup()
        setup.assessment = AssessmentConfiguration(participants: ["calculator"])
        setup.policy.session = SessionPolicy(knownParticipants: ["calculator"])
        var double = DeskDouble(setup)
        double.window(1, Owners.stranger)
        double.window(2, Owners.app)
        #expect(double.desk.restrictions?.owner == Owners.app.client)
        double.window(3, Owners.helper)
        double.window(4, Owners.calculator)
        double.window(5, Owners.stranger)
        #expect(!double.isShown(1) && double.isShown(2) && !double.isShown(3) && double.isShown(4) && !double.isShown(5))
        #expect(double.focused == WindowID(2), "the participant's window maps beneath the owner's, which keeps focus")
        #expect(double.key(.press(Sym.tab, [.ctrl, .alt])).consumes)
        #expect(double.focused == WindowID(4), "the focus switch reaches it")
        double.destroy(4)
        #expect(double.focused == WindowID(2))
        double.destroy(2)
        #expect(double.focused == nil, "no hidden window gets focus, even with none of the session's left")
        #expect(double.blocked == [AuditKind.foreignWindow, AuditKind.foreignWindow],
                "the helper's and the stranger's windows mapped during the session")
    }

    @Test("Single App Mode's gap hides every window but the app's and covers every output")
    func kioskGap() {
        var double = DeskDouble(DeskMode.kiosk.setup())
        #expect(double.desk.kioskGap)
        double.window(1, Owners.stranger)
        #expect(!double.isShown(1))
        #expect(double.focused == nil)
        double.window(2, Owners.app)
        #expect(!double.desk.kioskGap)
        #expect(double.isShown(1) && double.isShown(2))
        #expect(double.focused == WindowID(2))
        double.unmap(2)
        #expect(double.desk.kioskGap)
        #expect(!double.isShown(1))
        #expect(double.focused == nil)
        #expect(double.curtainRules.curtainUp(outputIndex: 0))
    }
}

@Suite("Desk: what the app's exit means")
struct DeskExitTests {
    @Test("plain and --assessment: Carrel stops with the app's status", arguments: [DeskMode.plain, .assessment], [Int32(0), 3, 137])
    func stops(mode: DeskMode, status: Int32) {
        var double = DeskDouble(mode.setup())
        double.window(1, Owners.app)
        double.appExits(status: status)
        #expect(double.stoppedWith == status)
        #expect(!double.relaunchPending)
        if mode == .assessment {
            #expect(double.events[SessionID(1)] == [.began, .ended], "the app's exit ends its session as `end` would")
        }
    }

    @Test("kiosk: relaunched per the schedule, never stopping until it gives up (then never with 0)")
    func kiosk() {
        var double = DeskDouble(DeskMode.kiosk.setup(maximumRelaunches: 2))
        double.window(1, Owners.app)
        double.destroy(1)
        double.appExits(status: 0, after: .milliseconds(10))
        #expect(double.stoppedWith == nil)
        #expect(double.relaunchPending)
        double.relaunchFires()
        double.appExits(status: 4, after: .milliseconds(10))
        #expect(double.stoppedWith == nil)
        double.relaunchFires()
        double.appExits(status: 0, after: .milliseconds(10))
        #expect(double.stoppedWith == 1, "giving up is never success")
    }

    @Test("a failed relaunch counts as a run that died at once")
    func failedLaunch() {
        var double = DeskDouble(DeskMode.kiosk.setup(maximumRelaunches: 1))
        double.appExits(status: 2, after: .milliseconds(10))
        #expect(double.relaunchPending)
        let now = double.now
        double.run { $0.appLaunchFailed("no such file", now: now) }
        #expect(double.stoppedWith == 1)
    }

    @Test("kiosk + assessment: the exit ends the session, the gap hides the desktop, the next run gets a new session")
    func kioskAssessment() {
        var double = DeskDouble(DeskMode.kioskAssessment.setup())
        double.window(1, Owners.stranger)
        double.window(2, Owners.app)
        #expect(double.events[SessionID(1)] == [.began])
        #expect(!double.isShown(1))
        // The app exits before its window is gone: the gap holds anyway.
        double.appExits(status: 9)
        #expect(double.events[SessionID(1)] == [.began, .ended])
        #expect(double.desk.restrictions == nil)
        #expect(double.desk.kioskGap)
        #expect(!double.isShown(1))
        #expect(double.stoppedWith == nil)
        double.destroy(2)
        double.relaunchFires()
        #expect(!double.isShown(1))
        double.window(3, Owners.relaunchedApp(1))
        #expect(double.events[SessionID(2)] == [.began])
        #expect(double.desk.restrictions?.owner == Owners.relaunchedApp(1).client)
        #expect(!double.isShown(1))
        #expect(double.focused == WindowID(3))
    }

    @Test("an exit while the on-behalf session is still beginning withdraws it without stopping a kiosk")
    func exitWhileBeginning() {
        var double = DeskDouble(DeskMode.kioskAssessment.setup())
        double.presentsAtOnce = false
        double.window(1, Owners.app)
        #expect(double.desk.isLive(SessionID(1)))
        double.appExits(status: 1)
        #expect(!double.desk.isLive(SessionID(1)))
        #expect(double.desk.restrictions == nil)
        #expect(double.stoppedWith == nil)
        double.relaunchFires()
        double.presentsAtOnce = true
        double.window(2, Owners.relaunchedApp(1))
        #expect(double.events[SessionID(2)] == [.began])
    }

    @Test("a session that fails to begin ends the app and Carrel with status 1, in any mode",
          arguments: [DeskMode.assessment, .kioskAssessment])
    func failedBegin(mode: DeskMode) {
        var double = DeskDouble(mode.setup())
        double.restrictionsSucceed = false
        double.window(1, Owners.app)
        #expect(double.stoppedWith == 1)
    }
}

@Suite("Desk: Guided Access and the modes")
struct DeskModeTests {
    @Test("lock pins the topmost app window; refused under --assessment and without an app window")
    func lock() {
        var plain = DeskDouble(DeskMode.plain.setup())
        #expect(plain.lock().failure?.code == .noApp)
        plain.window(1, Owners.app)
        plain.window(2, Owners.helper)
        guard case .success(let id) = plain.lock() else { Issue.record("lock refused"); return }
        #expect(plain.desk.restrictions?.owner == Owners.helper.client)
        #expect(plain.desk.controlMode == "guided_access")
        #expect(plain.lock().failure?.code == .wrongState)
        #expect(plain.unlock("0000").failure?.code == .wrongPasscode)
        #expect(plain.unlock(rightPasscode) == .success(id))
        #expect(plain.desk.restrictions == nil)
        #expect(plain.desk.controlMode == "standard")

        var assessment = DeskDouble(DeskMode.assessment.setup())
        assessment.window(1, Owners.app)
        #expect(assessment.lock().failure?.code == .wrongState)
    }

    @Test("a lock whose restrictions fail locks nothing")
    func failedLock() {
        var double = DeskDouble(DeskMode.plain.setup())
        double.window(1, Owners.app)
        double.restrictionsSucceed = false
        guard case .success(let id) = double.lock() else { Issue.record("refused before beginning"); return }
        #expect(!double.desk.isLive(id))
        #expect(double.desk.guidedAccess.session == nil)
    }

    @Test("a reload changes the keys and the policy in force")
    func reload() {
        var double = DeskDouble(DeskMode.plain.setup())
        double.window(1, Owners.app)
        var policy = double.desk.policy
        policy.guidedAccess.passcodeHash = nil
        double.desk.adopt(policy, emergency: nil, unlockKeys: nil)
        #expect(double.desk.policy.guidedAccess.passcodeHash == nil)
        #expect(double.lock().failure?.code == .notConfigured)
    }
}

extension Result {
    var failure: Failure? { if case .failure(let failure) = self { return failure } else { return nil } }
}
