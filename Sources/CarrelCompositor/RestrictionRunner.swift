import CarrelCore
import Logging

/// Runs Core's restriction plans (`RestrictionPlan`) one at a time, in the
/// order Core asked (`RestrictionQueue`): a step whose result comes later
/// (the providers' nft load or the helper's answer) leaves the plan in
/// flight while the loop goes on drawing and reading keys; a revert or
/// another apply asked meanwhile waits behind it. Each apply's outcome goes
/// to Core once, in order: returned when it was known at once (the effect
/// that asked queues Core's answer itself), otherwise driven from the loop.
final class RestrictionRunner {
    private unowned let server: Server
    private var queue = RestrictionQueue()
    private var run: RestrictionPlan.Run?
    /// Counts plans begun: a late result for another plan is ignored.
    private var begun = 0

    init(server: Server) { self.server = server }

    /// `request` from Core's effects; the effects of an apply's outcome (and
    /// of any plan that waited and ran to its end at once) when known now.
    func ask(_ request: RestrictionQueue.Request) -> [DeskEffect] {
        guard let now = queue.ask(request) else {
            server.logger.info("restrictions: \(request) waits for \(queue.inFlight.map(String.init(describing:)) ?? "the plan in flight")")
            return []
        }
        return begin(now)
    }

    private func begin(_ request: RestrictionQueue.Request) -> [DeskEffect] {
        begun += 1
        switch request {
        case .apply(let set):
            run = RestrictionPlan.apply(set, newSession: server.restrictionsHeldFor != set.session,
                                        running: server.participants.running).start()
        case .revert(let id):
            // Only what is held for `id` comes down (an apply that failed left nothing).
            run = server.restrictionsHeldFor == id ? RestrictionPlan.revert(running: server.participants.running).start() : nil
        }
        return advance(request)
    }

    /// Runs steps until one answers later or the plan is over; then reports
    /// and begins the next request waiting.
    private func advance(_ request: RestrictionQueue.Request) -> [DeskEffect] {
        let plan = begun
        let session: SessionID
        let set: RestrictionSet?
        switch request {
        case .apply(let applying): (session, set) = (applying.session, applying)
        case .revert(let id): (session, set) = (id, nil)
        }
        while let step = run?.next {
            let result = server.runRestrictionStep(step, session: session, set: set) { [weak self] late in
                self?.heard(late, plan: plan, request: request)
            }
            guard let result else { return [] }  // answered later, from the loop
            run?.report(result)
        }
        let outcome = run?.outcome ?? .applied
        run = nil
        var effects: [DeskEffect] = []
        if let set {
            effects = server.decide { $0.restrictionsApplied(set, outcome, now: AssessmentService.now()) }
        }
        if let next = queue.finished() { effects += begin(next) }
        return effects
    }

    /// A step's late result: the plan goes on; what Core decides is carried out.
    private func heard(_ result: RestrictionPlan.StepResult, plan: Int, request: RestrictionQueue.Request) {
        guard plan == begun, run != nil else { return }
        run?.report(result)
        server.carryOut(advance(request))
    }
}
