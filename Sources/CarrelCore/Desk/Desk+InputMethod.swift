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

    /// A client asked for the keyboard grab: only the engine, once.
    public mutating func keyboardGrabRequested(by client: ClientID) -> Bool {
        inputMethod.grabRequested(by: client)
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

    /// After restrictions came or went: an engine running with the other
    /// prediction setting is restarted with the one that holds now (fcitx5
    /// reads it only at start).
    func restartEngineIfPredictionChanged() -> [DeskEffect] {
        guard let running = inputMethod.launchedWithPrediction, running != enginePredictionAllowed else { return [] }
        return [.log(SessionLogEntry(.notice, "input method: restarting the engine with its own prediction \(enginePredictionAllowed ? "on" : "off")")),
                .restartInputMethod]
    }

    /// A client that bound the input method went away. The engine's death
    /// commits nothing anywhere (its composition is abandoned) and never
    /// touches the session; the engine is relaunched by `inputMethodExited`.
    public mutating func inputMethodDisconnected(_ client: ClientID) -> [DeskEffect] {
        guard inputMethod.gone(client) else { return [] }
        return [.log(SessionLogEntry(.warning, "input method: the engine disconnected; its composition is abandoned")),
                .cancelComposition]
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
        }
    }
}
