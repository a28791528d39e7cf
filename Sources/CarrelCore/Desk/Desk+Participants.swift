/// The Desk's decisions about participants: the programs a session names
/// (a calculator, a dictionary) that Carrel launches beside the exam.
///
/// - Layout: the exam on the left, participants in a column on the right
///   (`SessionLayout`).
/// - Focus: Ctrl+Alt+Tab moves it among the session's windows only.
/// - `began` waits until every participant shows a window, within the
///   session's bounded presentation wait; one that does not, or exits before
///   `began`, fails the begin with `participant_unavailable`.
/// - After `began`, a participant's exit follows the policy's `on_exit`:
///   relaunch (at most `maximumParticipantRelaunches` times in a session,
///   then interrupt) or interrupt.
extension Desk {
    /// A participant that keeps dying is not relaunched without end.
    public static let maximumParticipantRelaunches = 5

    // MARK: - Layout

    /// The box a parentless toplevel of `owner` fills on the primary output
    /// `output`: during a session that names participants the exam keeps the
    /// left part and each named participant its slot of the right column;
    /// otherwise the whole output.
    /// The on-screen keyboard's band, while placed, is taken off the bottom first.
    public func area(for owner: WindowOwner, output: Rect) -> Rect {
        let output = areaAboveOnScreenKeyboard(output)
        guard let restrictions, !restrictions.participants.isEmpty else { return output }
        let layout = SessionLayout(output: output, participantCount: restrictions.participants.count)
        if owner.client == restrictions.owner { return layout.exam }
        if owner.role == .participant, let id = owner.participantID,
           let index = restrictions.participants.firstIndex(of: id) {
            return layout.participants[index]
        }
        return output
    }

    /// The area of the window keys go to now, the one the input method
    /// types into: its candidate popup stays inside it. Nil without one.
    public func focusedArea(output: Rect) -> Rect? {
        guard let target = focusTarget, let owner = windows.owner(of: target) else { return nil }
        return area(for: owner, output: output)
    }

    // MARK: - Focus

    /// The focus switch during a session: consumed, and the lowest window the
    /// session shows goes on top and takes focus (with an exam and one
    /// participant, focus goes back and forth). Nil when the key is not it.
    mutating func switchSessionFocus(_ key: KeyPress) -> [DeskEffect]? {
        guard restrictions != nil, SessionFocusSwitch.matches(keysyms: key.keysyms, modifiers: key.modifiers) else { return nil }
        let rules = screenRules
        let shown = windows.entries.filter { $0.isMapped && $0.owner.role != .untrusted && rules.shows($0.owner) }
        guard shown.count > 1, let lowest = shown.first else { return [.consumeKey] }
        windows.raise(lowest.id)
        let whose = lowest.owner.participantID.map { "participant \($0)" } ?? "the exam"
        return [.consumeKey, .log(SessionLogEntry(.notice, "session focus switch: \(whose) (window \(lowest.id)) raised and focused")),
                .raiseWindow(lowest.id), .focus(focusTarget)]
    }

    // MARK: - The clipboard between the exam and its participants

    /// The compositor put keyboard focus on `window`. During a session that
    /// isolates the clipboard, focus moving between the exam and a
    /// participant (either way) empties the clipboard and primary selection:
    /// only the focused client is offered them, so nothing the exam copied
    /// can be pasted into a calculator, nor the other way round.
    public mutating func focusMoved(to window: WindowID?) -> [DeskEffect] {
        let owner = window.flatMap { windows.owner(of: $0) }
        defer { focusedOwner = owner }
        guard let restrictions, restrictions.isolateClipboard, let previous = focusedOwner, let owner,
              previous.client != owner.client, previous.role == .participant || owner.role == .participant else { return [] }
        return [.log(SessionLogEntry(.info, "focus moved between the exam and a participant; clipboard and primary selection emptied")),
                .session(.clearSelections)]
    }

    // MARK: - Waiting for participants' windows

    /// The participants the restrictions of `id` name that have no mapped window.
    func participantsWithoutWindow(_ id: SessionID) -> [String] {
        guard let restrictions, restrictions.session == id else { return [] }
        let mapped = Set(windows.entries.filter { $0.isMapped && $0.owner.role == .participant }.compactMap(\.owner.participantID))
        return restrictions.participants.filter { !mapped.contains($0) }
    }

    /// `framePresented` before every participant showed a window: hold `began`.
    mutating func holdForParticipantWindows(_ id: SessionID) -> [DeskEffect]? {
        guard invigilator.session(id)?.phase.isPending == true else { return nil }
        let missing = participantsWithoutWindow(id)
        guard !missing.isEmpty else { return nil }
        participantWindowWait = id
        return [.log(SessionLogEntry(.info, "\(id): waiting for a window of participant \(missing.joined(separator: ", ")) before began"))]
    }

    /// A participant's window mapped: if `began` waited for it and every
    /// participant now shows one, present a fresh frame (the same deadline).
    mutating func participantWindowMapped(_ owner: WindowOwner) -> [DeskEffect] {
        guard owner.role == .participant, let id = participantWindowWait,
              participantsWithoutWindow(id).isEmpty,
              case .awaitingPresentation(let deadline)? = invigilator.session(id)?.phase else { return [] }
        participantWindowWait = nil
        return [.session(.startPresentationWait(id, deadline: deadline))]
    }

    /// The presentation deadline passed: a participant without a window is
    /// why, and the session fails with `participant_unavailable`.
    mutating func participantsWithoutWindows(_ id: SessionID, now: Instant) -> [DeskEffect]? {
        guard case .awaitingPresentation(let deadline)? = invigilator.session(id)?.phase, now >= deadline else { return nil }
        let missing = participantsWithoutWindow(id)
        guard !missing.isEmpty else { return nil }
        participantWindowWait = nil
        let message = "participant \(missing.joined(separator: ", ")) showed no window within \(policy.session.presentationTimeout); check that its command starts a Wayland program"
        return run(invigilator.participantUnavailable(id, message))
    }

    // MARK: - A participant's exit

    /// Participant `participant` of the live session exited (or was killed).
    /// Before `began` the session fails (`participant_unavailable`); after,
    /// the policy's `on_exit` decides: relaunch or interrupt (`integrity`).
    /// A participant stopped by Carrel itself is not reported here.
    public mutating func participantExited(_ participant: String, description: String, now: Instant) -> [DeskEffect] {
        var effects = [DeskEffect.log(SessionLogEntry(.notice, "participant \(participant) exited: \(description)"))]
        guard let restrictions, restrictions.participants.contains(participant),
              let session = invigilator.session(restrictions.session), session.phase.isLive else { return effects }
        if session.phase.isPending {
            return effects + run(invigilator.participantUnavailable(
                session.id, "participant \(participant) exited before the session began (\(description)); check its command runs on its own"))
        }
        let onExit = policy.participants[participant]?.onExit ?? .interrupt
        let relaunches = participantRelaunches[participant, default: 0]
        if onExit == .relaunch, relaunches < Self.maximumParticipantRelaunches {
            participantRelaunches[participant] = relaunches + 1
            effects.append(.log(SessionLogEntry(.notice, "participant \(participant): on_exit = relaunch; relaunching (\(relaunches + 1) of at most \(Self.maximumParticipantRelaunches) in this session)")))
            return effects + [.relaunchParticipant(participant)]
        }
        let why = onExit == .relaunch
            ? "participant \(participant) exited (\(description)) after \(relaunches) relaunches in this session; giving up"
            : "participant \(participant) exited (\(description)); the policy says on_exit = interrupt"
        return effects + run(invigilator.integrityLost(why))
    }

    /// A relaunch asked for with `.relaunchParticipant` failed: the session
    /// lost its participant and is interrupted.
    public mutating func participantLaunchFailed(_ participant: String, _ message: String) -> [DeskEffect] {
        guard restrictions?.participants.contains(participant) == true else { return [] }
        return run(invigilator.integrityLost("participant \(participant) could not be relaunched: \(message)"))
    }
}
