import CarrelCore

/// Keysyms the Desk tests press (xkbcommon's values, lower-cased).
enum Sym {
    static let y: UInt32 = 0x79
    static let n: UInt32 = 0x6e
    static let a: UInt32 = 0x61
    static let u: UInt32 = 0x75
    static let escape: UInt32 = 0xff1b
    static let enter: UInt32 = 0xff0d
    static let delete: UInt32 = 0xffff
    static let vt2: UInt32 = Keybindings.switchVT1 + 1
    static let tab: UInt32 = 0xff09
    static let equal: UInt32 = 0x3d
}

extension KeyPress {
    static func press(_ sym: UInt32, _ modifiers: Set<KeyCombination.Modifier> = [], text: String = "") -> KeyPress {
        KeyPress(pressed: true, keysyms: [sym], modifiers: modifiers, text: text)
    }
    static func release(_ sym: UInt32) -> KeyPress { KeyPress(pressed: false, keysyms: [sym]) }
    /// A printable character typed (the passcode entry reads the text).
    static func typed(_ character: Character) -> KeyPress {
        let sym = character.unicodeScalars.first!.value
        return KeyPress(pressed: true, keysyms: [sym], text: String(character))
    }
}

/// The emergency binding and the unlock keys the tests configure.
let emergencyKeys = EmergencyBinding(modifiers: [.ctrl, .alt], keysym: Sym.delete)
let unlockCombination = EmergencyBinding(modifiers: [.ctrl, .alt], keysym: Sym.u)
/// The passcode the stand-in hash check accepts.
let rightPasscode = "2468"

/// How Carrel was started, for the tests.
enum DeskMode: String, CaseIterable, CustomStringConvertible {
    case plain, kiosk, assessment, kioskAssessment

    var description: String { rawValue }

    func setup(maximumRelaunches: Int = 3, virtualTerminals: Bool = true) -> Desk.Setup {
        var policy = Policy.builtIn
        policy.kiosk = KioskPolicy(enabled: self == .kiosk || self == .kioskAssessment, maximumRelaunches: maximumRelaunches)
        policy.guidedAccess = GuidedAccessPolicy(passcodeHash: "stand-in hash")
        let assessment = (self == .assessment || self == .kioskAssessment) ? AssessmentConfiguration() : nil
        return Desk.Setup(policy: policy, appName: "exam-app", assessment: assessment, emergency: emergencyKeys,
                          unlockKeys: unlockCombination, hasVirtualTerminals: virtualTerminals)
    }
}

/// Stands in for the compositor: carries out the Desk's effects the way
/// Server does (restrictions applied and reported, frames presented, the
/// prompt drawn, the passcode checked, the app relaunched when its timer
/// fires) and records what the screen, focus and keys did, so tests check
/// the Desk's promises against what "happened".
struct DeskDouble {
    var desk: Desk
    var now: Instant = .seconds(5000)
    /// Whether the restriction hook applies (else it fails).
    var restrictionsSucceed = true
    /// Whether outputs present a frame at once (else the presentation waits).
    var presentsAtOnce = true
    /// Whether the prompt can be drawn.
    var promptDrawable = true
    /// What starting participants answers (nil: they start).
    var participantStartFailure: String?

    private(set) var focused: WindowID?
    private(set) var shown: [WindowID: Bool] = [:]
    private(set) var promptText: String?
    private(set) var curtainRules = ScreenRules()
    /// The owner of the window each delivered key went to (nil: no window).
    private(set) var deliveredTo: [WindowOwner?] = []
    private(set) var consumedKeys = 0
    /// The windows keys went to the input method's grab for.
    private(set) var composedFor: [WindowID] = []
    private(set) var compositionsCancelled = 0
    private(set) var preeditsCommitted = 0
    /// Keys the Desk held for an absent input method and has not let go.
    private(set) var keysHeld = 0
    /// When the Desk asked to hear that held keys' bound passed.
    private(set) var heldKeyDeadline: Instant?
    private(set) var inputMethodRelaunches: [Duration] = []
    private(set) var inputMethodRestarts = 0
    private(set) var stoppedWith: Int32?
    /// Clients whose app the Desk asked to stop (`end --force`), in order.
    private(set) var appsStopped: [ClientID] = []
    private(set) var relaunchPending = false
    private(set) var relaunches = 0
    private(set) var vtSwitches: [Int] = []
    /// What the outputs draw for the magnifier, as the compositor was last told.
    private(set) var drawnMagnifier = Magnifier.off
    private(set) var selections: [(SelectionKind, accepted: Bool, audited: Bool)] = []
    private(set) var blocked: [String] = []
    private(set) var passcodeChecks = 0
    /// Windows raised by the focus switch, in order.
    private(set) var raised: [WindowID] = []
    /// Participants the Desk asked to relaunch, in order.
    private(set) var participantRelaunches: [String] = []
    /// The participants running, as the compositor would hold them.
    private(set) var runningParticipants: Set<String> = []
    /// Sessions waiting for a presented frame.
    private(set) var awaitingFrame: Set<SessionID> = []
    /// Every event sent on a session, in order.
    private(set) var events: [SessionID: [SessionEvent]] = [:]
    /// Every effect carried out, in order (for tests that look for one).
    private(set) var log: [DeskEffect] = []
    private var windowOwners: [WindowID: WindowOwner] = [:]
    /// The client whose selection or drag request is being decided (tests' bookkeeping).
    var lastRequester: ClientID?

    init(_ setup: Desk.Setup) {
        desk = Desk(setup)
        // As Server does at start: the scene and curtains follow the rules Carrel starts under.
        curtainRules = desk.screenRules
        run { $0.appLaunched(now: .seconds(5000)) }
    }

    /// Gives the Desk an input and carries out everything that follows.
    @discardableResult
    mutating func run(_ input: (inout Desk) -> [DeskEffect]) -> [DeskEffect] {
        let effects = input(&desk)
        carryOut(effects)
        return effects
    }

    mutating func carryOut(_ effects: [DeskEffect]) {
        var queue = effects[...]
        while let effect = queue.popFirst() {
            log.append(effect)
            queue.append(contentsOf: perform(effect))
        }
    }

    private mutating func perform(_ effect: DeskEffect) -> [DeskEffect] {
        switch effect {
        case .session(let session):
            return performSession(session)
        case .deliverKey(let window):
            deliveredTo.append(window.flatMap { windowOwners[$0] })
        case .consumeKey:
            consumedKeys += 1
        case .deliverKeyToInputMethod(let window):
            composedFor.append(window)
        case .holdKey:
            keysHeld += 1
        case .releaseHeldKeys(let keys, let destination):
            keysHeld -= keys.count
            switch destination {
            case .inputMethod(let window): composedFor += Array(repeating: window, count: keys.count)
            case .window(let window): deliveredTo += Array(repeating: windowOwners[window], count: keys.count)
            }
        case .armHeldKeyDeadline(let delay):
            heldKeyDeadline = now.advanced(by: delay)
        case .relayComposition:
            break
        case .commitPreedit:
            preeditsCommitted += 1
        case .cancelComposition:
            compositionsCancelled += 1
        case .relaunchInputMethod(let delay):
            inputMethodRelaunches.append(delay)
        case .restartInputMethod:
            // As Server does: the engine ends and starts at once with the setting that holds now.
            inputMethodRestarts += 1
            let now = self.now
            let prediction = desk.enginePredictionAllowed
            desk.inputMethodLaunched(now: now, prediction: prediction)
        case .focus(let window):
            focused = window
            return desk.focusMoved(to: window)
        case .setWindowShown(let id, let isShown):
            shown[id] = isShown
        case .applyScreenRules(let rules):
            curtainRules = rules
            for (id, owner) in windowOwners { shown[id] = rules.shows(owner) }
        case .showPrompt(let text):
            promptText = text
        case .hidePrompt:
            promptText = nil
        case .checkPasscode(let passcode):
            passcodeChecks += 1
            let now = self.now
            return desk.passcodeChecked(matched: passcode == rightPasscode, now: now).1
        case .acceptSelection(let kind):
            selections.append((kind, true, false))
        case .refuseSelection(let kind, let audit):
            selections.append((kind, false, audit != nil))
        case .recordBlocked(let kind, _, _):
            blocked.append(kind)
        case .relaunchApp:
            relaunchPending = true
        case .stop(let status):
            guard stoppedWith == nil else { return [] }
            stoppedWith = status
            return desk.shutdown("Carrel is shutting down")
        case .stopApp(let client, _, _, _):
            appsStopped.append(client)
        case .switchVirtualTerminal(let vt):
            vtSwitches.append(vt)
        case .drawMagnifier(let magnifier):
            drawnMagnifier = magnifier
        case .raiseWindow(let id):
            raised.append(id)
        case .relaunchParticipant(let id):
            participantRelaunches.append(id)
            if let failure = participantStartFailure { return desk.participantLaunchFailed(id, failure) }
            runningParticipants.insert(id)
        case .recordOwnBegin, .log:
            break
        }
        return []
    }

    private mutating func performSession(_ effect: SessionEffect) -> [DeskEffect] {
        let now = self.now
        switch effect {
        case .send(let id, let event):
            events[id, default: []].append(event)
        case .applyRestrictions(let set):
            // As Server does: participants the set adds start first, all or nothing.
            if let failure = participantStartFailure, !Set(set.participants).isSubset(of: runningParticipants) {
                return desk.restrictionsApplied(set, .participantUnavailable(failure), now: now)
            }
            guard restrictionsSucceed else { return desk.restrictionsApplied(set, .failed("hook refused"), now: now) }
            runningParticipants = Set(set.participants)
            return desk.restrictionsApplied(set, .applied, now: now)
        case .revertRestrictions(let id):
            // As Server does: only the restrictions held are reverted, and the participants with them.
            if desk.restrictions == nil || desk.restrictions?.session == id { runningParticipants = [] }
        case .startPresentationWait(let id, _):
            if presentsAtOnce { return desk.framePresented(id, now: now) }
            awaitingFrame.insert(id)
        case .stopPresentationWait(let id):
            awaitingFrame.remove(id)
        case .askConfirmation(let id, let prompt, _):
            guard promptDrawable else { return desk.confirmationUnavailable(id, "no output") }
            promptText = prompt
            desk.confirmationShown(id)
        case .dismissConfirmation:
            promptText = nil
        default:
            break
        }
        return []
    }

    // MARK: - Inputs as the compositor gives them

    mutating func window(_ id: UInt64, _ owner: WindowOwner, mapped: Bool = true) {
        let window = WindowID(id)
        windowOwners[window] = owner
        run { $0.toplevelCreated(window, owner: owner) }
        if mapped { map(id) }
    }

    mutating func map(_ id: UInt64) {
        let now = self.now
        run { $0.toplevelMapped(WindowID(id), now: now) }
    }

    mutating func unmap(_ id: UInt64) { run { $0.toplevelUnmapped(WindowID(id)) } }

    mutating func destroy(_ id: UInt64) {
        windowOwners[WindowID(id)] = nil
        shown[WindowID(id)] = nil
        run { $0.toplevelDestroyed(WindowID(id)) }
    }

    @discardableResult
    mutating func key(_ key: KeyPress) -> [DeskEffect] {
        let now = self.now
        return run { $0.key(key, now: now) }
    }

    mutating func appExits(status: Int32 = 0, after lived: Duration = .seconds(1)) {
        now = now.advanced(by: lived)
        let now = self.now
        run { $0.appExited(status: status, description: "status \(status)", now: now) }
    }

    /// The relaunch timer fires and the app starts again.
    mutating func relaunchFires() {
        guard relaunchPending else { return }
        relaunchPending = false
        relaunches += 1
        let now = self.now
        run { $0.appLaunched(now: now) }
    }

    /// Frames are presented for every session waiting for one.
    mutating func presentFrames() {
        for id in awaitingFrame.sorted() {
            awaitingFrame.remove(id)
            let now = self.now
            run { $0.framePresented(id, now: now) }
        }
    }

    mutating func lock() -> Result<SessionID, ControlFailure> {
        let now = self.now
        let (result, effects) = desk.lock(now: now)
        carryOut(effects)
        return result
    }

    mutating func unlock(_ passcode: String) -> Result<SessionID, ControlFailure> {
        let now = self.now
        let (refusal, refused) = desk.admitUnlock(now: now)
        carryOut(refused)
        if let refusal { return .failure(refusal) }
        let (result, effects) = desk.passcodeChecked(matched: passcode == rightPasscode, now: now)
        carryOut(effects)
        return result
    }

    /// Participant `id` exits on its own.
    mutating func participantExits(_ id: String) {
        runningParticipants.remove(id)
        let now = self.now
        run { $0.participantExited(id, description: "killed by signal 9", now: now) }
    }

    /// Whether a window is in the scene now.
    func isShown(_ id: UInt64) -> Bool { shown[WindowID(id)] ?? false }
}

extension Array where Element == DeskEffect {
    var delivers: Bool { contains { if case .deliverKey = $0 { return true } else { return false } } }
    var consumes: Bool { contains(.consumeKey) }
    var stopStatus: Int32? {
        compactMap { if case .stop(let status) = $0 { return status } else { return nil } }.first
    }
    var relaunchDelay: Duration? {
        compactMap { if case .relaunchApp(let delay) = $0 { return delay } else { return nil } }.first
    }
}

/// Owners the tests use: the app (client 1), a second app-role client, a
/// participant and an untrusted client.
enum Owners {
    static let app = WindowOwner(client: ClientID(1), role: .app)
    static let helper = WindowOwner(client: ClientID(2), role: .app)
    static let calculator = WindowOwner(client: ClientID(3), role: .participant, participantID: "calculator")
    static let stranger = WindowOwner(client: ClientID(4), role: .untrusted)
    /// The app after a relaunch: a new connection.
    static func relaunchedApp(_ run: Int) -> WindowOwner { WindowOwner(client: ClientID(100 + UInt64(run)), role: .app) }
}
