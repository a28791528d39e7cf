/// Something the Invigilator decided the compositor must do. Every input
/// returns a list of effects; the compositor carries them out in order.
public enum SessionEffect: Sendable, Hashable, CustomStringConvertible {
    /// Send an event on the session object (mapping reasons with
    /// `wireValue(forVersion:)` for the client's bound version).
    case send(SessionID, SessionEvent)
    /// Post a protocol error for a client bug.
    case protocolError(ProtocolViolation)
    /// Make exactly these restrictions hold, then report the outcome with
    /// `Invigilator.restrictionsApplied` (once per request, in order). The
    /// change must be all or nothing: on failure, what held before still holds.
    case applyRestrictions(RestrictionSet)
    /// Restore everything restricted for the session. Must not fail.
    case revertRestrictions(SessionID)
    /// Clear the clipboard and primary selection, so nothing copied crosses
    /// a session boundary.
    case clearSelections
    /// Watch the enabled outputs for a presented frame showing only the
    /// session, reporting `framePresented`; arm a timer for `deadline`
    /// reporting `presentationDeadlinePassed`. Starting it again re-arms the timer.
    case startPresentationWait(SessionID, deadline: Instant)
    /// Stop watching frames for the session and disarm its deadline timer.
    case stopPresentationWait(SessionID)
    /// Arm (or re-arm) the session's one-shot time-limit timer, reporting
    /// `timeLimitReached`. A timer that fired is spent; Core re-arms it if it
    /// fired early, and never disarms a spent one.
    case armTimeLimit(SessionID, deadline: Instant)
    /// Disarm the session's time-limit timer.
    case disarmTimeLimit(SessionID)
    /// Send `lock_state` then `done` to every bound manager.
    case lockStateChanged(LockState)
    /// Draw the confirmation prompt for an app-requested lock on top of
    /// everything, let Y / N / Escape from a real keyboard answer it
    /// (`confirmationAnswered`) and consume every other key, and arm a timer
    /// for `deadline` reporting `confirmationDeadlinePassed`.
    case askConfirmation(SessionID, prompt: String, deadline: Instant)
    /// Take the prompt down and disarm its timer.
    case dismissConfirmation(SessionID)
    /// Draw the banner on top of everything until `until`, then take it down.
    case showBanner(SessionID, text: String, until: Instant)
    /// Take the banner down now, if it is still up.
    case hideBanner(SessionID)
    /// Record a transition or an ignored input.
    case log(SessionLogEntry)

    public var description: String {
        switch self {
        case .send(let id, let event): return "send \(event) on \(id)"
        case .protocolError(let violation): return "protocol error \(violation.interface).\(violation.code) on \(violation.session)"
        case .applyRestrictions(let set): return "apply restrictions \(set)"
        case .revertRestrictions(let id): return "revert restrictions of \(id)"
        case .clearSelections: return "clear selections"
        case .startPresentationWait(let id, let deadline): return "wait for presentation of \(id) until \(deadline)"
        case .stopPresentationWait(let id): return "stop waiting for presentation of \(id)"
        case .armTimeLimit(let id, let deadline): return "arm time limit of \(id) at \(deadline)"
        case .disarmTimeLimit(let id): return "disarm time limit of \(id)"
        case .lockStateChanged(let state): return "lock state \(state)"
        case .askConfirmation(let id, let prompt, let deadline): return "ask \"\(prompt)\" for \(id) until \(deadline)"
        case .dismissConfirmation(let id): return "dismiss the confirmation of \(id)"
        case .showBanner(let id, let text, let until): return "show banner \"\(text)\" for \(id) until \(until)"
        case .hideBanner(let id): return "hide the banner of \(id)"
        case .log(let entry): return "log \(entry)"
        }
    }
}
