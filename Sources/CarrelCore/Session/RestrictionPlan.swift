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
    /// their windows gone), the keyboard, the orphans, then the providers;
    /// all before the session's last event is sent. Nothing here can fail.
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
        for (index, step) in steps.enumerated() {
            guard case .failed(let message) = run(step) else { continue }
            guard let outcome = step.outcome(message) else { continue }
            for undoing in rollback(afterFailureAt: index) { _ = run(undoing) }
            return outcome
        }
        return .applied
    }
}
