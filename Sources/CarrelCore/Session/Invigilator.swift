/// The assessment session state machine: like the invigilator of an exam
/// hall, it admits at most one session at a time across all clients, decides
/// when a session has begun, watches its time limit, reports interruptions,
/// and sees that everything is restored when the session is over.
///
/// It is a value that only decides. Every input is a mutating method that
/// returns the `SessionEffect`s the compositor must carry out, in order; time
/// comes in as `now` values and goes out as deadlines to arm timers for.
///
/// ```swift
/// var invigilator = Invigilator(policy: SessionPolicy())
/// var effects = invigilator.begin(SessionID(1), client: ClientID(7), role: .app,
///                                 surface: .mappedToplevel, configuration: nil, now: now)
/// // [.lockStateChanged(.active), .clearSelections, .applyRestrictions(set), .log(…)]
/// effects = invigilator.restrictionsApplied(SessionID(1), .applied, now: now)
/// // [.startPresentationWait(SessionID(1), deadline: now + 3 s), .log(…)]
/// effects = invigilator.framePresented(SessionID(1), now: later)
/// // [.stopPresentationWait, .armTimeLimit(…), .send(SessionID(1), .began), .log(…)]
/// ```
///
/// Rules it keeps (the protocol XML states them for clients):
/// - exactly one of `began` / `failed` answers `begin`; nothing follows
///   `failed` or `ended`;
/// - at most one session is pending or begun, across all clients;
/// - `interrupted` is not terminal: restrictions stay until `end` or destroy;
/// - destroying or disconnecting ends a session at once, with no event;
/// - an update applies fully (`updated`) or not at all (`update_failed`);
/// - selections are cleared when a session is accepted, interrupted, and
///   whenever its restrictions are reverted.
/// - an app-requested lock (an allowlisted untrusted client, lock-only
///   configuration) is, when the policy asks, confirmed at the machine after
///   its restrictions hold and before the frame wait; refused, unanswered or
///   unshowable, it fails and everything is reverted.
public struct Invigilator: Sendable {
    /// The administrator's rules for sessions.
    public private(set) var policy: SessionPolicy
    /// Every session object the compositor has told us about and not yet
    /// destroyed, including inert ones (so a second `end` can be recognised).
    public private(set) var sessions: [SessionID: SessionRecord] = [:]
    /// The one session that is pending or begun, if any.
    public private(set) var liveSessionID: SessionID?
    /// Set by `shutdown`: no new session may begin.
    public private(set) var isShuttingDown = false
    /// App-requested lock (ASAM): who may ask, confirmation, banner.
    public private(set) var appLock: AppLockPolicy
    /// How long the on-screen confirmation waits for an answer.
    public let confirmationTimeout: Duration

    public init(policy: SessionPolicy = SessionPolicy(), appLock: AppLockPolicy = AppLockPolicy(),
                confirmationTimeout: Duration = AppLock.confirmationTimeout) {
        self.policy = policy
        self.appLock = appLock
        self.confirmationTimeout = confirmationTimeout
    }

    /// The record of the session that is pending or begun.
    /// A reloaded policy: sessions begun from now on use it (the live one
    /// keeps its time limit; `extend` checks the new maximum).
    public mutating func adopt(policy: SessionPolicy, appLock: AppLockPolicy) {
        self.policy = policy
        self.appLock = appLock
    }

    public var liveSession: SessionRecord? { liveSessionID.flatMap { sessions[$0] } }

    /// What managers report as `lock_state`.
    public var lockState: LockState { liveSessionID == nil ? .inactive : .active }

    /// The restrictions that hold according to the state: those of the live
    /// session once the compositor confirmed them, otherwise none. While an
    /// update is being applied, the previous configuration's set still holds.
    public var restrictionsInForce: RestrictionSet? {
        guard let live = liveSession, live.phase.holdsRestrictions else { return nil }
        return restrictions(for: live, configuration: live.configuration)
    }

    public func session(_ id: SessionID) -> SessionRecord? { sessions[id] }

    // MARK: - Requests from clients

    /// `carrel_assessment_manager_v1.begin`. `configuration` is the copy of
    /// the configuration object's state, or `nil` for a null configuration.
    /// `executable`: for an untrusted client, the realpath of its
    /// `/proc/PID/exe` as read when it connected (nil if unknown); an
    /// allowlisted one may ask for an app-requested lock.
    public mutating func begin(
        _ id: SessionID,
        client: ClientID,
        role: Role,
        executable: String? = nil,
        surface: SurfaceReadiness,
        configuration: AssessmentConfiguration?,
        now: Instant
    ) -> [SessionEffect] {
        guard sessions[id] == nil else {
            // A compositor bug, not a client's: keep the known session as it is.
            return [log(.error, "begin: \(id) is already known; session ids must not be reused — ignored")]
        }
        if surface == .notToplevel {
            // The session object is never recorded: the client is about to be disconnected.
            return [.protocolError(.badSurface(id)), log(.warning, "\(id) of \(client): begin with a surface that is not a toplevel")]
        }
        let configuration = configuration ?? .mostRestrictive
        var record = SessionRecord(
            id: id, owner: client, phase: .restricting, configuration: configuration,
            timeLimit: policy.timeLimit(for: configuration), beganAt: nil, timeLimitDeadline: nil,
            restrictionRequest: nil, ownerRole: role, queuedUpdates: []
        )
        if !policy.isEntitled(role) { record.appLockExecutable = executable }
        if let (reason, message, detail) = refusal(client: client, role: role, executable: executable, surface: surface, configuration: configuration) {
            record.phase = .failed(reason)
            sessions[id] = record
            return [.send(id, .failed(reason, message: message)),
                    log(.notice, "\(id) of \(client): begin refused, failed(\(reason)): \(detail)")]
        }
        let set = restrictions(for: record, configuration: configuration)
        record.restrictionRequest = .begin(set)
        sessions[id] = record
        liveSessionID = id
        let kind = record.appLockExecutable.map { "app-requested lock by \($0), " } ?? ""
        // Selections are cleared before the restrictions go up, so nothing
        // copied before the session can be pasted into it.
        return [.lockStateChanged(.active), .clearSelections, .applyRestrictions(set),
                log(.info, "\(id) of \(client): begin accepted (\(kind)\(configuration)), → restricting")]
    }

    /// `carrel_assessment_session_v1.end`.
    public mutating func end(_ id: SessionID) -> [SessionEffect] {
        guard let record = sessions[id] else {
            return [log(.warning, "end: \(id) is unknown — ignored")]
        }
        switch record.phase {
        case .restricting, .awaitingConfirmation, .awaitingPresentation:
            return [.protocolError(.notBegun(id)), log(.warning, "\(id) of \(record.owner): end before began")]
        case .active, .interrupted:
            return release(id, answer: .ended, why: "end")
        case .failed:
            return [log(.info, "\(id): end on a failed session — ignored")]
        case .ended where record.endedUnasked:
            var forgiven = record
            forgiven.endedUnasked = false
            sessions[id] = forgiven
            return [log(.info, "\(id): end after an administrator ended it by force — ignored")]
        case .ended:
            return [.protocolError(.alreadyEnded(id)), log(.warning, "\(id) of \(record.owner): end sent twice")]
        }
    }

    /// `carrel_assessment_session_v1.update`, with the copy of the
    /// configuration object's state.
    public mutating func update(_ id: SessionID, to configuration: AssessmentConfiguration) -> [SessionEffect] {
        guard var record = sessions[id] else {
            return [log(.warning, "update: \(id) is unknown — ignored")]
        }
        switch record.phase {
        case .restricting, .awaitingConfirmation, .awaitingPresentation:
            return [.protocolError(.notBegun(id)), log(.warning, "\(id) of \(record.owner): update before began")]
        case .failed, .ended:
            return [log(.info, "\(id): update on an inert session — ignored")]
        case .active, .interrupted:
            // Queued even when idle, so that updates are answered strictly in
            // the order they were sent.
            record.queuedUpdates.append(configuration)
            sessions[id] = record
            return [log(.info, "\(id): update to \(configuration) received")] + startNextUpdate(id)
        }
    }

    /// `carrel_assessment_session_v1.destroy`: a pending or begun session
    /// ends at once and sends nothing more.
    public mutating func destroy(_ id: SessionID) -> [SessionEffect] {
        discard(id, why: "destroyed by its client")
    }

    /// The client's connection closed (including after a protocol error):
    /// every session it owned is destroyed.
    public mutating func clientDisconnected(_ client: ClientID) -> [SessionEffect] {
        let owned = sessions.values.filter { $0.owner == client }.map(\.id).sorted()
        return owned.flatMap { discard($0, why: "its \(client) disconnected") }
    }

    /// Forgets session `id`, first ending it if it is pending or begun.
    private mutating func discard(_ id: SessionID, why: String) -> [SessionEffect] {
        guard let record = sessions[id] else { return [] }
        let effects = record.phase.isLive ? release(id, answer: nil, why: why) : []
        sessions.removeValue(forKey: id)
        return effects
    }

    // MARK: - Reports from the compositor

    /// The outcome of the oldest `.applyRestrictions` for session `id`.
    /// Reports for sessions that have since ended or been destroyed are
    /// ignored: the compositor already reverted for them.
    public mutating func restrictionsApplied(_ id: SessionID, _ outcome: RestrictionOutcome, now: Instant) -> [SessionEffect] {
        guard var record = sessions[id], record.phase.isLive, let request = record.restrictionRequest else {
            return [log(.info, "restrictions report for \(id), which is no longer waiting for one — ignored")]
        }
        record.restrictionRequest = nil
        sessions[id] = record
        switch (request, outcome) {
        case (.begin, .applied):
            if let executable = record.appLockExecutable, appLock.requireConfirmation {
                let deadline = now.advanced(by: confirmationTimeout)
                record.phase = .awaitingConfirmation(deadline: deadline)
                sessions[id] = record
                let prompt = AppLock.prompt(app: AppLock.appName(executable: executable))
                return [.askConfirmation(id, prompt: prompt, deadline: deadline),
                        log(.info, "\(id): restrictions hold, restricting → awaiting-confirmation at the machine until \(deadline)")]
            }
            return startPresentationWait(id, now: now, from: "restricting")
        case (.begin, .failed(let message)):
            return release(id, answer: .failed(.restrictionFailed, message: message), why: "a restriction could not be applied: \(message)")
        case (.begin, .unsupported(let message)):
            return release(id, answer: .failed(.preconditionsUnmet, message: message), why: "preconditions unmet: \(message)")
        case (.begin, .participantUnavailable(let message)):
            return release(id, answer: .failed(.participantUnavailable, message: message), why: "a participant could not be started: \(message)")
        case (.update(let configuration, _), .applied):
            return applyUpdate(id, configuration: configuration, now: now) + startNextUpdate(id)
        case (.update, .failed(let message)):
            return [.send(id, .updateFailed(.restrictionFailed, message: message)),
                    log(.notice, "\(id): update_failed(restriction_failed): \(message); previous configuration holds")]
                + startNextUpdate(id)
        case (.update, .participantUnavailable(let message)):
            return [.send(id, .updateFailed(.participantUnavailable, message: message)),
                    log(.notice, "\(id): update_failed(participant_unavailable): \(message); previous configuration holds")]
                + startNextUpdate(id)
        case (.update, .unsupported(let message)):
            return [.send(id, .updateFailed(.preconditionsUnmet, message: message)),
                    log(.notice, "\(id): update_failed(preconditions_unmet): \(message); previous configuration holds")]
                + startNextUpdate(id)
        }
    }

    /// The person at the machine answered the confirmation prompt of session
    /// `id`: `allowed` goes on to wait for a frame, a refusal fails the
    /// session with `not_entitled`. Answers for sessions not asking are ignored.
    public mutating func confirmationAnswered(_ id: SessionID, allowed: Bool, now: Instant) -> [SessionEffect] {
        guard let record = sessions[id], case .awaitingConfirmation = record.phase else {
            return [log(.info, "confirmation answer for \(id), which is not asking — ignored")]
        }
        guard allowed else {
            return release(id, answer: .failed(.notEntitled, message: "refused at the machine"),
                           why: "the person at the machine refused the app-requested lock")
        }
        return [.dismissConfirmation(id), log(.notice, "\(id): app-requested lock confirmed at the machine")]
            + startPresentationWait(id, now: now, from: "awaiting-confirmation")
    }

    /// The compositor could not put the prompt on screen (no output, no
    /// memory): nobody can answer, so the session fails (closed).
    public mutating func confirmationUnavailable(_ id: SessionID, _ message: String) -> [SessionEffect] {
        guard let record = sessions[id], case .awaitingConfirmation = record.phase else { return [] }
        return release(id, answer: .failed(.internal, message: "the confirmation could not be shown at the machine: \(message)"),
                       why: "the confirmation prompt could not be shown: \(message)")
    }

    /// The confirmation's timer fired. Early timers are re-armed, stale ones
    /// ignored; at the deadline, no answer is a refusal.
    public mutating func confirmationDeadlinePassed(_ id: SessionID, now: Instant) -> [SessionEffect] {
        guard let record = sessions[id], case .awaitingConfirmation(let deadline) = record.phase else { return [] }
        guard now >= deadline else {
            let prompt = AppLock.prompt(app: AppLock.appName(executable: record.appLockExecutable ?? "?"))
            return [.askConfirmation(id, prompt: prompt, deadline: deadline)]
        }
        return release(id, answer: .failed(.notEntitled, message: "no answer at the machine within \(confirmationTimeout)"),
                       why: "no answer at the machine to the app-requested lock within \(confirmationTimeout)")
    }

    /// Restrictions hold (and, for a confirmed lock, the person at the
    /// machine said yes): wait for a frame showing only the session.
    private mutating func startPresentationWait(_ id: SessionID, now: Instant, from: String) -> [SessionEffect] {
        guard var record = sessions[id] else { return [] }
        let deadline = now.advanced(by: policy.presentationTimeout)
        record.phase = .awaitingPresentation(deadline: deadline)
        sessions[id] = record
        return [.startPresentationWait(id, deadline: deadline),
                log(.info, "\(id): restrictions hold, \(from) → awaiting-presentation until \(deadline)")]
    }

    /// A frame showing only the session's windows was presented on every
    /// enabled output. Reports for sessions not waiting for one are ignored.
    public mutating func framePresented(_ id: SessionID, now: Instant) -> [SessionEffect] {
        guard var record = sessions[id], case .awaitingPresentation = record.phase else { return [] }
        let deadline = now.advanced(bySeconds: record.timeLimit)
        record.phase = .active
        record.beganAt = now
        record.timeLimitDeadline = deadline
        var effects: [SessionEffect] = [.stopPresentationWait(id), .armTimeLimit(id, deadline: deadline), .send(id, .began),
                log(.info, "\(id) of \(record.owner): awaiting-presentation → active (began), time limit \(record.timeLimit) s until \(deadline)")]
        if let executable = record.appLockExecutable, appLock.bannerDuration > .zero {
            record.bannerShown = true
            let text = AppLock.bannerText(app: AppLock.appName(executable: executable), timeLimit: record.timeLimit)
            effects.append(.showBanner(id, text: text, until: now.advanced(by: appLock.bannerDuration)))
        }
        sessions[id] = record
        return effects
    }

    /// The presentation wait's timer fired. A timer that fires before the
    /// deadline (timer rounding) is re-armed; a stale one is ignored.
    public mutating func presentationDeadlinePassed(_ id: SessionID, now: Instant) -> [SessionEffect] {
        guard let record = sessions[id], case .awaitingPresentation(let deadline) = record.phase else { return [] }
        guard now >= deadline else { return [.startPresentationWait(id, deadline: deadline)] }
        let message = "no frame showing only the session was presented on every enabled output within \(policy.presentationTimeout)"
        return release(id, answer: .failed(.timeout, message: message), why: message)
    }

    /// The session's time-limit timer fired. A timer that fires early is
    /// re-armed; a stale one is ignored.
    public mutating func timeLimitReached(_ id: SessionID, now: Instant) -> [SessionEffect] {
        guard var record = sessions[id], record.phase.hasBegun, let deadline = record.timeLimitDeadline else { return [] }
        guard now >= deadline else { return [.armTimeLimit(id, deadline: deadline)] }
        record.timeLimitDeadline = nil
        sessions[id] = record
        return interrupt(id, .timeLimit, message: "the session's time limit of \(record.timeLimit) s has passed")
    }

    /// A restriction of the live session stopped holding. Before `began`
    /// the session fails (everything reverted); after, it is interrupted and
    /// the restrictions stay (fail closed).
    public mutating func integrityLost(_ message: String) -> [SessionEffect] {
        guard let live = liveSession else {
            return [log(.warning, "integrity lost with no session in progress: \(message)")]
        }
        if live.phase.isPending {
            return release(live.id, answer: .failed(.restrictionFailed, message: message), why: "a restriction stopped holding before began: \(message)")
        }
        return interrupt(live.id, .integrity, message: message)
    }

    /// A participant of the pending session `id` exited or showed no window
    /// in time: the session fails with `participant_unavailable` (everything
    /// is reverted). Sessions that have begun are not affected here: what a
    /// participant's exit means then is the policy's `on_exit`.
    public mutating func participantUnavailable(_ id: SessionID, _ message: String) -> [SessionEffect] {
        guard let record = sessions[id], record.phase.isPending else { return [] }
        return release(id, answer: .failed(.participantUnavailable, message: message),
                       why: "a participant could not be started: \(message)")
    }

    /// An administrator interrupts the live session (or stops one that has
    /// not begun).
    public mutating func administrativeInterrupt(_ message: String) -> [SessionEffect] {
        guard let live = liveSession else {
            return [log(.notice, "administrative interrupt with no session in progress: \(message)")]
        }
        if live.phase.isPending {
            return release(live.id, answer: .failed(.cancelled, message: message), why: "stopped by an administrator before began: \(message)")
        }
        return interrupt(live.id, .administrative, message: message)
    }

    // MARK: - Requests from the administrator (carrelctl)

    /// Compare-and-set for an administrator who read `status` a while ago
    /// (an SSH forced command): `command` acts only on the session `expected`
    /// names, never on one that began since.
    private func check(_ expected: SessionID?, for command: String) throws(ControlFailure) {
        guard let expected, expected != liveSessionID else { return }
        let now = liveSessionID.map { "\($0) is live now" } ?? "no session is live now"
        throw ControlFailure(.sessionChanged, "\(command) was for \(expected), but \(now); nothing was done — check status and try again with the live session's id")
    }

    /// `carrelctl end --reason TEXT`: the live session hears
    /// `interrupted(administrative)` with `reason` (or fails with `cancelled`
    /// if it has not begun). Throws when there is no session to end.
    public mutating func administrativeEnd(reason text: String, expecting expected: SessionID? = nil) throws(ControlFailure)
        -> (outcome: ControlOutcome, effects: [SessionEffect])
    {
        let reason: String
        switch ControlRequest.validateReason(text) {
        case .success(let valid): reason = valid
        case .failure(let failure): throw failure
        }
        try check(expected, for: "end")
        guard let live = liveSession else {
            throw ControlFailure(.noSession, "no session is pending or active; there is nothing to end")
        }
        return (ControlOutcome(session: live.id.raw, message: reason), administrativeInterrupt(reason))
    }

    /// `carrelctl end --force --reason TEXT`: the live session ends now,
    /// without waiting for its app. A begun session hears
    /// `interrupted(administrative)` with `reason` (again, if it already
    /// was interrupted: this is why it ends) and then `ended`, once its
    /// restrictions are reverted; a pending one fails with `cancelled`.
    /// Stopping the app is the caller's (`Desk`). Throws when there is no
    /// session to end.
    public mutating func administrativeForceEnd(reason text: String) throws(ControlFailure)
        -> (outcome: ControlOutcome, owner: ClientID, effects: [SessionEffect])
    {
        let reason: String
        switch ControlRequest.validateReason(text) {
        case .success(let valid): reason = valid
        case .failure(let failure): throw failure
        }
        guard let live = liveSession else {
            throw ControlFailure(.noSession, "no session is pending or active; there is nothing to end")
        }
        let outcome = ControlOutcome(session: live.id.raw, message: reason, forced: true)
        if live.phase.isPending {
            return (outcome, live.owner, release(live.id, answer: .failed(.cancelled, message: reason),
                                                 why: "force-ended by an administrator before began: \(reason)"))
        }
        var effects = interrupt(live.id, .administrative, message: reason)
        effects += release(live.id, answer: .ended, why: "force-ended by an administrator: \(reason)")
        sessions[live.id]?.endedUnasked = true
        return (outcome, live.owner, effects)
    }

    /// `carrelctl extend MINUTES`: adds time to the active session's limit
    /// and re-arms its timer. All or nothing: a refusal changes nothing.
    public mutating func extendTimeLimit(byMinutes minutes: Int, now: Instant, expecting expected: SessionID? = nil) throws(ControlFailure)
        -> (outcome: ControlOutcome, effects: [SessionEffect])
    {
        if case .failure(let failure) = ControlRequest.validateMinutes(minutes) { throw failure }
        try check(expected, for: "extend")
        guard var record = liveSession else {
            throw ControlFailure(.noSession, "no session is pending or active; there is nothing to extend")
        }
        let id = record.id
        switch record.phase {
        case .active:
            break
        case .interrupted(let reason):
            throw ControlFailure(.wrongState, "\(id) was interrupted (\(reason)); extending would not resume it — the app has to end it")
        default:
            throw ControlFailure(.wrongState, "\(id) has not begun yet (\(record.phase)); extend it once it is active")
        }
        guard let began = record.beganAt else {
            throw ControlFailure(.wrongState, "\(id) has no start time; extend it once it is active")
        }
        let added = UInt32(minutes * 60)
        let maximum = policy.effectiveMaximumTimeLimit
        let (newLimit, overflow) = record.timeLimit.addingReportingOverflow(added)
        guard !overflow, newLimit <= maximum else {
            let room = maximum > record.timeLimit ? (maximum - record.timeLimit) / 60 : 0
            throw ControlFailure(.aboveMaximum, "extending \(id) by \(minutes) min would make its time limit \(UInt64(record.timeLimit) + UInt64(added)) s, above the policy's maximum of \(maximum) s; at most \(room) more minutes are possible")
        }
        let deadline = began.advanced(bySeconds: newLimit)
        record.timeLimit = newLimit
        record.addedTime += added
        record.timeLimitDeadline = deadline
        sessions[id] = record
        let left = UInt64(deadline.duration(since: now).components.seconds)
        let outcome = ControlOutcome(session: id.raw, addedSeconds: added, timeLimitSeconds: newLimit, timeLeftSeconds: left)
        return (outcome, [.armTimeLimit(id, deadline: deadline),
                          log(.notice, "\(id) of \(record.owner): extended by an administrator by \(added) s to \(newLimit) s, until \(deadline)")])
    }

    /// The time limit for `configuration` plus what an administrator added,
    /// never above the policy's maximum.
    private func limit(for configuration: AssessmentConfiguration, added: UInt32) -> UInt32 {
        let (sum, overflow) = policy.timeLimit(for: configuration).addingReportingOverflow(added)
        return overflow ? policy.effectiveMaximumTimeLimit : min(sum, max(policy.effectiveMaximumTimeLimit, policy.timeLimit(for: configuration)))
    }

    /// The compositor is shutting down: the live session is interrupted (or
    /// fails if it has not begun) and no new session may begin. Exiting the
    /// compositor then restores everything.
    public mutating func shutdown(_ message: String) -> [SessionEffect] {
        isShuttingDown = true
        guard let live = liveSession else { return [log(.info, "shutting down with no session in progress")] }
        if live.phase.isPending {
            return release(live.id, answer: .failed(.cancelled, message: message), why: "shutdown before began: \(message)")
        }
        return interrupt(live.id, .shutdown, message: message)
    }

    // MARK: - Decisions

    /// Why `begin` must fail, or `nil` to accept it: (reason, message for
    /// the client, detail for our log). Entitlement comes first so that a
    /// client that may not lock learns nothing about other sessions.
    private func refusal(client: ClientID, role: Role, executable: String?, surface: SurfaceReadiness,
                         configuration: AssessmentConfiguration) -> (FailureReason, String, String)?
    {
        if isShuttingDown {
            return (.cancelled, "the compositor is shutting down", "shutting down")
        }
        if !policy.isEntitled(role), appLock.entitles(executable: executable) {
            // An allowlisted app may only lock: every feature allowed, no participants.
            if !AppLock.isLockOnly(configuration) {
                let message = "an app-requested lock must use a lock-only configuration: allow every feature and add no participant"
                return (.notEntitled, message, "\(executable ?? "?") asked for \(configuration), not a lock-only configuration")
            }
        } else if !policy.isEntitled(role) {
            let roles = policy.entitledRoles.map(\.rawValue).sorted().joined(separator: ", ")
            return (.notEntitled, "clients of role \(role) may not begin sessions", "role \(role) is not entitled (entitled: \(roles))")
        }
        if let live = liveSession {
            return (.alreadyActive, SessionAnswer.alreadyActive, "\(live.id) of \(live.owner) is \(live.phase)")
        }
        if let problem = policy.refusal(of: configuration) {
            return (.unsupportedConfiguration, problem, problem)
        }
        if surface == .unmappedToplevel {
            let message = "the toplevel is not mapped yet; commit a buffer and wait for the first frame before begin"
            return (.surfaceNotReady, message, message)
        }
        return nil
    }

    private func restrictions(for record: SessionRecord, configuration: AssessmentConfiguration) -> RestrictionSet {
        RestrictionSet(session: record.id, owner: record.owner, ownerRole: record.ownerRole, configuration: configuration, policy: policy)
    }

    /// Takes queued updates in order until one needs the compositor: those
    /// that can be answered at once are answered here.
    private mutating func startNextUpdate(_ id: SessionID) -> [SessionEffect] {
        guard var record = sessions[id], record.phase.hasBegun else { return [] }
        var effects: [SessionEffect] = []
        while record.restrictionRequest == nil, !record.queuedUpdates.isEmpty {
            let configuration = record.queuedUpdates.removeFirst()
            if case .interrupted(let reason) = record.phase {
                effects += [.send(id, .updateFailed(.interrupted, message: SessionAnswer.updateOfInterruptedSession(reason))),
                            log(.notice, "\(id): update_failed(interrupted)")]
            } else if let problem = policy.refusal(of: configuration) {
                effects += [.send(id, .updateFailed(.unsupportedConfiguration, message: problem)),
                            log(.notice, "\(id): update_failed(unsupported_configuration): \(problem); previous configuration holds")]
            } else {
                let set = restrictions(for: record, configuration: configuration)
                record.restrictionRequest = .update(configuration, set)
                effects += [.applyRestrictions(set), log(.info, "\(id): applying update to \(configuration)")]
            }
        }
        sessions[id] = record
        return effects
    }

    /// The compositor confirmed an update's restrictions: the new
    /// configuration holds. The time limit still counts from `began`.
    private mutating func applyUpdate(_ id: SessionID, configuration: AssessmentConfiguration, now: Instant) -> [SessionEffect] {
        guard var record = sessions[id] else { return [] }
        let previous = record.configuration
        record.configuration = configuration
        record.timeLimit = limit(for: configuration, added: record.addedTime)
        var effects: [SessionEffect] = [.send(id, .updated), log(.info, "\(id): updated from \(previous) to \(configuration)")]
        var expired = false
        if let began = record.beganAt, let armed = record.timeLimitDeadline {
            let deadline = began.advanced(bySeconds: record.timeLimit)
            if deadline <= now {
                record.timeLimitDeadline = nil
                effects.append(.disarmTimeLimit(id))
                expired = true
            } else if deadline != armed {
                record.timeLimitDeadline = deadline
                effects.append(.armTimeLimit(id, deadline: deadline))
            }
        }
        sessions[id] = record
        if expired {
            effects += interrupt(id, .timeLimit, message: "the updated time limit of \(record.timeLimit) s has already passed")
        }
        return effects
    }

    /// Sends `interrupted`; the restrictions stay in force.
    private mutating func interrupt(_ id: SessionID, _ reason: InterruptionReason, message: String) -> [SessionEffect] {
        guard var record = sessions[id] else { return [] }
        let from = record.phase
        record.phase = .interrupted(reason)
        sessions[id] = record
        // Cleared so that the app's content is not left on the clipboard
        // while it may not be trusted to hide it.
        return [.clearSelections, .send(id, .interrupted(reason, message: message)),
                log(.notice, "\(id) of \(record.owner): \(from) → interrupted(\(reason)): \(message)")]
    }

    /// Ends the live session `id`: clears selections, reverts restrictions,
    /// stops its timers and, unless it was destroyed, sends its last event
    /// (`failed` or `ended`) only once everything is restored.
    private mutating func release(_ id: SessionID, answer: SessionEvent?, why: String) -> [SessionEffect] {
        guard var record = sessions[id], record.phase.isLive else { return [] }
        let from = record.phase
        var effects: [SessionEffect] = [.clearSelections, .revertRestrictions(id)]
        if case .awaitingConfirmation = record.phase { effects.append(.dismissConfirmation(id)) }
        if case .awaitingPresentation = record.phase { effects.append(.stopPresentationWait(id)) }
        if record.bannerShown {
            record.bannerShown = false
            effects.append(.hideBanner(id))
        }
        if record.timeLimitDeadline != nil { effects.append(.disarmTimeLimit(id)) }
        record.timeLimitDeadline = nil
        record.restrictionRequest = nil
        record.queuedUpdates = []
        if liveSessionID == id {
            liveSessionID = nil
            effects.append(.lockStateChanged(.inactive))
        }
        let to: String
        switch answer {
        case .failed(let reason, _)?:
            record.phase = .failed(reason)
            to = "failed(\(reason))"
        case .ended?:
            record.phase = .ended
            to = "ended"
        default:
            to = "destroyed"
        }
        sessions[id] = record
        if let answer { effects.append(.send(id, answer)) }
        effects.append(log(answer == nil ? .notice : .info, "\(id) of \(record.owner): \(from) → \(to) (\(why)); restrictions reverted"))
        return effects
    }

    private func log(_ level: SessionLogEntry.Level, _ message: String) -> SessionEffect {
        .log(SessionLogEntry(level, message))
    }
}
