/// Something the `Desk` decided the compositor must do. Every input returns
/// a list of these; the compositor carries them out in order and reports
/// back what it was asked to report (restrictions applied, prompt shown,
/// passcode checked, app launched).
public enum DeskEffect: Sendable, Hashable, CustomStringConvertible {
    /// One of the Invigilator's effects, as `SessionEffect` documents it.
    case session(SessionEffect)
    /// Record in the audit log that Carrel begins `SessionID` itself for
    /// `owner` (`--assessment`, Guided Access), before the Invigilator's effects.
    case recordOwnBegin(SessionID, owner: ClientID, detail: String)
    /// Hand the key to the focused client (`window` is the focus Core decided).
    case deliverKey(window: WindowID?)
    /// The key is Carrel's: no client sees it, press or release.
    case consumeKey
    /// Hand the key to the input method's keyboard grab: it composes for
    /// `window` (the focus, which may use the input method now).
    case deliverKeyToInputMethod(window: WindowID)
    /// The key waits in Core for the input method (its engine is starting,
    /// restarting or gone): nobody gets it now; a `.releaseHeldKeys` later
    /// hands it on, exactly once.
    case holdKey(window: WindowID)
    /// Hand on these held keys, in order, each with its own modifiers, then
    /// the keyboard's current modifiers: to the engine's grab, or to the
    /// window as plain keys (focusing it first if the seat's focus is
    /// elsewhere; the `.focus` that follows, if any, moves it on).
    case releaseHeldKeys([KeyPress], to: HeldKeyDestination)
    /// Report `Desk.heldKeysDeadlinePassed` once `after` has passed.
    case armHeldKeyDeadline(after: Duration)
    /// Let the input method's preedit, commit or deletion through to the
    /// focused window's text input.
    case relayComposition(window: WindowID)
    /// The preedit the focused text input shows is committed to it as text,
    /// once: the engine that composed it is gone and cannot finish it, and
    /// what the student typed and saw stays theirs.
    case commitPreedit
    /// Any composition in progress is abandoned: the focused text input gets
    /// an empty preedit and `done`; the input method is deactivated (and
    /// activated afresh if the focus may still compose).
    case cancelComposition
    /// Launch the input method again once `after` has passed, then report
    /// `inputMethodLaunched`.
    case relaunchInputMethod(after: Duration)
    /// End the running engine and launch it at once with the prediction
    /// setting that holds now (`Desk.enginePredictionAllowed`).
    case restartInputMethod
    /// Keyboard focus on this window (activated), or on none.
    case focus(WindowID?)
    /// Put this mapped window on top of its layer (the focus switch).
    case raiseWindow(WindowID)
    /// Start participant `id` of the live session (its process and its own
    /// socket) again, then report `participantLaunched` or
    /// `participantLaunchFailed` (`on_exit = "relaunch"`).
    case relaunchParticipant(String)
    /// A window just created: in the scene or not, before it can draw.
    case setWindowShown(WindowID, Bool)
    /// Make the untrusted layer, every window and every curtain match these rules.
    case applyScreenRules(ScreenRules)
    /// Draw Carrel's prompt (the passcode entry) with this text.
    case showPrompt(String)
    /// Take Carrel's prompt down.
    case hidePrompt
    /// Check this passcode against the policy's hash (slow, elsewhere), then
    /// report with `Desk.passcodeChecked(matched:now:)`.
    case checkPasscode(String)
    /// Let the selection or drag through.
    case acceptSelection(SelectionKind)
    /// Refuse it (destroy the source or drag); `audit` is the detail of the
    /// blocked attempt to record for the requester, nil when it was recorded
    /// already when asked for.
    case refuseSelection(SelectionKind, audit: String?)
    /// Record a blocked attempt by `client` of this audit kind.
    case recordBlocked(kind: String, client: ClientID, detail: String)
    /// Launch the app again once `after` has passed (Single App Mode), then
    /// report `appLaunched` or `appLaunchFailed`.
    case relaunchApp(after: Duration)
    /// End Carrel with this exit status.
    case stop(status: Int32)
    /// Stop the process of `client` (the app that owned a force-ended
    /// session): send what is queued for it now, SIGTERM once `notice` has
    /// passed if it has not exited, SIGKILL once `grace` more has passed if
    /// it is still there; record each step in the audit log with `why`. Its
    /// exit is reported as any exit is (`appExited` for the launched app).
    case stopApp(ClientID, notice: Duration, grace: Duration, why: String)
    /// Switch to this virtual terminal (a real seat only).
    case switchVirtualTerminal(Int)
    /// Draw the outputs through this magnifier (zoom and colour filter);
    /// `.off` renders them as they are.
    case drawMagnifier(Magnifier)
    /// A line for Carrel's log.
    case log(SessionLogEntry)

    public var description: String {
        switch self {
        case .session(let effect): return effect.description
        case .recordOwnBegin(let id, let owner, let detail): return "record own begin of \(id) for \(owner): \(detail)"
        case .deliverKey(let window): return "deliver key to \(window.map(\.description) ?? "no window")"
        case .consumeKey: return "consume key"
        case .deliverKeyToInputMethod(let window): return "deliver key to the input method for \(window)"
        case .holdKey(let window): return "hold key for the input method, for \(window)"
        case .releaseHeldKeys(let keys, let destination): return "release \(keys.count) held keys to \(destination)"
        case .armHeldKeyDeadline(let delay): return "let held keys go after \(delay)"
        case .relayComposition(let window): return "relay composition to \(window)"
        case .commitPreedit: return "commit the shown preedit"
        case .cancelComposition: return "cancel composition"
        case .relaunchInputMethod(let delay): return "relaunch the input method after \(delay)"
        case .restartInputMethod: return "restart the input method"
        case .focus(let window): return "focus \(window.map(\.description) ?? "none")"
        case .raiseWindow(let id): return "raise \(id)"
        case .relaunchParticipant(let id): return "relaunch participant \(id)"
        case .setWindowShown(let id, let shown): return "\(shown ? "show" : "hide") \(id)"
        case .applyScreenRules(let rules): return "apply screen rules \(rules)"
        case .showPrompt(let text): return "show prompt \"\(text)\""
        case .hidePrompt: return "hide prompt"
        case .checkPasscode: return "check passcode"
        case .acceptSelection(let kind): return "accept \(kind)"
        case .refuseSelection(let kind, let audit): return "refuse \(kind)\(audit == nil ? "" : " (audited)")"
        case .recordBlocked(let kind, let client, let detail): return "blocked \(kind) by \(client): \(detail)"
        case .relaunchApp(let delay): return "relaunch the app after \(delay)"
        case .stop(let status): return "stop with status \(status)"
        case .stopApp(let client, let notice, let grace, let why): return "stop the app of \(client) (SIGTERM after \(notice), SIGKILL \(grace) later): \(why)"
        case .switchVirtualTerminal(let vt): return "switch to VT \(vt)"
        case .drawMagnifier(let magnifier): return "draw magnifier \(magnifier)"
        case .log(let entry): return "log \(entry)"
        }
    }
}
