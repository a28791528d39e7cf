import CarrelCore
import Testing

/// The input method's decisions in the Desk: who may compose, where keys go
/// while the engine holds the grab, what it may send, its popup, the hints
/// it is told, a second engine, and the engine's death.
@Suite("Desk: the input method")
struct InputMethodDeskTests {
    static let engine = ClientID(50)
    static let secondEngine = ClientID(51)

    /// A desk whose policy names an input method, the app's window mapped;
    /// in a session begun on the app's behalf with `allowed` features, or none.
    func desk(session allowed: Set<AssessmentFeature>? = nil, inputMethod: Bool = true) -> DeskDouble {
        var policy = Policy.builtIn
        if inputMethod { policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"]) }
        let setup = Desk.Setup(policy: policy, appName: allowed == nil ? nil : "exam-app",
                               assessment: allowed.map { AssessmentConfiguration(allowedFeatures: $0) })
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        if allowed != nil { #expect(double.events[SessionID(1)] == [.began]) }
        return double
    }

    /// The engine bound and took the keyboard grab.
    func withEngine(_ double: inout DeskDouble) {
        #expect(double.desk.inputMethodBound(Self.engine, role: .inputMethod).accepted)
        let (granted, _) = double.desk.keyboardGrabRequested(by: Self.engine, now: double.now)
        #expect(granted)
    }

    typealias ComposeCase = (session: Set<AssessmentFeature>?, policyNamesOne: Bool, expected: Bool)
    static let composeCases: [ComposeCase] = [
        (nil, true, true),
        (nil, false, false),
        ([.inputMethod], true, true),
        ([], true, false),
        ([.spellCheck, .predictiveText], true, false),
    ]

    @Test("who may compose: policy, role, session feature", arguments: composeCases)
    func mayCompose(session: Set<AssessmentFeature>?, policyNamesOne: Bool, expected: Bool) {
        let double = desk(session: session, inputMethod: policyNamesOne)
        #expect(double.desk.mayCompose(in: WindowID(1)) == expected)
        #expect(double.desk.compositionTarget == (expected ? WindowID(1) : nil))
    }

    @Test("untrusted windows and unknown windows never compose")
    func untrustedNeverComposes() {
        var double = desk()
        double.window(2, Owners.stranger)
        #expect(double.desk.mayCompose(in: WindowID(2)) == false)
        #expect(double.desk.mayCompose(in: WindowID(99)) == false)
        #expect(double.desk.mayCompose(in: nil) == false)
    }

    @Test("a participant's window the session shows may compose when the input method is allowed")
    func participantComposes() {
        var double = desk(session: [.inputMethod])
        double.window(3, Owners.calculator)
        // Not a participant of this session: hidden, so no composing either.
        #expect(double.desk.mayCompose(in: WindowID(3)) == false)
        var outside = desk()
        outside.window(3, Owners.calculator)
        #expect(outside.desk.mayCompose(in: WindowID(3)))
    }

    @Test("with the grab, keys for a window that may compose go to the engine; Carrel's bindings stay Carrel's")
    func keysGoToTheGrab() {
        var double = desk(session: [.inputMethod])
        withEngine(&double)
        let effects = double.key(.press(Sym.a))
        #expect(effects == [.deliverKeyToInputMethod(window: WindowID(1))])
        #expect(double.deliveredTo.isEmpty)
        #expect(double.composedFor == [WindowID(1)])
    }

    @Test("input method denied: the same keys go straight to the window, grab or not")
    func deniedKeysGoToTheClient() {
        var double = desk(session: [])
        withEngine(&double)
        #expect(double.key(.press(Sym.a)) == [.deliverKey(window: WindowID(1))])
        #expect(double.composedFor.isEmpty)
        #expect(double.deliveredTo == [Owners.app])
    }

    @Test("without a grab keys go to the window")
    func noGrab() {
        var double = desk(session: [.inputMethod])
        #expect(double.desk.inputMethodBound(Self.engine, role: .inputMethod).accepted)
        #expect(double.key(.press(Sym.a)) == [.deliverKey(window: WindowID(1))])
    }

    @Test("the emergency binding is never the engine's")
    func emergencyBeatsTheGrab() {
        var policy = Policy.builtIn
        policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"])
        var double = DeskDouble(Desk.Setup(policy: policy, appName: "exam-app",
                                           assessment: AssessmentConfiguration(allowedFeatures: [.inputMethod]),
                                           emergency: emergencyKeys))
        double.window(1, Owners.app)
        withEngine(&double)
        let effects = double.key(.press(Sym.delete, [.ctrl, .alt]))
        #expect(effects.first == .consumeKey)
        #expect(double.composedFor.isEmpty)
    }

    @Test("only the input-method role's first live engine is listened to; a second one is refused and recorded")
    func secondEngineRefused() {
        var double = desk()
        #expect(double.desk.inputMethodBound(Self.engine, role: .inputMethod).accepted)
        let (accepted, effects) = double.desk.inputMethodBound(Self.secondEngine, role: .inputMethod)
        #expect(accepted == false)
        #expect(effects.contains(.recordBlocked(kind: AuditKind.virtualInput, client: Self.secondEngine,
                                                detail: "bound the input method while another one composes; told it is unavailable")))
        #expect(double.desk.inputMethodBound(ClientID(60), role: .app).accepted == false)
        #expect(double.desk.inputMethodBound(ClientID(61), role: .untrusted).accepted == false)
        // The second one cannot grab the keyboard either; the engine grabs once.
        let secondGrab = double.desk.keyboardGrabRequested(by: Self.secondEngine, now: double.now).granted
        let firstGrab = double.desk.keyboardGrabRequested(by: Self.engine, now: double.now).granted
        let doubleGrab = double.desk.keyboardGrabRequested(by: Self.engine, now: double.now).granted
        #expect(secondGrab == false)
        #expect(firstGrab)
        #expect(doubleGrab == false)
        // Once the first is gone, the next live one of the role is listened to.
        _ = double.run { $0.inputMethodDisconnected(Self.engine, now: .seconds(5000)) }
        #expect(double.desk.inputMethodBound(Self.secondEngine, role: .inputMethod).accepted)
    }

    @Test("composition is relayed only from the engine, only to the window that may compose")
    func compositionRelayed() {
        var double = desk(session: [.inputMethod])
        double.window(2, Owners.stranger)
        withEngine(&double)
        #expect(double.desk.compositionSent(by: Self.engine, for: WindowID(1)) == [.relayComposition(window: WindowID(1))])
        for (client, window) in [(Self.secondEngine, WindowID(1)), (Self.engine, WindowID(2)), (Self.engine, nil)] {
            let effects = double.desk.compositionSent(by: client, for: window)
            #expect(!effects.contains { if case .relayComposition = $0 { true } else { false } })
            #expect(effects.contains { if case .recordBlocked(AuditKind.virtualInput, client, _) = $0 { true } else { false } })
        }
        let denied = desk(session: [])
        #expect(denied.desk.compositionSent(by: Self.engine, for: WindowID(1)).first != .relayComposition(window: WindowID(1)))
    }

    @Test("the virtual keyboard's keys reach only the window that may compose, and only the engine's")
    func virtualKeyboard() {
        var double = desk(session: [.inputMethod])
        withEngine(&double)
        #expect(double.desk.virtualKeyboardKey(from: Self.engine, role: .inputMethod) == [.deliverKey(window: WindowID(1))])
        #expect(double.desk.virtualKeyboardKey(from: Self.secondEngine, role: .inputMethod) == [.consumeKey])
        var denied = desk(session: [])
        withEngine(&denied)
        #expect(denied.desk.virtualKeyboardKey(from: Self.engine, role: .inputMethod) == [.consumeKey])
    }

    @Test("the candidate popup shows only over a window that may compose")
    func popup() {
        var double = desk(session: [.inputMethod])
        withEngine(&double)
        #expect(double.desk.candidatePopupShown(for: Self.engine))
        #expect(double.desk.candidatePopupShown(for: Self.secondEngine) == false)
        var denied = desk(session: [])
        withEngine(&denied)
        #expect(denied.desk.candidatePopupShown(for: Self.engine) == false)
        var unfocused = desk()
        withEngine(&unfocused)
        unfocused.unmap(1)
        #expect(unfocused.desk.candidatePopupShown(for: Self.engine) == false)
    }

    typealias HintCase = (session: Set<AssessmentFeature>?, hints: UInt32, relayed: UInt32)
    /// Completion 0x1, spellcheck 0x2, auto-capitalization 0x4, lowercase 0x8, multiline 0x200.
    static let hintCases: [HintCase] = [
        (nil, 0x207, 0x207),
        ([.inputMethod], 0x207, 0x200),
        ([.inputMethod, .predictiveText], 0x7, 0x1),
        ([.inputMethod, .spellCheck], 0x7, 0x2),
        ([.inputMethod, .autocorrect], 0xF, 0xC),
        ([.inputMethod, .predictiveText, .spellCheck, .autocorrect], 0x7, 0x7),
    ]

    @Test("hints the session denies are stripped; outside a session they pass", arguments: hintCases)
    func hints(session: Set<AssessmentFeature>?, hints: UInt32, relayed: UInt32) {
        #expect(desk(session: session).desk.relayedContentHints(hints) == relayed)
    }

    @Test("a session's beginning cancels any composition in progress")
    func beginCancels() {
        let double = desk(session: [.inputMethod])
        #expect(double.compositionsCancelled == 1)
        #expect(double.log.firstIndex(of: .cancelComposition)! < double.log.lastIndex(of: .focus(WindowID(1)))!)
    }

    @Test("the engine's death commits what its composition showed, then ends it; leaves the session alone; relaunches it with a back-off")
    func engineDies() {
        var double = desk(session: [.inputMethod])
        withEngine(&double)
        double.desk.inputMethodLaunched(now: double.now, prediction: true)
        let before = double.compositionsCancelled
        let effects = double.run { $0.inputMethodDisconnected(Self.engine, now: .seconds(5000)) }
        // The shown preedit (a syllable the student typed) is committed before the composition ends.
        let commit = effects.firstIndex(of: .commitPreedit)
        let cancel = effects.firstIndex(of: .cancelComposition)
        #expect(commit != nil && cancel != nil && commit! < cancel!)
        #expect(double.preeditsCommitted == 1)
        #expect(double.compositionsCancelled == before + 1)
        #expect(!effects.contains { if case .session = $0 { true } else { false } })
        #expect(double.events[SessionID(1)] == [.began])
        let now = double.now.advanced(by: .seconds(1))
        double.run { $0.inputMethodExited("killed by signal 9", now: now) }
        #expect(double.inputMethodRelaunches == [.milliseconds(250)])
        // Keys wait for the engine while it is away (InputMethodKeyHoldTests).
        #expect(double.key(.press(Sym.a)).contains(.holdKey(window: WindowID(1))))
        // A disconnect of anyone else changes nothing.
        let unrelated = double.run { $0.inputMethodDisconnected(Self.secondEngine, now: .seconds(5000)) }
        #expect(unrelated.isEmpty)
    }

    @Test("prediction: on outside sessions, in a session only when predictive_text is allowed")
    func predictionFollowsTheSession() {
        #expect(desk().desk.enginePredictionAllowed)
        #expect(desk(session: [.inputMethod]).desk.enginePredictionAllowed == false)
        #expect(desk(session: [.inputMethod, .predictiveText]).desk.enginePredictionAllowed)
    }

    @Test("a session that denies prediction restarts an engine running with it, once; its end restarts it again")
    func predictionRestarts() {
        var policy = Policy.builtIn
        policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"])
        var double = DeskDouble(Desk.Setup(policy: policy))
        double.desk.inputMethodLaunched(now: double.now, prediction: true)
        double.window(1, Owners.app)
        let id = double.desk.allocateSessionID()
        let now = double.now
        double.run { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                              configuration: AssessmentConfiguration(allowedFeatures: [.inputMethod]), now: now) }
        #expect(double.events[id] == [.began])
        #expect(double.inputMethodRestarts == 1)
        #expect(double.desk.inputMethod.launchedWithPrediction == false)
        double.run { $0.end(id) }
        #expect(double.inputMethodRestarts == 2)
        #expect(double.desk.inputMethod.launchedWithPrediction == true)
    }

    @Test("a session that allows prediction, or an engine not running, restarts nothing", arguments: [true, false])
    func noNeedlessRestart(running: Bool) {
        var policy = Policy.builtIn
        policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"])
        var double = DeskDouble(Desk.Setup(policy: policy))
        if running { double.desk.inputMethodLaunched(now: double.now, prediction: true) }
        double.window(1, Owners.app)
        let id = double.desk.allocateSessionID()
        let now = double.now
        let features: Set<AssessmentFeature> = running ? [.inputMethod, .predictiveText] : [.inputMethod]
        double.run { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                              configuration: AssessmentConfiguration(allowedFeatures: features), now: now) }
        #expect(double.events[id] == [.began])
        #expect(double.inputMethodRestarts == 0)
    }

    @Test("quick deaths double the back-off and give up after ten in a row")
    func relaunchBackoff() {
        var double = desk()
        var now = double.now
        for _ in 0..<11 {
            double.desk.inputMethodLaunched(now: now, prediction: true)
            now = now.advanced(by: .milliseconds(10))
            double.run { $0.inputMethodExited("status 1", now: now) }
        }
        #expect(double.inputMethodRelaunches == [250, 500, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000].map { .milliseconds($0) })
    }
}

@Suite("Composed text limit")
struct ComposedTextLimitTests {
    @Test("text within the limit passes; longer text is cut at a character boundary")
    func bounded() {
        #expect(ComposedTextLimit.bounded("日本語") == ("日本語", false))
        let long = String(repeating: "語", count: 2000)  // 6000 bytes
        let (cut, truncated) = ComposedTextLimit.bounded(long)
        #expect(truncated)
        #expect(cut.utf8.count == 3999)
        #expect(cut == String(repeating: "語", count: 1333))
        #expect(ComposedTextLimit.bounded("ab語", maximumBytes: 4) == ("ab", true))
        #expect(ComposedTextLimit.clampedOffset(10, in: "abc") == 3)
        #expect(ComposedTextLimit.clampedOffset(1, in: "abc") == 1)
    }
}
