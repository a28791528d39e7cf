/// The input method's decisions: which window may compose now, where keys
/// go while the engine holds the keyboard grab, what it may send, whether
/// its candidate popup shows, and what its death means.
///
/// Who may compose: only a window of the app or a participant; during a
/// session only a window the session shows, and only when its configuration
/// allows `input_method`; outside a session whenever the policy names an
/// input method (there is none otherwise).
extension Desk {
    /// Whether `window` may use the input method now.
    public func mayCompose(in window: WindowID?) -> Bool {
        guard policy.inputMethod != nil, let window, let owner = windows.owner(of: window),
              owner.role == .app || owner.role == .participant else { return false }
        guard let restrictions else { return true }
        return restrictions.allowedFeatures.contains(.inputMethod) && screenRules.shows(owner)
    }

    /// The focused window, when it may compose: the text input the engine
    /// is activated for.
    public var compositionTarget: WindowID? {
        let target = focusTarget
        return mayCompose(in: target) ? target : nil
    }

    /// Where an ordinary key goes past Carrel's own bindings: the engine's
    /// grab when it holds one and the focus may compose; nil for the client.
    var inputMethodKeyTarget: WindowID? {
        inputMethod.keyboardGrabbed ? compositionTarget : nil
    }

    /// The engine bound the input-method global. False: it is not the one
    /// Carrel listens to (another role, or a second engine): tell it the
    /// input method is unavailable.
    public mutating func inputMethodBound(_ client: ClientID, role: Role) -> (accepted: Bool, [DeskEffect]) {
        if inputMethod.bound(client, role: role) { return (true, []) }
        return (false, [.log(SessionLogEntry(.warning, "input method: a second input method (client \(client), role \(role)) was refused; the first one keeps composing")),
                        .recordBlocked(kind: AuditKind.virtualInput, client: client,
                                       detail: "bound the input method while another one composes; told it is unavailable")])
    }

    /// A client asked for the keyboard grab: only the engine, once. Keys
    /// held while it was away go to it now, in order (the compositor gives
    /// the grab its keyboard first).
    public mutating func keyboardGrabRequested(by client: ClientID, now: Instant) -> (granted: Bool, [DeskEffect]) {
        guard inputMethod.grabRequested(by: client) else { return (false, []) }
        guard let released = inputMethod.heldKeys.release() else { return (true, []) }
        let (window, keys) = released
        // Held keys share the composition target (let go when it moves), so
        // this is a belt: a window that may not compose gets them plain.
        let destination: HeldKeyDestination = window == compositionTarget ? .inputMethod(window) : .window(window)
        if case .inputMethod = destination { inputMethod.inEngine.sent(keys, for: window, now: now) }
        return (true, [.log(SessionLogEntry(.info, "input method: the engine took the keyboard; \(keys.count) held keys go to \(destination)")),
                       .releaseHeldKeys(keys, to: destination)])
    }

    public mutating func keyboardGrabReleased(by client: ClientID) {
        inputMethod.grabReleased(by: client)
    }

    /// The input method sent a preedit, commit or deletion for the text
    /// input of `window`: relayed only from the engine to the window that
    /// may compose now; anything else is dropped and recorded.
    public func compositionSent(by client: ClientID, for window: WindowID?) -> [DeskEffect] {
        if client == inputMethod.engine, let window, window == compositionTarget {
            return [.relayComposition(window: window)]
        }
        return [.recordBlocked(kind: AuditKind.virtualInput, client: client,
                               detail: "sent composed text for a window that may not use the input method now; dropped")]
    }

    /// Whether the engine's candidate popup may be drawn now: only the
    /// engine's, only over a window that may compose.
    public func candidatePopupShown(for client: ClientID) -> Bool {
        client == inputMethod.engine && compositionTarget != nil
    }

    /// The content hints the engine is told, as the session allows.
    public func relayedContentHints(_ hints: UInt32) -> UInt32 {
        ContentHints.relayed(hints, under: restrictions)
    }

    /// Whether the engine's own prediction may be on now: outside a session
    /// yes; in one only if its configuration allows `predictive_text`.
    /// Carrel launches the engine with this (pinyin's `Prediction`).
    public var enginePredictionAllowed: Bool {
        restrictions.map { $0.allowedFeatures.contains(.predictiveText) } ?? true
    }

    /// Carrel launched (or relaunched) the engine with `prediction` on or off.
    public mutating func inputMethodLaunched(now: Instant, prediction: Bool) {
        inputMethod.launched(now: now, prediction: prediction)
    }

    /// Carrel asked the privileged helper to start (or relaunch) the engine
    /// with `prediction` and goes on without waiting for the answer: the
    /// engine is on its way, so keys for a window that would compose are
    /// held for it (within `KeysAwaitingEngine.limit`), as while it launches.
    public mutating func inputMethodStarting(prediction: Bool) {
        inputMethod.starting(prediction: prediction)
    }

    /// The helper started the engine: launched with the setting it was
    /// asked with. A session that came or went while the answer was on its
    /// way and wants the other setting restarts it at once (fcitx5 reads it
    /// only at start). Nothing when no start was in flight.
    public mutating func inputMethodStarted(now: Instant) -> [DeskEffect] {
        guard let prediction = inputMethod.startAnswered() else { return [] }
        inputMethod.launched(now: now, prediction: prediction)
        return restartEngineIfPredictionChanged()
    }

    /// The helper did not start the engine: its error, or no answer within
    /// the link's bound (`description` says which). The same as a launch
    /// that failed when Carrel waited for it: relaunched after a back-off,
    /// or given up with the held keys going to their window plain.
    public mutating func inputMethodStartFailed(_ description: String, now: Instant) -> [DeskEffect] {
        guard inputMethod.startAnswered() != nil else { return [] }
        return inputMethodExited(description, now: now)
    }

    /// After restrictions came or went: an engine running with the other
    /// prediction setting is restarted with the one that holds now (fcitx5
    /// reads it only at start). One the helper is still starting is checked
    /// when the answer comes (`inputMethodStarted`).
    mutating func restartEngineIfPredictionChanged() -> [DeskEffect] {
        guard inputMethod.startingWithPrediction == nil, let running = inputMethod.launchedWithPrediction, running != enginePredictionAllowed else { return [] }
        inputMethod.restarting()
        return [.log(SessionLogEntry(.notice, "input method: restarting the engine with its own prediction \(enginePredictionAllowed ? "on" : "off")")),
                .restartInputMethod]
    }

    /// A client that bound the input method went away. What its composition
    /// showed the student (a syllable in the preedit) is committed to the
    /// text input it was for, since no engine will finish it; then the
    /// composition ends. The death never touches the session; the engine is
    /// relaunched by `inputMethodExited`.
    ///
    /// Keys it was sent and never answered are held for its successor, ahead
    /// of any typed since (or given to their window plain if it no longer
    /// composes): a key typed just before a kill -9 is not lost with it.
    public mutating func inputMethodDisconnected(_ client: ClientID, now: Instant) -> [DeskEffect] {
        guard inputMethod.gone(client) else { return [] }
        var effects: [DeskEffect] = [.log(SessionLogEntry(.warning, "input method: the engine disconnected; what it showed composing is committed, its composition ends")),
                                     .commitPreedit, .cancelComposition]
        let unanswered = inputMethod.inEngine.takeAll()
        guard let first = unanswered.first else { return effects }
        // All for the window that composes now (and any held keys' window):
        // its successor types them. Otherwise (focus moved since they were
        // sent) each goes to the window it was typed in, plain, in order.
        let window = first.window
        if unanswered.allSatisfy({ $0.window == window }), window == compositionTarget,
           (inputMethod.heldKeys.window ?? window) == window {
            effects.append(.log(SessionLogEntry(.info, "input method: \(unanswered.count) keys the engine had not answered are held for its successor")))
            if inputMethod.heldKeys.holdFirst(unanswered.map(\.key), for: window, now: now) {
                effects.append(.armHeldKeyDeadline(after: KeysAwaitingEngine.limit))
            }
            return effects
        }
        effects.append(.log(SessionLogEntry(.notice, "input method: \(unanswered.count) keys the engine had not answered go to the windows they were typed in as plain keys")))
        var run: [KeyPress] = []
        var runWindow = window
        for sent in unanswered {
            if sent.window != runWindow {
                effects.append(.releaseHeldKeys(run, to: .window(runWindow)))
                run = []
                runWindow = sent.window
            }
            run.append(sent.key)
        }
        effects.append(.releaseHeldKeys(run, to: .window(runWindow)))
        return effects
    }

    /// The engine answered a key on its virtual keyboard: a press answers a
    /// press, a release a release (see `KeysInEngine`).
    public mutating func inputMethodAnswered(by client: ClientID, press: Bool, now: Instant) {
        if client == inputMethod.engine { inputMethod.inEngine.answered(press: press, now: now) }
    }

    /// The engine committed: `preedit` and `committed` text (empty: none),
    /// `deletes` when it deletes text, over the `shownPreedit` the text input
    /// showed. It answers a press only when it changes what the text input
    /// shows (`KeysInEngine.commitAnswersKey`). Returns whether it did.
    @discardableResult
    public mutating func inputMethodCommitted(by client: ClientID, shownPreedit: String, preedit: String,
                                              committed: String, deletes: Bool, now: Instant) -> Bool {
        guard client == inputMethod.engine else { return false }
        guard KeysInEngine.commitAnswersKey(shownPreedit: shownPreedit, preedit: preedit, committed: committed, deletes: deletes) else {
            inputMethod.inEngine.heard(now: now)
            return false
        }
        inputMethod.inEngine.answered(press: true, now: now)
        return true
    }

    /// The engine's process ended (`description` from its exit status):
    /// launch it again after a back-off, or give up after too many quick deaths.
    public mutating func inputMethodExited(_ description: String, now: Instant) -> [DeskEffect] {
        switch inputMethod.processEnded(now: now) {
        case .relaunch(let delay, let attempt):
            return [.log(SessionLogEntry(.warning, "input method: the engine ended (\(description)); relaunching in \(delay.secondsText) (relaunch \(attempt) in a row); the session goes on")),
                    .relaunchInputMethod(after: delay)]
        case .giveUp(let relaunches):
            return [.log(SessionLogEntry(.error, "input method: giving up after \(relaunches) relaunches in a row (the engine ended: \(description)); typing goes straight to the window"))]
                + releaseHeldKeysPlain(why: "the engine will not come back")
        }
    }

    // MARK: - Keys while the engine is away

    /// A key past Carrel's own bindings while the engine is on its way and
    /// the focus would compose (or keys are held already: this one goes
    /// behind them): held, with the deadline armed by the first. Nil: the
    /// key goes on as usual.
    mutating func holdForInputMethod(_ key: KeyPress, now: Instant) -> [DeskEffect]? {
        var effects = releaseHeldKeysIfTargetMoved()
        let window: WindowID
        if let held = inputMethod.heldKeys.window {
            window = held
        } else {
            guard inputMethod.awaitingEngine, !inputMethod.keyboardGrabbed, let target = compositionTarget else { return nil }
            window = target
        }
        effects.append(.holdKey(window: window))
        if inputMethod.heldKeys.hold(key, for: window, now: now) {
            effects += [.log(SessionLogEntry(.info, "input method: the engine is away; holding keys for \(window) until it takes the keyboard (at most \(KeysAwaitingEngine.limit.secondsText))")),
                        .armHeldKeyDeadline(after: KeysAwaitingEngine.limit)]
        }
        return effects
    }

    /// The deadline armed for held keys: past it, they go to their window as
    /// plain keys and keys stop waiting until the engine next shows life (a
    /// launch, a restart, a grab released), so a broken engine costs the
    /// student one bounded pause, not one per word.
    public mutating func heldKeysDeadlinePassed(now: Instant) -> [DeskEffect] {
        guard let deadline = inputMethod.heldKeys.deadline else { return [] }
        guard now >= deadline else { return [.armHeldKeyDeadline(after: deadline.duration(since: now))] }
        inputMethod.awaitingEngine = false
        return releaseHeldKeysPlain(why: "the engine did not take the keyboard within \(KeysAwaitingEngine.limit.secondsText)")
    }

    /// Keyboard focus on the window Core decided, the held keys let go
    /// first if their window no longer composes.
    mutating func focusEffects() -> [DeskEffect] {
        releaseHeldKeysIfTargetMoved() + [.focus(focusTarget)]
    }

    /// Held keys belong to the window they were typed in: when focus or the
    /// composition target leaves it (focus switch, a window mapped or gone,
    /// a session that denies input_method), they go to it as plain keys,
    /// before the focus moves.
    mutating func releaseHeldKeysIfTargetMoved() -> [DeskEffect] {
        guard let window = inputMethod.heldKeys.window, window != compositionTarget else { return [] }
        // Keys the engine (which lost its grab) was sent before these and has
        // not answered go first: whatever it makes of them now is for a
        // window that no longer composes, and is dropped.
        let unanswered = inputMethod.inEngine.giveAway(for: window)
        return (unanswered.isEmpty ? [] : [.releaseHeldKeys(unanswered, to: .window(window))])
            + releaseHeldKeysPlain(why: "\(window) no longer composes (focus moved or the session changed)")
    }

    private mutating func releaseHeldKeysPlain(why: String) -> [DeskEffect] {
        guard let released = inputMethod.heldKeys.release() else { return [] }
        let (window, keys) = released
        return [.log(SessionLogEntry(.notice, "input method: \(why); \(keys.count) held keys go to \(window) as plain keys")),
                .releaseHeldKeys(keys, to: .window(window))]
    }
}
