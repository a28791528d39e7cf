import CarrelCore

extension Instant {
    static func seconds(_ s: UInt64) -> Instant { Instant(nanoseconds: s * 1_000_000_000) }
}

extension Array where Element == SessionEffect {
    /// The effects without log lines, for exact comparisons.
    var withoutLogs: [SessionEffect] {
        filter { if case .log = $0 { return false } else { return true } }
    }

    /// Events sent on `id`, in order.
    func events(on id: SessionID) -> [SessionEvent] {
        compactMap { if case .send(id, let event) = $0 { return event } else { return nil } }
    }

    var clearsSelections: Bool { contains(.clearSelections) }

    var protocolErrors: [ProtocolViolation] {
        compactMap { if case .protocolError(let violation) = $0 { return violation } else { return nil } }
    }

    var appliedSets: [RestrictionSet] {
        compactMap { if case .applyRestrictions(let set) = $0 { return set } else { return nil } }
    }
}

/// Stands in for the compositor: carries out effects the way the real one
/// must (restriction hook all or nothing, reports in request order, timers
/// armed and disarmed), and records what every client was sent, so tests can
/// check Core's promises against what actually "happened".
struct CompositorDouble {
    var invigilator: Invigilator
    var now: Instant = .seconds(1000)

    /// What the restriction hook holds right now.
    private(set) var held: RestrictionSet?
    /// Outcomes the hook reached but has not reported yet, oldest first.
    private(set) var unreported: [(session: SessionID, outcome: RestrictionOutcome, requested: RestrictionSet)] = []
    /// When false, outcomes stay unreported until `deliverReport` is called.
    var reportsImmediately = true
    /// Decides each `.applyRestrictions`; applied unless a test says otherwise.
    var hookOutcome: (RestrictionSet) -> RestrictionOutcome = { _ in .applied }

    private(set) var lockState: LockState = .inactive
    private(set) var presentationWaits: [SessionID: Instant] = [:]
    private(set) var timeLimits: [SessionID: Instant] = [:]
    private(set) var eventsBySession: [SessionID: [SessionEvent]] = [:]
    private(set) var protocolErrors: [ProtocolViolation] = []
    private(set) var selectionClears = 0
    /// Sessions whose object the client destroyed (or lost by disconnecting).
    private(set) var destroyed: Set<SessionID> = []
    /// Problems found while carrying out effects (e.g. an event to a destroyed object).
    private(set) var contractBreaches: [String] = []
    /// Every effect carried out, in order (logs included).
    private(set) var transcript: [SessionEffect] = []

    init(policy: SessionPolicy = SessionPolicy()) {
        invigilator = Invigilator(policy: policy)
    }

    /// Runs one Core input and carries out what it returns (and, if reports
    /// are immediate, what the reports it causes return). Returns all effects.
    @discardableResult
    mutating func run(_ input: (inout Invigilator) -> [SessionEffect]) -> [SessionEffect] {
        let effects = input(&invigilator)
        var all = effects
        carryOut(effects)
        while reportsImmediately, !unreported.isEmpty {
            all += deliverReport()
        }
        return all
    }

    /// Reports the oldest outstanding hook outcome to Core.
    @discardableResult
    mutating func deliverReport() -> [SessionEffect] {
        guard !unreported.isEmpty else { return [] }
        let report = unreported.removeFirst()
        let now = self.now
        let effects = invigilator.restrictionsApplied(report.session, report.outcome, now: now)
        carryOut(effects)
        return effects
    }

    /// The one-shot time-limit timer of `id` fires at `now`: it is spent
    /// before Core hears of it (Core re-arms it if it fired early).
    @discardableResult
    mutating func fireTimeLimit(_ id: SessionID, at now: Instant) -> [SessionEffect] {
        timeLimits.removeValue(forKey: id)
        return run { $0.timeLimitReached(id, now: now) }
    }

    @discardableResult
    mutating func clientDestroys(_ id: SessionID) -> [SessionEffect] {
        destroyed.insert(id)
        return run { $0.destroy(id) }
    }

    @discardableResult
    mutating func clientDisconnects(_ client: ClientID) -> [SessionEffect] {
        for record in invigilator.sessions.values where record.owner == client { destroyed.insert(record.id) }
        return run { $0.clientDisconnected(client) }
    }

    private mutating func carryOut(_ effects: [SessionEffect]) {
        for effect in effects {
            transcript.append(effect)
            switch effect {
            case .send(let id, let event):
                if destroyed.contains(id) { contractBreaches.append("\(event) sent on destroyed \(id)") }
                eventsBySession[id, default: []].append(event)
            case .protocolError(let violation):
                protocolErrors.append(violation)
            case .applyRestrictions(let set):
                // All or nothing: on failure what held before still holds.
                let outcome = hookOutcome(set)
                if outcome == .applied { held = set }
                unreported.append((set.session, outcome, set))
            case .revertRestrictions:
                held = nil
            case .clearSelections:
                selectionClears += 1
            case .startPresentationWait(let id, let deadline):
                presentationWaits[id] = deadline
            case .stopPresentationWait(let id):
                if presentationWaits.removeValue(forKey: id) == nil {
                    contractBreaches.append("stopPresentationWait for \(id), which had none")
                }
            case .armTimeLimit(let id, let deadline):
                timeLimits[id] = deadline
            case .disarmTimeLimit(let id):
                if timeLimits.removeValue(forKey: id) == nil {
                    contractBreaches.append("disarmTimeLimit for \(id), which had none armed")
                }
            case .lockStateChanged(let state):
                if state == lockState { contractBreaches.append("lock state 'changed' to the same \(state)") }
                lockState = state
            case .askConfirmation, .dismissConfirmation, .showBanner, .hideBanner:
                break  // app-requested locks only; AppLockTests checks them
            case .log:
                break
            }
        }
    }

    // MARK: Invariants

    /// Every promise Core makes that can be checked from one moment; empty
    /// when all hold. Event order is checked for `touched` sessions only
    /// (all of them when `nil`), to keep long sequences linear.
    func invariantViolations(touched: Set<SessionID>? = nil) -> [String] {
        var problems = contractBreaches
        let records = invigilator.sessions.values
        let live = records.filter { $0.phase.isLive }

        // At most one session pending or active, and Core agrees which.
        if live.count > 1 { problems.append("\(live.count) live sessions: \(live.map(\.id))") }
        if invigilator.liveSessionID != live.first?.id {
            problems.append("liveSessionID \(String(describing: invigilator.liveSessionID)) but live \(live.map(\.id))")
        }
        if lockState != invigilator.lockState || lockState != (live.isEmpty ? .inactive : .active) {
            problems.append("lock state told to managers \(lockState), Core \(invigilator.lockState), live \(live.count)")
        }

        // Restrictions hold exactly while the state says so. While a hook
        // outcome is unreported, the hook may already hold the requested set.
        let expected = invigilator.restrictionsInForce
        if held != expected {
            let inFlight = unreported.contains { $0.outcome == .applied && $0.requested == held && $0.session == invigilator.liveSessionID }
            if !inFlight { problems.append("hook holds \(String(describing: held)) but state says \(String(describing: expected))") }
        }
        if live.isEmpty, held != nil { problems.append("restrictions held with no session in progress") }

        // Timers run exactly while something waits for them.
        let awaiting = Dictionary(uniqueKeysWithValues: records.compactMap { r -> (SessionID, Instant)? in
            if case .awaitingPresentation(let d) = r.phase { return (r.id, d) } else { return nil }
        })
        if awaiting != presentationWaits { problems.append("presentation waits \(presentationWaits) but awaiting \(awaiting)") }
        let limits = Dictionary(uniqueKeysWithValues: records.compactMap { r in r.timeLimitDeadline.map { (r.id, $0) } })
        if limits != timeLimits { problems.append("time limits armed \(timeLimits) but state \(limits)") }

        // Event order per session.
        for id in touched ?? Set(eventsBySession.keys) {
            guard let events = eventsBySession[id] else { continue }
            problems += Self.eventOrderProblems(id, events)
            if let record = invigilator.sessions[id] {
                let answers = events.filter(\.answersBegin).count
                let shouldBeAnswered = !record.phase.isPending
                if shouldBeAnswered && answers != 1 {
                    problems.append("\(id) is \(record.phase) but got \(answers) answers to begin: \(events)")
                }
            }
        }
        for record in records where (touched?.contains(record.id) ?? true) && !record.phase.isPending && eventsBySession[record.id] == nil {
            problems.append("\(record.id) is \(record.phase) without any event")
        }
        return problems
    }

    /// Exactly one answer, first; nothing after a terminal event; `began`
    /// before anything a begun session can receive.
    static func eventOrderProblems(_ id: SessionID, _ events: [SessionEvent]) -> [String] {
        var problems: [String] = []
        guard let first = events.first else { return [] }
        if !first.answersBegin { problems.append("\(id): first event \(first) does not answer begin") }
        if events.filter(\.answersBegin).count > 1 { problems.append("\(id): begin answered more than once: \(events)") }
        if let terminal = events.firstIndex(where: \.isTerminal), terminal != events.count - 1 {
            problems.append("\(id): events after terminal \(events[terminal]): \(events[(terminal + 1)...])")
        }
        if case .failed = first, events.count > 1 { problems.append("\(id): events after failed: \(events)") }
        return problems
    }

    /// Checks the clearing rule on one step's effects: every revert and every
    /// `interrupted` is preceded by a clear, and every lock activation (a
    /// begin accepted) is followed by one before its restrictions go up.
    static func selectionProblems(_ effects: [SessionEffect]) -> [String] {
        var problems: [String] = []
        let core = effects.withoutLogs
        for (index, effect) in core.enumerated() {
            switch effect {
            case .revertRestrictions, .send(_, .interrupted):
                if index == 0 || core[index - 1] != .clearSelections {
                    problems.append("\(effect) not preceded by clearing selections in \(core)")
                }
            case .lockStateChanged(.active):
                if index + 1 >= core.count || core[index + 1] != .clearSelections {
                    problems.append("begin accepted without clearing selections in \(core)")
                }
            default:
                break
            }
        }
        return problems
    }
}
