import CarrelCore
import CarrelTestSupport
import Testing

/// No key is lost while the input method's engine is starting, restarting or
/// gone: keys for a window that would compose are held in Core, in order,
/// and leave exactly once — to the engine when its grab is back, or to the
/// window they were typed in as plain keys when the bound passes, the
/// engine is given up, or focus or the composition target moves.
@Suite("Desk: keys held while the input method is away")
struct InputMethodKeyHoldTests {
    /// Where a key ended up, as the compositor would carry it out.
    enum Route: Equatable, CustomStringConvertible {
        case engine(WindowID)
        case window(WindowID?)
        /// Not arrived (yet).
        case missing

        var description: String {
            switch self {
            case .missing: return "missing"
            case .engine(let window): return "engine for \(window)"
            case .window(let window): return "window \(window.map(\.description) ?? "none")"
            }
        }
    }

    /// A student typing at a desk whose policy names an input method, with
    /// an engine whose life the test drives. Follows every effect in order
    /// as Server does (held keys let go inside the input's effects, the
    /// typed key itself after them) and records where each key went.
    struct Typist {
        var double: DeskDouble
        /// Every key the student typed that Carrel did not take, in order.
        private(set) var typed: [KeyPress] = []
        /// Where each key arrived, in order of arrival.
        private(set) var received: [(key: KeyPress, route: Route)] = []
        /// Failures the compositor's side saw (a key sent where it cannot arrive).
        private(set) var problems: [String] = []
        /// Keys sent to the engine it has not read yet (a kill loses them with it).
        private(set) var inbox: [(key: KeyPress, window: WindowID)] = []
        /// Keys the engine read after a session's begin or end cancelled its
        /// composition: what they composed is dropped by design (nothing
        /// composed before a session may enter it, nor leave it).
        private(set) var abandoned: [KeyPress] = []
        /// The engine reads every key as it is sent (else only on `engineReads`).
        var engineReadsAtOnce = true
        /// The engine passes every key on as fcitx5 with hangul passes on a
        /// digit: a commit that changes nothing (its empty preedit) before
        /// each key on its virtual keyboard.
        var enginePassesKeysOn = false
        private(set) var engine = ClientID(500)
        private var nextEngine: UInt64 = 501
        private var seen = 0
        private var cancelled = false
        private var releasingUnanswered = false
        private var seatFocus: WindowID?
        private var sequence: UInt32 = 0

        /// The app's window mapped (a session begun on its behalf with
        /// `allowed` features, or none), then the engine running with the
        /// prediction that holds and its grab taken.
        init(session allowed: Set<AssessmentFeature>? = nil, engineRunning: Bool = true) {
            self.init(Desk.Setup(policy: Self.policy(), appName: allowed == nil ? nil : "exam-app",
                                 assessment: allowed.map { AssessmentConfiguration(allowedFeatures: $0) }),
                      windows: [(1, Owners.app)], engineRunning: engineRunning)
        }

        init(_ setup: Desk.Setup, windows: [(UInt64, WindowOwner)], engineRunning: Bool = true) {
            double = DeskDouble(setup)
            for (id, owner) in windows { double.window(id, owner) }
            follow()
            if engineRunning {
                launch()
                bindAndGrab()
            }
        }

        static func policy() -> Policy {
            var policy = Policy.builtIn
            policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"])
            policy.participants = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"])]
            policy.session.knownParticipants = ["calculator"]
            return policy
        }

        var now: Instant { double.now }
        var held: [KeyPress] { double.desk.inputMethod.heldKeys.keys }

        /// A fresh key (press or release), told apart by its stroke's time.
        mutating func key(_ pressed: Bool = true, keycode: UInt32 = 30, modifiers: UInt32 = 0) -> KeyPress {
            sequence += 1
            return KeyPress(pressed: pressed, keysyms: [Sym.a], text: pressed ? "a" : "",
                            stroke: KeyStroke(keycode: keycode, pressed: pressed, time: sequence,
                                              modifiers: KeyStroke.Modifiers(depressed: modifiers)))
        }

        /// The student types `count` keys (presses and releases in turn).
        mutating func type(_ count: Int = 1) {
            for index in 0..<count { type(key(index % 2 == 0)) }
        }

        mutating func type(_ key: KeyPress) {
            let now = self.now
            let effects = double.run { $0.key(key, now: now) }
            let restarted = followLog()
            defer { settle(restarted: restarted) }
            if effects.contains(.consumeKey) { return }
            typed.append(key)
            for effect in effects {
                switch effect {
                case .deliverKey(let window):
                    if window != seatFocus { problems.append("\(key) delivered to \(String(describing: window)) with the seat on \(String(describing: seatFocus))") }
                    received.append((key, .window(window)))
                case .deliverKeyToInputMethod(let window):
                    if !double.desk.inputMethod.keyboardGrabbed { problems.append("\(key) sent to an engine without a grab") }
                    inbox.append((key, window))
                default:
                    continue
                }
            }
        }

        /// Any other input, carried out.
        mutating func step(_ input: (inout Desk) -> [DeskEffect]) {
            double.run(input)
            follow()
        }

        /// Walks the effects carried out since last time: focus moves, held
        /// keys let go (checked against where the seat and the grab are).
        private mutating func follow() {
            settle(restarted: followLog())
        }

        /// The effects since last time; true when the engine was restarted.
        private mutating func followLog() -> Bool {
            let log = double.log
            var restarted = false
            cancelled = false
            while seen < log.count {
                let effect = log[seen]
                seen += 1
                if case .releaseHeldKeys = effect {} else { releasingUnanswered = false }
                switch effect {
                case .focus(let window):
                    seatFocus = window
                case .releaseHeldKeys(let keys, .inputMethod(let window)):
                    if !double.desk.inputMethod.keyboardGrabbed { problems.append("held keys sent to an engine without a grab") }
                    inbox += keys.map { ($0, window) }
                case .releaseHeldKeys(let keys, .window(let window)):
                    // Held keys go before focus leaves their window; keys a dead
                    // engine had not answered may find it elsewhere (the
                    // compositor enters their window for them).
                    if window != seatFocus && !releasingUnanswered { problems.append("held keys for \(window) let go with the seat on \(String(describing: seatFocus))") }
                    received += keys.map { ($0, .window(window)) }
                    // Keys the engine had not read, given to the window instead:
                    // it reads them now (what it makes of them is dropped).
                    for key in keys {
                        guard let index = inbox.firstIndex(where: { $0.key == key }) else { continue }
                        inbox.remove(at: index)
                        double.desk.inputMethodAnswered(by: engine, press: key.pressed, now: now)
                    }
                case .cancelComposition:
                    cancelled = true
                case .log(let entry) where entry.message.contains("keys the engine had not answered go to"):
                    releasingUnanswered = true
                    continue
                case .restartInputMethod:
                    restarted = true
                default:
                    continue
                }
            }
            return restarted
        }

        private mutating func settle(restarted: Bool) {
            // As Server does: the engine being replaced is disconnected at once.
            if restarted {
                disconnect()
            } else if cancelled {
                // Deactivated, it reads what it was sent; its output is dropped.
                abandoned += inbox.map(\.key)
                for (key, _) in inbox { double.desk.inputMethodAnswered(by: engine, press: key.pressed, now: now) }
                inbox.removeAll()
            }
            if engineReadsAtOnce { engineReads(inbox.count) }
        }

        /// The engine reads `count` keys it was sent, answering each as
        /// fcitx5 does (a commit or a key passed on).
        mutating func engineReads(_ count: Int) {
            for _ in 0..<min(count, inbox.count) {
                let (key, window) = inbox.removeFirst()
                received.append((key, .engine(window)))
                if enginePassesKeysOn && key.pressed { engineCommitsNothing() }
                double.desk.inputMethodAnswered(by: engine, press: key.pressed, now: now)
            }
        }

        /// The engine commits an empty preedit over none (fcitx5 does on
        /// activation and before each key it passes on).
        mutating func engineCommitsNothing() {
            double.desk.inputMethodCommitted(by: engine, shownPreedit: "", preedit: "", committed: "", deletes: false, now: now)
        }

        // MARK: The engine's life

        mutating func launch() {
            double.desk.inputMethodLaunched(now: now, prediction: double.desk.enginePredictionAllowed)
        }

        /// Carrel asks the helper to start it and goes on.
        mutating func askHelper() {
            double.desk.inputMethodStarting(prediction: double.desk.enginePredictionAllowed)
        }

        mutating func helperAnswers() {
            let now = self.now
            step { $0.inputMethodStarted(now: now) }
        }

        mutating func bindAndGrab() {
            if double.desk.inputMethod.engine == nil {
                engine = ClientID(nextEngine)
                nextEngine += 1
                _ = double.desk.inputMethodBound(engine, role: .inputMethod)
            }
            let engine = self.engine
            let now = self.now
            step { $0.keyboardGrabRequested(by: engine, now: now).1 }
        }

        mutating func releaseGrab() {
            double.desk.keyboardGrabReleased(by: engine)
        }

        mutating func disconnect() {
            // What it had not read dies with it.
            inbox.removeAll()
            let engine = self.engine
            let now = self.now
            step { $0.inputMethodDisconnected(engine, now: now) }
        }

        /// The engine's process ends; its connection went first, if it had one.
        mutating func exits() {
            if double.desk.inputMethod.engine != nil { disconnect() }
            let now = self.now
            step { $0.inputMethodExited("killed by signal 9", now: now) }
        }

        /// Time passes; the deadline timer fires if it fell due.
        mutating func wait(_ duration: Duration) {
            // A live engine reads what it was sent long before time goes by.
            engineReads(inbox.count)
            double.now = now.advanced(by: duration)
            if let deadline = double.heldKeyDeadline, deadline <= now {
                let now = self.now
                step { $0.heldKeysDeadlinePassed(now: now) }
            }
        }

        /// Every key typed arrived exactly once, in the order typed, or is
        /// still held (behind all that arrived), and nothing waits longer
        /// than the bound.
        func check() -> [String] {
            var failures = problems
            let arrived = received.map(\.key)
            if arrived + inbox.map(\.key) + held != typed.filter({ !abandoned.contains($0) }) {
                failures.append("typed \(typed.count), arrived \(arrived.count) + in the engine \(inbox.count) + held \(held.count), not the same keys in order")
            }
            if let window = double.desk.inputMethod.heldKeys.window, window != double.desk.compositionTarget {
                failures.append("keys held for \(window) while the composition target is \(String(describing: double.desk.compositionTarget))")
            }
            if let since = double.desk.inputMethod.heldKeys.since, now.duration(since: since) > KeysAwaitingEngine.limit {
                failures.append("keys held \(now.duration(since: since)) (bound \(KeysAwaitingEngine.limit))")
            }
            if !held.isEmpty && double.desk.inputMethod.keyboardGrabbed {
                failures.append("keys held while the engine has the grab")
            }
            return failures
        }

        func routes(_ keys: ArraySlice<KeyPress>) -> [Route] {
            keys.map { key in received.first { $0.key == key }?.route ?? .missing }
        }
    }

    static let app = WindowID(1)

    @Test("with the engine's grab, keys go straight to it; nothing is held")
    func grabHeld() {
        var typist = Typist(session: [.inputMethod])
        typist.type(4)
        #expect(typist.received.map(\.route) == Array(repeating: .engine(Self.app), count: 4))
        #expect(typist.held.isEmpty)
        #expect(typist.check().isEmpty)
    }

    /// What happens to the engine while the student types.
    enum Away: String, CaseIterable, CustomStringConvertible {
        /// Carrel launched it and it has not grabbed yet.
        case starting
        /// Carrel asked the privileged helper to start it; the helper has
        /// not answered yet (the loop does not wait for it).
        case startingThroughHelper
        /// Killed (-9): its connection closes, its exit is reaped, it is relaunched.
        case killed
        /// The session's begin restarts it (prediction off).
        case restartedByBegin
        /// It released the grab and lives (reactivated).
        case grabReleased

        var description: String { rawValue }
    }

    /// Typing with the engine in `away`, 3 keys; returns the typist.
    static func away(_ away: Away) -> Typist {
        var typist: Typist
        switch away {
        case .starting:
            typist = Typist(session: [.inputMethod], engineRunning: false)
            typist.launch()
        case .startingThroughHelper:
            typist = Typist(session: [.inputMethod], engineRunning: false)
            typist.askHelper()
        case .killed:
            typist = Typist(session: [.inputMethod])
            typist.type(2)
            typist.disconnect()
            typist.exits()
        case .restartedByBegin:
            // Outside a session the engine predicts; the session's begin
            // (no predictive_text) restarts it.
            typist = Typist()
            typist.type(2)
            let id = typist.double.desk.allocateSessionID()
            let now = typist.now
            typist.step { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                                   configuration: AssessmentConfiguration(allowedFeatures: [.inputMethod]), now: now) }
            #expect(typist.double.events[id] == [.began])
            #expect(typist.double.inputMethodRestarts == 1)
        case .grabReleased:
            typist = Typist(session: [.inputMethod])
            typist.type(2)
            typist.releaseGrab()
        }
        typist.type(3)
        return typist
    }

    @Test("keys typed while the engine is away wait and go to it, in order, once it grabs", arguments: Away.allCases)
    func heldUntilTheGrab(away: Away) {
        var typist = Self.away(away)
        let before = typist.typed.count - 3
        #expect(typist.held == Array(typist.typed.suffix(3)))
        #expect(typist.double.heldKeyDeadline == typist.now.advanced(by: KeysAwaitingEngine.limit))
        typist.wait(.milliseconds(1500))
        if away == .killed || away == .restartedByBegin { typist.launch() }
        // The helper answers late: keys still wait, for the engine's grab.
        if away == .startingThroughHelper {
            typist.helperAnswers()
            #expect(typist.held.count == 3)
        }
        typist.bindAndGrab()
        typist.type(2)
        #expect(typist.held.isEmpty)
        #expect(typist.routes(typist.typed[before...]) == Array(repeating: .engine(Self.app), count: 5))
        #expect(typist.check().isEmpty, "\(typist.check())")
    }

    @Test("held keys outliving the bound go to their window as plain keys; later keys go plain until the engine shows life",
          arguments: Away.allCases)
    func boundPasses(away: Away) {
        var typist = Self.away(away)
        let before = typist.typed.count - 3
        typist.wait(.milliseconds(1999))
        #expect(typist.held.count == 3)
        typist.wait(.milliseconds(1))
        #expect(typist.held.isEmpty)
        typist.type(2)
        #expect(typist.routes(typist.typed[before...]) == Array(repeating: .window(Self.app), count: 5))
        // A new launch: keys wait for it again.
        typist.launch()
        typist.type(1)
        #expect(typist.held.count == 1)
        typist.bindAndGrab()
        #expect(typist.routes(typist.typed.suffix(1)) == [.engine(Self.app)])
        #expect(typist.check().isEmpty, "\(typist.check())")
    }

    @Test("keys a killed engine had not read are typed by its successor, once; keys it answered are not")
    func unreadKeysSurviveTheEngine() {
        var typist = Typist(session: [.inputMethod])
        typist.engineReadsAtOnce = false
        typist.type(6)
        typist.engineReads(3)  // press, release, press answered; a release and a press, release not
        #expect(typist.double.desk.inputMethod.inEngine.keys == Array(typist.typed.suffix(3)))
        typist.exits()  // kill -9: its connection closes, its exit is reaped
        #expect(typist.held == Array(typist.typed.suffix(3)))
        typist.type(2)
        typist.launch()
        typist.bindAndGrab()
        typist.engineReads(10)
        #expect(typist.received.map(\.key) == typist.typed)
        #expect(typist.routes(typist.typed[...]) == Array(repeating: .engine(Self.app), count: 8))
        #expect(typist.check().isEmpty, "\(typist.check())")
    }

    @Test("keys the engine passes on answer once, though it commits an empty preedit before each: a killed engine's unread keys reach its successor")
    func passedOnKeysAnswerOnce() {
        var typist = Typist(session: [.inputMethod])
        typist.engineReadsAtOnce = false
        typist.enginePassesKeysOn = true
        typist.engineCommitsNothing()  // activated, before it reads anything
        typist.type(10)
        typist.engineReads(4)  // two digits passed on; three presses and releases not read yet
        #expect(typist.double.desk.inputMethod.inEngine.keys == Array(typist.typed.suffix(6)))
        typist.exits()
        #expect(typist.held == Array(typist.typed.suffix(6)))
        typist.type(2)
        typist.launch()
        typist.bindAndGrab()
        typist.engineReads(20)
        #expect(typist.received.map(\.key) == typist.typed)
        #expect(typist.check().isEmpty, "\(typist.check())")
    }

    @Test("a commit answers a key only when it changes what the text input shows",
          arguments: [
            // hangul, a digit: its empty preedit over none, then the digit on its virtual keyboard
            ("", "", "", false, false),
            // hangul, a digit after 한: the preedit ends as the same text, then an empty preedit
            ("한", "", "한", false, false),
            // hangul, ㄱ after 한: 한 committed (nothing changes), then the preedit ㄱ
            ("", "ㄱ", "", false, true),
            // hangul, ㅏ after ㅎ
            ("ㅎ", "하", "", false, true),
            // hangul, BackSpace over ㅎ: the preedit goes
            ("ㅎ", "", "", false, true),
            // pinyin, space over "ni": 你 committed
            ("ni", "", "你", false, true),
            // a deletion of surrounding text
            ("", "", "", true, true),
          ])
    func commitAnswers(shown: String, preedit: String, committed: String, deletes: Bool, answers: Bool) {
        #expect(KeysInEngine.commitAnswersKey(shownPreedit: shown, preedit: preedit, committed: committed, deletes: deletes) == answers)
    }

    @Test("a release the engine read silently and a press it never answered are taken as read after the bound")
    func unansweredForgottenAfterTheBound() {
        var keys = KeysInEngine()
        let press = KeyPress(pressed: true, keysyms: [Sym.a], stroke: KeyStroke(keycode: 30, pressed: true, time: 1))
        let release = KeyPress(pressed: false, keysyms: [Sym.a], stroke: KeyStroke(keycode: 30, pressed: false, time: 2))
        let later = KeyPress(pressed: true, keysyms: [Sym.a], stroke: KeyStroke(keycode: 30, pressed: true, time: 3))
        keys.sent([press, release], for: WindowID(1), now: .seconds(10))
        keys.answered(press: false, now: .seconds(10))  // a release first is not the oldest key: nothing settles
        #expect(keys.keys == [press, release])
        keys.answered(press: true, now: .seconds(10))
        #expect(keys.keys == [release])
        keys.sent([later], for: WindowID(1), now: .seconds(13))
        #expect(keys.keys == [later])
        keys.sent([press], for: WindowID(2), now: .seconds(13))
        #expect(keys.takeAll().map(\.window) == [WindowID(1), WindowID(2)])
        #expect(keys.keys.isEmpty)
    }

    @Test("keys an engine still answering has not reached are not taken as read, however long ago they were sent")
    func backlogIsNotForgotten() {
        var keys = KeysInEngine()
        // 40 held keys given at once to an engine just started on a loaded machine.
        var backlog: [KeyPress] = []
        for index in 0..<40 {
            let pressed = index % 2 == 0
            let stroke = KeyStroke(keycode: 30, pressed: pressed, time: UInt32(index))
            backlog.append(KeyPress(pressed: pressed, keysyms: [Sym.a], stroke: stroke))
        }
        keys.sent(backlog, for: WindowID(1), now: .seconds(10))
        // It answers a press and passes its release on every half second.
        for step in 1...5 {
            let at = Instant.seconds(10).advanced(by: .milliseconds(500 * step))
            keys.answered(press: true, now: at)
            keys.answered(press: false, now: at)
        }
        let typed = KeyPress(pressed: true, keysyms: [Sym.a], stroke: KeyStroke(keycode: 30, pressed: true, time: 99))
        keys.sent([typed], for: WindowID(1), now: Instant.seconds(10).advanced(by: .milliseconds(2600)))
        // 2.6 s after they were sent, 30 are still unanswered: killed now, they go to its successor.
        let unanswered: [KeyPress] = Array(backlog.dropFirst(10)) + [typed]
        #expect(keys.keys == unanswered)
        // Quiet for the bound: what it never answered was read silently.
        keys.sent([typed], for: WindowID(1), now: Instant.seconds(10).advanced(by: .milliseconds(4700)))
        #expect(keys.keys == [typed])
    }

    @Test("a deadline that fires before its time (a stale timer) re-arms for what is left")
    func staleDeadline() {
        var typist = Self.away(.starting)
        let armed = typist.now
        typist.double.now = armed.advanced(by: .milliseconds(500))
        let now = typist.now
        let effects = typist.double.desk.heldKeysDeadlinePassed(now: now)
        #expect(effects == [.armHeldKeyDeadline(after: .milliseconds(1500))])
        #expect(typist.held.count == 3)
    }

    @Test("given up on, the engine's held keys go to the window at once")
    func givenUp() {
        var typist = Typist(session: [.inputMethod])
        var now = typist.now
        for _ in 0..<10 {
            typist.launch()
            now = now.advanced(by: .milliseconds(10))
            typist.double.now = now
            typist.exits()
        }
        typist.launch()
        typist.type(3)
        #expect(typist.held.count == 3)
        typist.exits()  // the eleventh quick death: given up
        #expect(typist.double.inputMethodRelaunches.count == 10)
        #expect(typist.held.isEmpty)
        typist.type(1)
        #expect(typist.received.map(\.route) == Array(repeating: .window(Self.app), count: 4))
        #expect(typist.check().isEmpty, "\(typist.check())")
    }

    /// What moves the composition target away from the window keys were held for.
    enum Move: String, CaseIterable, CustomStringConvertible {
        case anotherWindowMapped, windowUnmapped, sessionDeniesInputMethod, focusSwitch
        var description: String { rawValue }
    }

    @Test("keys held for a window go to it as plain keys before focus or the composition target leaves it",
          arguments: Move.allCases)
    func targetMoves(move: Move) {
        var typist: Typist
        if move == .focusSwitch {
            // A session showing a participant beside the exam; Ctrl+Alt+Tab.
            let configuration = AssessmentConfiguration(allowedFeatures: [.inputMethod], participants: ["calculator"])
            typist = Typist(Desk.Setup(policy: Typist.policy(), appName: "exam-app", assessment: configuration),
                            windows: [(1, Owners.app), (3, Owners.calculator)])
            #expect(typist.double.events[SessionID(1)] == [.began])
            #expect(typist.double.desk.compositionTarget == Self.app)
        } else {
            // Outside a session a second app window takes focus when it maps.
            typist = Typist()
        }
        typist.launch()
        typist.disconnect()
        typist.type(3)
        #expect(typist.held.count == 3)
        switch move {
        case .anotherWindowMapped:
            typist.double.window(2, Owners.helper)
            typist.step { _ in [] }
        case .windowUnmapped:
            typist.double.window(2, Owners.helper)
            typist.step { _ in [] }
            typist.type(2)  // held for window 2 now
            typist.double.unmap(2)
            typist.step { _ in [] }
        case .sessionDeniesInputMethod:
            let id = typist.double.desk.allocateSessionID()
            let now = typist.now
            typist.step { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                                   configuration: AssessmentConfiguration(allowedFeatures: []), now: now) }
        case .focusSwitch:
            typist.type(KeyPress(pressed: true, keysyms: [Sym.tab], modifiers: [.ctrl, .alt]))
        }
        #expect(typist.routes(typist.typed.prefix(3)) == Array(repeating: .window(Self.app), count: 3))
        if move == .windowUnmapped {
            #expect(typist.routes(typist.typed[3..<5]) == Array(repeating: .window(WindowID(2)), count: 2))
        }
        #expect(typist.check().isEmpty, "\(typist.check())")
    }

    @Test("a held key keeps its stroke: keycode, press or release, time, the modifiers it was typed under")
    func strokesKept() {
        var typist = Self.away(.starting)
        let shifted = typist.key(true, keycode: 42, modifiers: 1)
        typist.type(shifted)
        let effects = { () -> [DeskEffect] in
            let engine = typist.engine
            _ = typist.double.desk.inputMethodBound(engine, role: .inputMethod)
            return typist.double.desk.keyboardGrabRequested(by: engine, now: typist.now).1
        }()
        let released = effects.compactMap { if case .releaseHeldKeys(let keys, _) = $0 { keys } else { nil } }.first
        #expect(released?.last?.stroke == KeyStroke(keycode: 42, pressed: true, time: shifted.stroke!.time,
                                                    modifiers: KeyStroke.Modifiers(depressed: 1)))
        #expect(released?.count == 4)
    }

    @Test("Carrel's own keys stay Carrel's while keys are held; the emergency binding is not held")
    func bindingsNotHeld() {
        var policy = Policy.builtIn
        policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"])
        var double = DeskDouble(Desk.Setup(policy: policy, appName: "exam-app",
                                           assessment: AssessmentConfiguration(allowedFeatures: [.inputMethod]),
                                           emergency: emergencyKeys))
        double.window(1, Owners.app)
        double.desk.inputMethodLaunched(now: double.now, prediction: false)
        #expect(double.key(.press(Sym.a)).contains(.holdKey(window: WindowID(1))))
        let emergency = double.key(.press(Sym.delete, [.ctrl, .alt]))
        #expect(emergency.first == .consumeKey)
        #expect(double.keysHeld == 1)
    }

    @Test("a window that may not compose never waits: its keys go straight to it")
    func nonComposingNeverHeld() {
        var typist = Typist(session: [])
        typist.launch()
        typist.disconnect()
        typist.type(3)
        #expect(typist.held.isEmpty)
        #expect(typist.received.map(\.route) == Array(repeating: .window(Self.app), count: 3))
    }

    // MARK: - Random sequences

    enum Operation: CaseIterable {
        case type, typeBurst, engineReads, engineReads2, launch, grab, releaseGrab, kill, exit, waitShort, waitLong,
             mapWindow, unmapWindow, beginSession, endSession
    }

    static let seeds: [UInt64] = (1...12).map { $0 &* 0xD1B5_4A32_D192_ED03 }

    @Test("random sequences: every key arrives exactly once, in order, within the bound", arguments: seeds)
    func randomSequence(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var typist = Typist()
        typist.engineReadsAtOnce = false
        var session: SessionID?
        var extraWindows: [UInt64] = []
        var nextWindow: UInt64 = 10
        var heldAtSomePoint = 0, toEngineAfterHold = 0, plainAfterHold = 0
        var trail: [String] = []
        for step in 0..<1500 {
            let operation = Operation.allCases.randomElement(using: &random)!
            switch operation {
            case .type: typist.type(1)
            case .typeBurst: typist.type(Int.random(in: 2...8, using: &random))
            case .engineReads, .engineReads2: typist.engineReads(Int.random(in: 1...6, using: &random))
            case .launch: typist.launch()
            case .grab: typist.bindAndGrab()
            case .releaseGrab: typist.releaseGrab()
            case .kill:
                if typist.double.desk.inputMethod.engine != nil { typist.disconnect() }
            case .exit: typist.exits()
            case .waitShort: typist.wait(.milliseconds(Int64.random(in: 10...400, using: &random)))
            case .waitLong: typist.wait(.milliseconds(Int64.random(in: 1000...3000, using: &random)))
            case .mapWindow:
                let owner = Bool.random(using: &random) ? Owners.helper : Owners.stranger
                typist.double.window(nextWindow, owner)
                typist.step { _ in [] }
                extraWindows.append(nextWindow)
                nextWindow += 1
            case .unmapWindow:
                if let window = extraWindows.popLast() {
                    typist.double.destroy(window)
                    typist.step { _ in [] }
                }
            case .beginSession:
                guard session == nil else { continue }
                let id = typist.double.desk.allocateSessionID()
                let now = typist.now
                let features: Set<AssessmentFeature> = Bool.random(using: &random) ? [.inputMethod] : (Bool.random(using: &random) ? [.inputMethod, .predictiveText] : [])
                typist.step { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                                       configuration: AssessmentConfiguration(allowedFeatures: features), now: now) }
                if typist.double.desk.isLive(id) { session = id }
            case .endSession:
                guard let id = session else { continue }
                typist.step { $0.end(id) }
                session = nil
            }
            trail.append("\(operation): typed \(typist.typed.count) got \(typist.received.count) inbox \(typist.inbox.count) held \(typist.held.count) inEngine \(typist.double.desk.inputMethod.inEngine.keys.count) grab \(typist.double.desk.inputMethod.keyboardGrabbed) engine \(String(describing: typist.double.desk.inputMethod.engine)) target \(String(describing: typist.double.desk.compositionTarget))")
            if !typist.held.isEmpty { heldAtSomePoint += 1 }
            let failures = typist.check()
            #expect(failures.isEmpty, "seed \(seed) step \(step) (\(operation)): \(failures)\n\(trail.suffix(8).joined(separator: "\n"))")
            if !failures.isEmpty { return }
        }
        for (key, route) in typist.received where typist.double.log.contains(where: {
            if case .releaseHeldKeys(let keys, _) = $0 { keys.contains(key) } else { false } }) {
            if case .engine = route { toEngineAfterHold += 1 } else { plainAfterHold += 1 }
        }
        // The sequence reached what it is meant to test.
        #expect(heldAtSomePoint > 0 && toEngineAfterHold > 0 && plainAfterHold > 0,
                "seed \(seed): held \(heldAtSomePoint) steps, \(toEngineAfterHold) to the engine, \(plainAfterHold) plain")
    }
}
