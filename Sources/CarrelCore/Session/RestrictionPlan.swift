/// What the compositor does, in order, to put a session's restrictions up
/// (a begin or an update) or take them down, and what each failure undoes.
/// The compositor only runs steps and reports each one's result
/// (`execute`); the order, the rollback and the outcome Core hears are
/// decided here, all or nothing: after a failure nothing this plan did is
/// left applied, after success nothing it names is missing.
public struct RestrictionPlan: Sendable, Equatable {
    public enum Step: Sendable, Hashable, CustomStringConvertible {
        /// The machine meets the policy's preconditions (a new session only).
        case checkPreconditions
        /// The renderer can draw what the set allows (an allowed magnifier).
        case checkRenderer
        /// Starts these participants, all or nothing (the step itself stops
        /// the ones it started when one cannot start).
        case startParticipants([String])
        /// Loads the providers' state for the set (network, media, ...).
        case applyProviders
        /// Stops these participants.
        case stopParticipants([String])
        /// The on-screen keyboard runs exactly while the set allows it (a
        /// keyboard that cannot start leaves the session without one).
        case followKeyboard
        /// The restrictions are held for the set's session: recorded, audited.
        case markHeld
        /// Stops the keyboard (its connection first).
        case stopKeyboard
        /// Ends the orphans Carrel took in from what it launched.
        case endStrays
        /// Takes down what the providers hold.
        case revertProviders
        /// The restrictions are no longer held: recorded, audited.
        case markReleased

        public var description: String {
            switch self {
            case .checkPreconditions: return "check preconditions"
            case .checkRenderer: return "check renderer"
            case .startParticipants(let ids): return "start participants \(ids.joined(separator: ","))"
            case .applyProviders: return "apply providers"
            case .stopParticipants(let ids): return "stop participants \(ids.joined(separator: ","))"
            case .followKeyboard: return "follow keyboard"
            case .markHeld: return "mark held"
            case .stopKeyboard: return "stop keyboard"
            case .endStrays: return "end strays"
            case .revertProviders: return "revert providers"
            case .markReleased: return "mark released"
            }
        }

        /// How a failure of this step reaches Core; nil for a step that
        /// cannot fail (stops, records: they are done whatever happens).
        func outcome(_ message: String) -> RestrictionOutcome? {
            switch self {
            case .checkPreconditions: return .unsupported(message)
            case .checkRenderer, .applyProviders: return .failed(message)
            case .startParticipants: return .participantUnavailable(message)
            case .stopParticipants, .followKeyboard, .markHeld, .stopKeyboard, .endStrays, .revertProviders, .markReleased:
                return nil
            }
        }
    }

    /// What running one step came to.
    public enum StepResult: Sendable, Equatable {
        case done
        case failed(String)
    }

    public let steps: [Step]
    /// For each step that can fail: what undoes the steps before it.
    private let undo: [Int: [Step]]

    /// Putting `set` up. `newSession`: no restrictions are held for its
    /// session yet (the preconditions are checked only then); `running`:
    /// the participants running now. Participants the set adds start before
    /// the providers (a participant with the network is let through the
    /// ruleset the providers load); those it leaves out stop only once
    /// everything else holds, so a failure leaves the running ones as they were.
    public static func apply(_ set: RestrictionSet, newSession: Bool, running: Set<String>) -> RestrictionPlan {
        let added = set.participants.filter { !running.contains($0) }
        let leftOut = running.filter { !set.participants.contains($0) }.sorted()
        var steps: [Step] = []
        if newSession { steps.append(.checkPreconditions) }
        steps.append(.checkRenderer)
        if !added.isEmpty { steps.append(.startParticipants(added)) }
        steps.append(.applyProviders)
        var undo: [Int: [Step]] = [:]
        if !added.isEmpty { undo[steps.count - 1] = [.stopParticipants(added)] }
        if !leftOut.isEmpty { steps.append(.stopParticipants(leftOut)) }
        steps += [.followKeyboard, .markHeld]
        return RestrictionPlan(steps: steps, undo: undo)
    }

    /// Taking the restrictions down: participants first (stopped, reaped,
    /// their windows gone), the keyboard, the orphans, then the providers
    /// (whose slow part, the table's delete, the compositor starts without
    /// waiting); all before the session's last event is sent, unless the
    /// plan waited behind an apply in flight (`RestrictionQueue`). Nothing
    /// here can fail.
    public static func revert(running: Set<String>) -> RestrictionPlan {
        var steps: [Step] = []
        if !running.isEmpty { steps.append(.stopParticipants(running.sorted())) }
        steps += [.stopKeyboard, .endStrays, .revertProviders, .markReleased]
        return RestrictionPlan(steps: steps, undo: [:])
    }

    /// What undoes the steps before `index` when it fails.
    public func rollback(afterFailureAt index: Int) -> [Step] { undo[index] ?? [] }

    /// Runs the plan through `run`, which performs one step and says how it
    /// went; a failure runs that step's rollback and ends the plan. Returns
    /// the outcome Core hears (`.applied` when every step was done).
    public func execute(_ run: (Step) -> StepResult) -> RestrictionOutcome {
        var progress = start()
        while let step = progress.next { progress.report(run(step)) }
        return progress.outcome!
    }

    /// The plan run one step at a time, for a compositor whose step's result
    /// comes later (the providers' nft load, the helper's answer): it runs
    /// `next`, and `report`s how it went when it knows, on the event loop.
    public func start() -> Run { Run(plan: self) }

    /// Where a plan's run stands: the step to run now, or the outcome once
    /// there is none. The same decisions as `execute`: the steps in order, a
    /// failing step's rollback, then the outcome; the rollback's own results
    /// change nothing (stops cannot fail).
    public struct Run: Sendable, Equatable {
        public let plan: RestrictionPlan
        /// The step to run now; nil once the run is over (`outcome` is set).
        public private(set) var next: Step?
        /// What Core hears; nil while steps are left.
        public private(set) var outcome: RestrictionOutcome?
        private var index = 0
        /// After a failure: the rollback steps left, and the failure's outcome.
        private var undoing: [Step]?
        private var failure: RestrictionOutcome?

        init(plan: RestrictionPlan) {
            self.plan = plan
            next = plan.steps.first
            if next == nil { outcome = .applied }
        }

        /// How `next` went. Reporting when there is no step to run (the run
        /// is over) is a compositor's mistake and changes nothing.
        public mutating func report(_ result: StepResult) {
            guard next != nil else { return }
            if var left = undoing {
                left.removeFirst()
                undoing = left
                finishOr(left.first)
                return
            }
            if case .failed(let message) = result, let failed = plan.steps[index].outcome(message) {
                failure = failed
                let left = plan.rollback(afterFailureAt: index)
                undoing = left
                finishOr(left.first)
                return
            }
            index += 1
            finishOr(index < plan.steps.count ? plan.steps[index] : nil)
        }

        private mutating func finishOr(_ step: Step?) {
            next = step
            if step == nil { outcome = failure ?? .applied }
        }
    }
}
