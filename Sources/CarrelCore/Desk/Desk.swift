/// Everything the compositor decides about who may do what at the machine,
/// in one value: it owns the session `Invigilator` and the mode deciders
/// (`OnBehalfSession` for `--assessment`, `GuidedAccess` with its
/// `PasscodeEntry`, Single App Mode's `RelaunchSchedule`) and the window
/// stack, takes every input the compositor sees, and answers with the
/// `DeskEffect`s to carry out. Pure: no pointers, time is passed in.
///
/// What it combines:
/// - Keys: the confirmation prompt takes every key while it is up, then the
///   passcode entry while it is open, then the unlock keys during a lock,
///   then the session focus switch, then Carrel's bindings (VT switching
///   outside sessions, the emergency binding inside them), then the
///   magnifier's keys (only in an active session that allows
///   `screen_magnifier`); anything else goes to the focused client.
/// - Clipboard, primary selection and drags: during a session only from the
///   session owner's focused input.
/// - Focus and what is shown: a session's restrictions and Single App Mode's
///   gap, as one `ScreenRules`.
/// - Session events: a session Carrel began itself is heard by its mode.
/// - The magnifier (`Desk+Magnifier.swift`): its keys during a session that
///   allows `screen_magnifier`, and its reset when that stops holding.
/// - The input method (`Desk+InputMethod.swift`): which window may compose,
///   keys to its grab, what it may commit, its popup, its death and restarts.
/// - The on-screen keyboard (`Desk+OnScreenKeyboard.swift`): its one band
///   at the bottom, the space left to the session's windows, its keys.
/// - The app's exit: ends the on-behalf session, then Single App Mode
///   relaunches (a fresh on-behalf session begins with the next window) or
///   Carrel stops with the app's status.
public struct Desk: Sendable {
    /// How Carrel was started.
    public struct Setup: Sendable {
        /// The policy Carrel starts with.
        public var policy: Policy
        /// The app's command name, when Carrel launches one.
        public var appName: String?
        /// `--assessment`: the configuration of the session begun on the app's behalf.
        public var assessment: AssessmentConfiguration?
        /// The policy's emergency binding, resolved by xkbcommon.
        public var emergency: EmergencyBinding?
        /// `guided_access.unlock_keys`, resolved by xkbcommon.
        public var unlockKeys: EmergencyBinding?
        /// A real seat with virtual terminals to switch to.
        public var hasVirtualTerminals: Bool
        /// The policy's `[magnifier]` keys, resolved by xkbcommon.
        public var magnifierKeys: MagnifierKeys

        public init(policy: Policy, appName: String? = nil, assessment: AssessmentConfiguration? = nil,
                    emergency: EmergencyBinding? = nil, unlockKeys: EmergencyBinding? = nil,
                    hasVirtualTerminals: Bool = false, magnifierKeys: MagnifierKeys = MagnifierKeys()) {
            self.policy = policy
            self.appName = appName
            self.assessment = assessment
            self.emergency = emergency
            self.unlockKeys = unlockKeys
            self.hasVirtualTerminals = hasVirtualTerminals
            self.magnifierKeys = magnifierKeys
        }
    }

    /// The policy in force: the one Carrel started with, or the last reload.
    public private(set) var policy: Policy
    public internal(set) var invigilator: Invigilator
    public private(set) var guidedAccess = GuidedAccess()
    public private(set) var passcodeEntry = PasscodeEntry()
    /// `--assessment`'s session for the current run of the app.
    public private(set) var onBehalf: OnBehalfSession?
    /// The id of that session once begun.
    public private(set) var onBehalfSessionID: SessionID?
    public internal(set) var windows = WindowStack()
    /// The seat's input method (see `Desk+InputMethod.swift`).
    public internal(set) var inputMethod = InputMethodSeat()
    /// The on-screen keyboard's band (see `Desk+OnScreenKeyboard.swift`).
    public internal(set) var onScreenKeyboard = OnScreenKeyboard()
    /// The restrictions the compositor reported holding.
    public private(set) var restrictions: RestrictionSet?
    /// The session whose confirmation prompt is on screen.
    public private(set) var askingConfirmation: SessionID?
    public private(set) var emergency: EmergencyBinding?
    public private(set) var unlockKeys: EmergencyBinding?
    public internal(set) var magnifierKeys: MagnifierKeys
    /// What Carrel draws over the outputs for `screen_magnifier` (see `Desk+Magnifier.swift`).
    public internal(set) var magnifier = Magnifier.off
    /// Single App Mode is on.
    public let kiosk: Bool
    /// Single App Mode's relaunch decisions; nil when off.
    public private(set) var schedule: RelaunchSchedule?
    /// Single App Mode shows nothing but the app (see `KioskScreen`).
    public private(set) var kioskGap: Bool
    private let appName: String?
    private let assessment: AssessmentConfiguration?
    private let hasVirtualTerminals: Bool
    /// The app exited and no app window mapped since: the gap holds even
    /// while the exited app's windows are still on their way out.
    private var appAway = false
    private var launchedAt: Instant?
    private var launches = 0
    private var nextSession: UInt64 = 1
    /// The session whose frame was presented before every participant it
    /// names showed a window: `began` waits for them (see Desk+Participants).
    var participantWindowWait: SessionID?
    /// Relaunches of each participant in the live session (`on_exit = "relaunch"`).
    var participantRelaunches: [String: Int] = [:]
    /// The owner of the window the compositor last reported focused.
    var focusedOwner: WindowOwner?

    public init(_ setup: Setup) {
        policy = setup.policy
        invigilator = Invigilator(policy: setup.policy.sessionTerms, appLock: setup.policy.appLock)
        appName = setup.appName
        assessment = setup.assessment
        emergency = setup.emergency
        unlockKeys = setup.unlockKeys
        hasVirtualTerminals = setup.hasVirtualTerminals
        magnifierKeys = setup.magnifierKeys
        kiosk = setup.policy.kiosk.enabled
        kioskGap = kiosk
        if kiosk, setup.appName != nil { schedule = RelaunchSchedule(policy: setup.policy.kiosk) }
        if let assessment = setup.assessment, let appName = setup.appName {
            onBehalf = OnBehalfSession(appName: appName, configuration: assessment)
        }
    }

    // MARK: - What holds now

    /// The session's restrictions and the kiosk gap, as one decision.
    public var screenRules: ScreenRules { ScreenRules(restrictions: restrictions, kioskGap: kioskGap) }

    /// The window that should have keyboard focus.
    public var focusTarget: WindowID? { windows.focusTarget(under: screenRules) }

    /// Whether `grabber`'s popup grab of the seat (keyboard, pointer and
    /// touch together, as `xdg_popup.grab` takes them) may stand: only the
    /// client whose window has keyboard focus may hold one. A grab of any
    /// other client — the window switched away from, a hidden or untrusted
    /// client, a role that never had focus — is ended before focus moves and
    /// before input reaches the seat, so the window switched to always gets
    /// the keyboard and the exam's clicks are never swallowed.
    public func seatGrabAllowed(for grabber: ClientID) -> Bool {
        guard let target = focusTarget else { return false }
        return windows.owner(of: target)?.client == grabber
    }

    /// Whether `id` is the session pending, active or interrupted.
    public func isLive(_ id: SessionID) -> Bool { invigilator.liveSessionID == id }

    /// The mode `carrelctl status` reports.
    public var controlMode: String {
        GuidedAccess.controlMode(locked: guidedAccess.session != nil, kiosk: kiosk, assessmentMode: onBehalf != nil)
    }

    /// A fresh id for a session (the protocol's and Carrel's own share them).
    public mutating func allocateSessionID() -> SessionID {
        defer { nextSession += 1 }
        return SessionID(nextSession)
    }

    // MARK: - Keys

    /// A key from a keyboard: exactly one of `.deliverKey` / `.consumeKey` /
    /// `.deliverKeyToInputMethod` / `.holdKey` (held for the input method,
    /// let go later by `.releaseHeldKeys`), with whatever the key sets off.
    public mutating func key(_ key: KeyPress, now: Instant) -> [DeskEffect] {
        if let id = askingConfirmation {
            guard key.pressed, let allowed = AppLock.answer(forPressed: key.keysyms) else { return [.consumeKey] }
            return [.consumeKey,
                    .log(SessionLogEntry(.notice, "assessment: the person at the machine pressed \(allowed ? "Y (allow)" : "N/Escape (refuse)") for \(id)"))]
                + run(invigilator.confirmationAnswered(id, allowed: allowed, now: now))
        }
        if passcodeEntry.isOpen {
            guard key.pressed else { return [.consumeKey] }
            let action = passcodeEntry.key(PasscodeEntry.Key(keysym: key.keysym, text: key.text))
            return [.consumeKey] + perform(action, now: now)
        }
        if key.pressed, guidedAccess.session != nil, let unlockKeys,
           unlockKeys.matches(keysyms: key.keysyms, modifiers: key.modifiers) {
            return [.consumeKey, .log(SessionLogEntry(.notice, "guided access: passcode entry opened at the machine"))]
                + perform(passcodeEntry.open(), now: now)
        }
        // Keys held for the window left behind go to it before focus moves.
        if key.pressed, let effects = switchSessionFocus(key) { return releaseHeldKeysIfTargetMoved() + effects }
        if key.pressed, let action = Keybindings.action(forPressed: key.keysyms, modifiers: key.modifiers,
                                                        restrictionsActive: restrictions != nil, emergency: emergency,
                                                        virtualTerminals: policy.kiosk.virtualTerminalSwitching) {
            switch action {
            case .switchToVirtualTerminal(let vt) where hasVirtualTerminals:
                return [.consumeKey, .log(SessionLogEntry(.info, "switching to virtual terminal \(vt)")), .switchVirtualTerminal(vt)]
            case .switchToVirtualTerminal:
                break  // No terminals to switch to (nested, headless): the key is the client's.
            case .emergencyInterrupt:
                return [.consumeKey, .log(SessionLogEntry(.warning, "emergency key combination pressed at the machine"))]
                    + run(invigilator.administrativeInterrupt("the emergency key combination was pressed at the machine"))
            }
        }
        // After the emergency binding: nothing may shadow it.
        if key.pressed, let effects = magnifierKey(key) { return effects }
        if let held = holdForInputMethod(key, now: now) { return held }
        if let target = inputMethodKeyTarget {
            inputMethod.inEngine.sent([key], for: target, now: now)
            return [.deliverKeyToInputMethod(window: target)]
        }
        return [.deliverKey(window: focusTarget)]
    }

    // MARK: - Clipboard, primary selection, drag

    /// A client asked to set the clipboard or primary selection. During a
    /// session that isolates the clipboard, the request must carry a serial
    /// of input the session owner's focused client received.
    /// - Parameters:
    ///   - focusedClient: the client with keyboard focus at the seat.
    ///   - serialFromFocusedClient: the request's serial is one of its input events.
    ///   - requester: the client that asked, when known.
    public func selectionRequested(_ kind: SelectionKind, focusedClient: ClientID?, serialFromFocusedClient: Bool,
                                   requester: ClientID?) -> [DeskEffect] {
        guard let restrictions, restrictions.isolateClipboard else { return [.acceptSelection(kind)] }
        if focusedClient == restrictions.owner && serialFromFocusedClient { return [.acceptSelection(kind)] }
        return refuse(kind, requester: requester)
    }

    /// A client asked to start a drag from `origin`'s surface: it needs a
    /// pointer grab serial, and during a session must start in the owner's windows.
    public func dragRequested(origin: ClientID?, grabSerialValid: Bool, requester: ClientID?) -> [DeskEffect] {
        guard let origin, grabSerialValid else { return refuse(.drag, requester: requester) }
        guard let restrictions, restrictions.isolateClipboard else { return [.acceptSelection(.drag)] }
        return origin == restrictions.owner ? [.acceptSelection(.drag)] : refuse(.drag, requester: requester)
    }

    /// Anyone else's request was recorded when it was asked for; the owner's
    /// is recorded when refused.
    private func refuse(_ kind: SelectionKind, requester: ClientID?) -> [DeskEffect] {
        let audited = restrictions != nil && requester != nil && requester == restrictions?.owner
        return [.log(SessionLogEntry(.notice, kind.refusalLog)), .refuseSelection(kind, audit: audited ? kind.refusalDetail : nil)]
    }

    // MARK: - Windows

    /// A toplevel was created: shown or not before it can draw.
    public mutating func toplevelCreated(_ id: WindowID, owner: WindowOwner) -> [DeskEffect] {
        windows.created(id, owner: owner)
        return [.setWindowShown(id, screenRules.shows(owner))]
    }

    /// A toplevel mapped: it goes on top, except that a participant's goes
    /// beneath the exam's so the student stays in the exam until they
    /// switch (Ctrl+Alt+Tab); an app window ends the kiosk gap and, under
    /// `--assessment`, the app's first one begins its session.
    public mutating func toplevelMapped(_ id: WindowID, now: Instant) -> [DeskEffect] {
        guard let owner = windows.owner(of: id) else { return [] }
        if owner.role == .participant {
            // Beneath the session owner's window (any role: an app-requested
            // lock's too); outside a session, the app's.
            let exam = restrictions.flatMap { set in windows.entries.last { $0.isMapped && $0.owner.client == set.owner } }
                ?? windows.topmostMapped(role: .app)
            windows.mapped(id, beneath: exam?.id)
        } else {
            windows.mapped(id)
        }
        var effects: [DeskEffect] = []
        if restrictions != nil && !screenRules.shows(owner) {
            effects.append(.recordBlocked(kind: AuditKind.foreignWindow, client: owner.client,
                                          detail: "mapped a toplevel during a session; it stays hidden and gets no focus"))
        }
        if owner.role == .app { appAway = false }
        effects += updateKioskGap()
        effects += focusEffects()
        effects += participantWindowMapped(owner)
        effects += beginOnBehalfIfDue(owner: owner, now: now)
        return effects
    }

    public mutating func toplevelUnmapped(_ id: WindowID) -> [DeskEffect] {
        windows.unmapped(id)
        return updateKioskGap() + focusEffects()
    }

    public mutating func toplevelDestroyed(_ id: WindowID) -> [DeskEffect] {
        windows.destroyed(id)
        return updateKioskGap() + focusEffects()
    }

    /// A keyboard appeared: it must enter the right window.
    public mutating func keyboardAdded() -> [DeskEffect] { focusEffects() }

    private mutating func updateKioskGap() -> [DeskEffect] {
        let gap = kiosk && (appAway || KioskScreen.isGap(kiosk: true, mappedRoles: windows.mappedRoles))
        guard gap != kioskGap else { return [] }
        kioskGap = gap
        return [.log(SessionLogEntry(.notice, gap ? "kiosk: the app has no window; showing only the app role until it maps one"
                                                  : "kiosk: the app mapped a window"))] + screenChanged()
    }

    mutating func screenChanged() -> [DeskEffect] {
        releaseHeldKeysIfTargetMoved() + [.applyScreenRules(screenRules), .focus(focusTarget)]
    }

    // MARK: - The app

    /// The app was launched (first run or a relaunch).
    public mutating func appLaunched(now: Instant) -> [DeskEffect] {
        launchedAt = now
        launches += 1
        guard launches == 1, let schedule else { return [] }
        return [.log(SessionLogEntry(.notice, "kiosk: Single App Mode on: relaunching the app up to \(schedule.maximumRelaunches) times in a row, back-off \(schedule.initialBackoff.secondsText) doubling to \(schedule.maximumBackoff.secondsText)"))]
    }

    /// A relaunch failed: it counts as a run that died at once.
    public mutating func appLaunchFailed(_ message: String, now: Instant) -> [DeskEffect] {
        launchedAt = now
        return decideRelaunch(lived: .zero, why: "could not launch: \(message)", status: 1)
    }

    /// The app exited (or was killed) with Carrel's exit status for it: its
    /// on-behalf session ends; Single App Mode relaunches it (or gives up),
    /// otherwise Carrel stops with that status.
    public mutating func appExited(status: Int32, description: String, now: Instant) -> [DeskEffect] {
        var effects = [DeskEffect.log(SessionLogEntry(.notice, "app exited: \(description)"))]
        if schedule != nil {
            // The gap goes up before the session's restrictions come down:
            // nothing but the app shows in between.
            appAway = true
            effects += updateKioskGap()
        }
        if var session = onBehalf {
            let hadSession = session.appExited()
            onBehalf = session
            if hadSession, let id = onBehalfSessionID { effects += endOwnSession(id) }
        }
        guard schedule != nil else { return effects + [.stop(status: status)] }
        let lived = launchedAt.map { now.duration(since: $0) } ?? .zero
        effects += decideRelaunch(lived: lived, why: description, status: status == 0 ? 1 : status)
        // The next run of the app gets a session of its own.
        if let assessment, let appName {
            onBehalf = OnBehalfSession(appName: appName, configuration: assessment)
            onBehalfSessionID = nil
        }
        return effects
    }

    /// `status`: what Carrel ends with if it gives up (never 0: giving up is
    /// not success).
    private mutating func decideRelaunch(lived: Duration, why: String, status: Int32) -> [DeskEffect] {
        guard var schedule else { return [.stop(status: status)] }
        let decision = schedule.appExited(lived: lived)
        self.schedule = schedule
        switch decision {
        case .relaunch(let delay, let attempt):
            return [.log(SessionLogEntry(.notice, "kiosk: app ended (\(why)) after \(lived.secondsText); relaunching in \(delay.secondsText) (relaunch \(attempt) of at most \(schedule.maximumRelaunches) in a row)")),
                    .relaunchApp(after: delay)]
        case .giveUp(let relaunches):
            return [.log(SessionLogEntry(.error, "kiosk: giving up: the app ended (\(why)) within \(schedule.stabilityWindow.secondsText) of launch after \(relaunches) relaunches in a row; exiting with status \(status)")),
                    .stop(status: status)]
        }
    }

    // MARK: - Sessions Carrel begins itself

    private mutating func beginOnBehalfIfDue(owner: WindowOwner, now: Instant) -> [DeskEffect] {
        guard var session = onBehalf, session.toplevelMapped(role: owner.role) else { return [] }
        onBehalf = session
        let id = allocateSessionID()
        onBehalfSessionID = id
        return [.log(SessionLogEntry(.notice, "assessment mode: \(session.appName) mapped its first window; beginning a session on its behalf (\(session.configuration))")),
                .recordOwnBegin(id, owner: owner.client, detail: "begun by Carrel on the app's behalf: \(session.configuration)")]
            + run(invigilator.begin(id, client: owner.client, role: owner.role, surface: .mappedToplevel,
                                    configuration: session.configuration, now: now))
    }

    /// Ends a session Carrel began: a begun one as the protocol's `end`; a
    /// pending one is withdrawn (it never began, there is nothing to end).
    private mutating func endOwnSession(_ id: SessionID) -> [DeskEffect] {
        if invigilator.session(id)?.phase.isPending == true {
            return [.log(SessionLogEntry(.notice, "\(id) withdrawn before it began"))] + run(invigilator.destroy(id))
        }
        return run(invigilator.end(id))
    }

    /// The Invigilator sent `event` on `id`: a session Carrel began itself is
    /// heard by its mode.
    private mutating func heard(_ event: SessionEvent, on id: SessionID) -> [DeskEffect] {
        if id == onBehalfSessionID, var session = onBehalf {
            guard let reaction = session.heard(event) else { return [] }
            onBehalf = session
            // Carrel's shutdown ends the app.
            return [.log(reaction.log)] + (reaction.endApp ? [.stop(status: 1)] : [])
        }
        guard id == guidedAccess.session else { return [] }
        switch event {
        case .began:
            return [.log(SessionLogEntry(.notice, "guided access: \(id) began: the screen is locked to the app"))]
        case .failed(let reason, let message):
            guidedAccess.sessionOver(id)
            return [.log(SessionLogEntry(.error, "guided access: \(id) failed to begin: \(reason): \(message)"))] + closePasscodeEntry()
        case .interrupted(let reason, let message):
            return [.log(SessionLogEntry(.warning, "guided access: \(id) interrupted: \(reason): \(message); the lock holds until unlocked"))]
        case .ended:
            guidedAccess.sessionOver(id)
            return closePasscodeEntry()
        default:
            return []
        }
    }

    // MARK: - Guided Access

    /// `carrelctl lock`: pins the client of the topmost mapped app window.
    /// Carry out the effects, then check `isLive` of the session: a lock
    /// that failed to begin locks nothing.
    public mutating func lock(now: Instant) -> (Result<SessionID, ControlFailure>, [DeskEffect]) {
        let topmost = windows.topmostMapped(role: .app)
        switch guidedAccess.admitLock(configured: policy.guidedAccess.passcodeHash != nil, assessmentMode: onBehalf != nil,
                                      sessionLive: invigilator.liveSessionID != nil, topmostApp: topmost?.owner.client) {
        case .failure(let failure):
            return (.failure(failure), [.log(SessionLogEntry(.warning, "guided access: lock refused: \(failure.message)"))])
        case .success(let client):
            let id = allocateSessionID()
            guidedAccess.locked(id)
            let configuration = AssessmentConfiguration()
            let effects: [DeskEffect] = [
                .log(SessionLogEntry(.notice, "guided access: locking the screen to the app (client \(client))")),
                .recordOwnBegin(id, owner: client, detail: "begun by Carrel on the app's behalf: \(configuration)"),
            ] + run(invigilator.begin(id, client: client, role: .app, surface: .mappedToplevel, configuration: configuration, now: now))
            return (.success(id), effects)
        }
    }

    /// `carrelctl unlock`: whether its passcode may be checked now (wrong
    /// passcodes are rate limited). When nil, check it and report with
    /// `passcodeChecked`.
    public func admitUnlock(now: Instant) -> (ControlFailure?, [DeskEffect]) {
        if case .failure(let failure) = guidedAccess.admitUnlock(at: now) {
            return (failure, [.log(SessionLogEntry(.warning, "guided access: unlock refused: \(failure.message)"))])
        }
        return (nil, [])
    }

    /// The passcode (from `carrelctl unlock` or the on-screen entry) was
    /// checked: a match ends the lock; a mismatch is counted and shown.
    public mutating func passcodeChecked(matched: Bool, now: Instant) -> (Result<SessionID, ControlFailure>, [DeskEffect]) {
        switch guidedAccess.unlockChecked(matched: matched, at: now) {
        case .failure(let failure):
            let effects = [DeskEffect.log(SessionLogEntry(.warning, "guided access: \(failure.message); \(guidedAccess.attempts.totalFailures) wrong passcode(s) since Carrel started"))]
                + perform(passcodeEntry.refused(failure.message), now: now)
            return (.failure(failure), effects)
        case .success(let id):
            let effects = [DeskEffect.log(SessionLogEntry(.notice, "guided access: unlocked \(id) with the passcode"))]
                + closePasscodeEntry() + endOwnSession(id)
            return (.success(id), effects)
        }
    }

    private mutating func perform(_ action: PasscodeEntry.Action?, now: Instant) -> [DeskEffect] {
        switch action {
        case nil: return []
        case .show(let text): return [.showPrompt(text)]
        case .close: return [.hidePrompt]
        case .submit(let passcode):
            let (refusal, effects) = admitUnlock(now: now)
            guard let refusal else { return [.checkPasscode(passcode)] }
            return effects + perform(passcodeEntry.refused(refusal.message), now: now)
        }
    }

    private mutating func closePasscodeEntry() -> [DeskEffect] {
        guard passcodeEntry.isOpen else { return [] }
        passcodeEntry.close()
        return [.hidePrompt]
    }

    // MARK: - The protocol's requests and the compositor's reports

    /// `carrel_assessment_manager_v1.begin` for session `id` (from `allocateSessionID`).
    public mutating func begin(_ id: SessionID, client: ClientID, role: Role, executable: String? = nil,
                               surface: SurfaceReadiness, configuration: AssessmentConfiguration?, now: Instant) -> [DeskEffect] {
        run(invigilator.begin(id, client: client, role: role, executable: executable, surface: surface,
                              configuration: configuration, now: now))
    }

    public mutating func end(_ id: SessionID) -> [DeskEffect] { run(invigilator.end(id)) }

    public mutating func update(_ id: SessionID, to configuration: AssessmentConfiguration) -> [DeskEffect] {
        run(invigilator.update(id, to: configuration))
    }

    public mutating func destroy(_ id: SessionID) -> [DeskEffect] { run(invigilator.destroy(id)) }

    /// The outcome of an `.applyRestrictions`: applied ones hold from now.
    public mutating func restrictionsApplied(_ set: RestrictionSet, _ outcome: RestrictionOutcome, now: Instant) -> [DeskEffect] {
        var effects: [DeskEffect] = []
        if case .applied = outcome {
            restrictions = set
            // An update that stops allowing the magnifier takes it away at once.
            if !set.allowedFeatures.contains(.screenMagnifier) { effects += resetMagnifier("the session no longer allows screen_magnifier") }
            // Nothing composed before the session may be committed into it.
            effects.append(.cancelComposition)
            effects += restartEngineIfPredictionChanged()
            effects += screenChanged()
        }
        return effects + run(invigilator.restrictionsApplied(set.session, outcome, now: now))
    }

    /// The confirmation prompt for `id` is on screen: it takes every key.
    public mutating func confirmationShown(_ id: SessionID) { askingConfirmation = id }

    public mutating func confirmationUnavailable(_ id: SessionID, _ message: String) -> [DeskEffect] {
        run(invigilator.confirmationUnavailable(id, message))
    }

    public mutating func confirmationDeadlinePassed(_ id: SessionID, now: Instant) -> [DeskEffect] {
        run(invigilator.confirmationDeadlinePassed(id, now: now))
    }

    /// A frame showing only the session was presented everywhere: it begins,
    /// unless a participant it names has no window yet (then `began` waits
    /// for one, within the same bounded wait).
    public mutating func framePresented(_ id: SessionID, now: Instant) -> [DeskEffect] {
        if let waiting = holdForParticipantWindows(id) { return waiting }
        return run(invigilator.framePresented(id, now: now))
    }

    public mutating func presentationDeadlinePassed(_ id: SessionID, now: Instant) -> [DeskEffect] {
        if let unavailable = participantsWithoutWindows(id, now: now) { return unavailable }
        return run(invigilator.presentationDeadlinePassed(id, now: now))
    }

    public mutating func timeLimitReached(_ id: SessionID, now: Instant) -> [DeskEffect] {
        run(invigilator.timeLimitReached(id, now: now))
    }

    /// A restriction stopped holding.
    public mutating func integrityLost(_ message: String) -> [DeskEffect] { run(invigilator.integrityLost(message)) }

    /// Carrel is stopping: sessions hear it, no new one begins.
    public mutating func shutdown(_ message: String) -> [DeskEffect] { run(invigilator.shutdown(message)) }

    // MARK: - The administrator (carrelctl)

    /// `end --reason`.
    public mutating func administrativeEnd(reason: String, expecting expected: SessionID? = nil) -> (Result<ControlOutcome, ControlFailure>, [DeskEffect]) {
        do throws(ControlFailure) {
            let (outcome, effects) = try invigilator.administrativeEnd(reason: reason, expecting: expected)
            return (.success(outcome), run(effects))
        } catch {
            return (.failure(error), [])
        }
    }

    /// `end --force --reason`: the session ends whatever its app does, and
    /// the app that owned it is stopped: `notice` to exit by itself after
    /// `ended`, then SIGTERM, then SIGKILL once `grace` has passed (a hung
    /// app must not keep the machine).
    public mutating func administrativeForceEnd(reason: String, notice: Duration = ControlRequest.forceEndNotice,
                                                grace: Duration = ControlRequest.forceEndGrace)
        -> (Result<ControlOutcome, ControlFailure>, [DeskEffect])
    {
        do throws(ControlFailure) {
            var (outcome, owner, effects) = try invigilator.administrativeForceEnd(reason: reason)
            outcome.appStopGraceSeconds = UInt32(grace.components.seconds)
            let stop = DeskEffect.stopApp(owner, notice: notice, grace: grace, why: "session \(outcome.session) force-ended by an administrator: \(outcome.message ?? reason)")
            return (.success(outcome), run(effects) + [stop])
        } catch {
            return (.failure(error), [])
        }
    }

    /// `extend MINUTES`.
    public mutating func extendTimeLimit(byMinutes minutes: Int, now: Instant, expecting expected: SessionID? = nil) -> (Result<ControlOutcome, ControlFailure>, [DeskEffect]) {
        do throws(ControlFailure) {
            let (outcome, effects) = try invigilator.extendTimeLimit(byMinutes: minutes, now: now, expecting: expected)
            return (.success(outcome), run(effects))
        } catch {
            return (.failure(error), [])
        }
    }

    /// `reload` accepted `policy` (its keys resolved): what can change while
    /// running applies from the next session.
    public mutating func adopt(_ policy: Policy, emergency: EmergencyBinding?, unlockKeys: EmergencyBinding?,
                               magnifierKeys: MagnifierKeys? = nil) {
        self.policy = policy
        self.emergency = emergency
        self.unlockKeys = unlockKeys
        if let magnifierKeys { self.magnifierKeys = magnifierKeys }
        invigilator.adopt(policy: policy.sessionTerms, appLock: policy.appLock)
    }

    // MARK: - The Invigilator's effects

    /// Wraps the Invigilator's effects, keeping what Desk tracks in step.
    mutating func run(_ effects: [SessionEffect]) -> [DeskEffect] {
        var result: [DeskEffect] = []
        for effect in effects {
            result.append(.session(effect))
            switch effect {
            case .send(let id, let event):
                switch event {
                case .interrupted: result += resetMagnifier("the session was interrupted")
                case .ended: result += resetMagnifier("the session ended")
                default: break
                }
                result += heard(event, on: id)
            case .dismissConfirmation(let id):
                if askingConfirmation == id { askingConfirmation = nil }
            case .revertRestrictions(let id):
                if restrictions?.session == id {
                    restrictions = nil
                    result += resetMagnifier("the session's restrictions were lifted")
                    result.append(.cancelComposition)
                    result += restartEngineIfPredictionChanged()
                    participantWindowWait = nil
                    participantRelaunches = [:]
                    result += screenChanged()
                }
            default:
                break
            }
        }
        return result
    }
}
