import CarrelCore
import Testing

/// A machine as the restriction steps change it: who runs, what the
/// providers hold, whether the keyboard follows a set, what is held. Each
/// step that can fail fails when `fails` says so; a failing participant
/// start leaves nothing started (the step is all or nothing itself).
private struct Machine: Equatable {
    var running: Set<String> = []
    var providers: SessionID?
    var keyboardFollows: SessionID?
    var held: SessionID?
    var stopped: [String] = []
    var strayHunts = 0

    mutating func run(_ step: RestrictionPlan.Step, session: SessionID,
                      fails: (RestrictionPlan.Step) -> Bool) -> RestrictionPlan.StepResult {
        switch step {
        case .checkPreconditions, .checkRenderer:
            if fails(step) { return .failed("\(step) failed") }
        case .startParticipants(let ids):
            if fails(step) { return .failed("participant \(ids[0]) could not be started") }
            running.formUnion(ids)
        case .applyProviders:
            if fails(step) { return .failed("nft refused") }
            providers = session
        case .stopParticipants(let ids):
            running.subtract(ids)
            stopped += ids
        case .followKeyboard:
            keyboardFollows = session
        case .markHeld:
            held = session
        case .stopKeyboard:
            keyboardFollows = nil
        case .endStrays:
            strayHunts += 1
        case .revertProviders:
            providers = nil
        case .markReleased:
            held = nil
        }
        return .done
    }
}

/// SplitMix64: a seeded generator, so a failing sequence can be replayed.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("RestrictionPlan: the begin's steps in order, each failure rolled back")
struct RestrictionPlanTests {
    func set(_ session: UInt64, _ participants: [String]) -> RestrictionSet {
        RestrictionSet(session: SessionID(session), owner: ClientID(1),
                       configuration: AssessmentConfiguration(participants: participants), policy: SessionPolicy())
    }

    @Test("a begin checks, starts participants before the providers, and stops the left-out ones last")
    func order() {
        let plan = RestrictionPlan.apply(set(1, ["calc", "dict"]), newSession: true, running: ["dict", "old"])
        #expect(plan.steps == [.checkPreconditions, .checkRenderer, .startParticipants(["calc"]), .applyProviders,
                               .stopParticipants(["old"]), .followKeyboard, .markHeld])
        #expect(plan.rollback(afterFailureAt: 3) == [.stopParticipants(["calc"])], "the providers' failure stops what it started")
        #expect(plan.rollback(afterFailureAt: 2).isEmpty, "a failed start has stopped its own")
        let update = RestrictionPlan.apply(set(1, ["dict"]), newSession: false, running: ["dict"])
        #expect(update.steps == [.checkRenderer, .applyProviders, .followKeyboard, .markHeld],
                "an update of the held session does not check the preconditions again")
    }

    @Test("the end stops participants, the keyboard and the orphans before the providers come down")
    func revert() {
        #expect(RestrictionPlan.revert(running: ["dict", "calc"]).steps
            == [.stopParticipants(["calc", "dict"]), .stopKeyboard, .endStrays, .revertProviders, .markReleased])
        #expect(RestrictionPlan.revert(running: []).steps == [.stopKeyboard, .endStrays, .revertProviders, .markReleased])
    }

    @Test("each failing step reaches Core as its own outcome")
    func outcomes() {
        let plan = RestrictionPlan.apply(set(1, ["calc"]), newSession: true, running: [])
        func failing(_ bad: RestrictionPlan.Step) -> RestrictionOutcome {
            var machine = Machine()
            return plan.execute { machine.run($0, session: SessionID(1), fails: { $0 == bad }) }
        }
        #expect(failing(.checkPreconditions) == .unsupported("check preconditions failed"))
        #expect(failing(.checkRenderer) == .failed("check renderer failed"))
        #expect(failing(.startParticipants(["calc"])) == .participantUnavailable("participant calc could not be started"))
        #expect(failing(.applyProviders) == .failed("nft refused"))
        #expect(failing(.markHeld) == .applied, "nothing else can fail")
    }

    @Test("seeded random faults at every step: after a failure nothing of the plan is left applied, after success nothing is missing")
    func faultInjection() {
        let ids = ["calc", "dict", "notes", "clock"]
        for seed in UInt64(1)...400 {
            var random = SplitMix64(state: seed)
            var machine = Machine()
            var held: RestrictionSet?
            // A run of begins, updates and ends, each step failing at random.
            for round in 0..<12 {
                let session = held?.session ?? SessionID(UInt64(round + 1))
                let wanted = ids.filter { _ in Bool.random(using: &random) }
                let next = set(session.raw, wanted)
                let before = machine
                if held != nil, Int.random(in: 0..<4, using: &random) == 0 {
                    _ = RestrictionPlan.revert(running: machine.running).execute {
                        machine.run($0, session: session, fails: { _ in true })
                    }
                    #expect(machine.running.isEmpty && machine.providers == nil && machine.held == nil
                            && machine.keyboardFollows == nil, "seed \(seed): an end leaves nothing, even when everything 'fails'")
                    held = nil
                    continue
                }
                let failureRate = Int.random(in: 2...6, using: &random)
                let plan = RestrictionPlan.apply(next, newSession: held == nil, running: machine.running)
                let outcome = plan.execute { step in
                    machine.run(step, session: session, fails: { _ in Int.random(in: 0..<failureRate, using: &random) == 0 })
                }
                if outcome == .applied {
                    #expect(machine.running == Set(wanted), "seed \(seed) round \(round): the participants named run, no others")
                    #expect(machine.providers == session && machine.held == session && machine.keyboardFollows == session,
                            "seed \(seed) round \(round): everything is up")
                    held = next
                } else {
                    var expected = before
                    expected.stopped = machine.stopped
                    #expect(machine == expected, "seed \(seed) round \(round): \(outcome) left \(machine), not \(before)")
                }
            }
        }
    }
}

/// The compositor as the plan and the queue drive it: one plan in flight,
/// its provider step's result coming later (or at once), requests asked
/// meanwhile waiting their turn, each apply's outcome reported in order.
private struct Compositor {
    var machine = Machine()
    var queue = RestrictionQueue()
    var run: RestrictionPlan.Run?
    var running: RestrictionQueue.Request?
    /// A provider step under way: the result it will report.
    var late: RestrictionPlan.StepResult?
    /// The applies' outcomes, in the order they were reported.
    var reported: [(SessionID, RestrictionOutcome)] = []
    /// Steps run, with the request they belong to.
    var log: [(RestrictionQueue.Request, RestrictionPlan.Step)] = []
    /// Plans begun while another was in flight (must stay 0).
    var overlaps = 0

    mutating func ask(_ request: RestrictionQueue.Request, fails: (RestrictionPlan.Step) -> Bool,
                      later: (RestrictionPlan.Step) -> Bool) {
        if let now = queue.ask(request) { begin(now, fails: fails, later: later) }
    }

    mutating func begin(_ request: RestrictionQueue.Request, fails: (RestrictionPlan.Step) -> Bool,
                        later: (RestrictionPlan.Step) -> Bool) {
        if late != nil || run != nil { overlaps += 1 }
        running = request
        switch request {
        case .apply(let set):
            run = RestrictionPlan.apply(set, newSession: machine.held != set.session, running: machine.running).start()
        case .revert(let id):
            // As the compositor: only what it holds for `id` comes down.
            run = machine.held == id ? RestrictionPlan.revert(running: machine.running).start() : nil
        }
        advance(fails: fails, later: later)
    }

    /// Runs steps until one's result comes later, or the plan is over.
    mutating func advance(fails: (RestrictionPlan.Step) -> Bool, later: (RestrictionPlan.Step) -> Bool) {
        guard let request = running else { return }
        while let step = run?.next {
            log.append((request, step))
            let session: SessionID
            switch request {
            case .apply(let set): session = set.session
            case .revert(let id): session = id
            }
            let result = machine.run(step, session: session, fails: fails)
            if step == .applyProviders, later(step) {
                late = result
                return
            }
            run?.report(result)
        }
        if case .apply(let set) = request { reported.append((set.session, run!.outcome!)) }
        run = nil
        running = nil
        if let next = queue.finished() { begin(next, fails: fails, later: later) }
    }

    /// The provider step's result arrives.
    mutating func arrive(fails: (RestrictionPlan.Step) -> Bool, later: (RestrictionPlan.Step) -> Bool) {
        guard let result = late else { return }
        late = nil
        run?.report(result)
        advance(fails: fails, later: later)
    }
}

@Suite("RestrictionPlan.Run and RestrictionQueue: steps whose results come later, one plan at a time")
struct RestrictionRunTests {
    func set(_ session: UInt64, _ participants: [String]) -> RestrictionSet {
        RestrictionSet(session: SessionID(session), owner: ClientID(1),
                       configuration: AssessmentConfiguration(participants: participants), policy: SessionPolicy())
    }

    @Test("a run hands out one step at a time and waits for its result")
    func stepByStep() {
        let plan = RestrictionPlan.apply(set(1, ["calc"]), newSession: true, running: [])
        var run = plan.start()
        var seen: [RestrictionPlan.Step] = []
        while let step = run.next {
            #expect(run.outcome == nil, "no outcome while a step is left")
            seen.append(step)
            run.report(.done)
        }
        #expect(seen == plan.steps)
        #expect(run.outcome == .applied)
        run.report(.failed("late and stray"))
        #expect(run.outcome == .applied && run.next == nil, "a report after the end changes nothing")
    }

    @Test("a provider failure reported late runs the rollback, then gives the failure; the rollback's results change nothing")
    func lateFailure() {
        let plan = RestrictionPlan.apply(set(1, ["calc"]), newSession: true, running: ["old"])
        var run = plan.start()
        while let step = run.next, step != .applyProviders { run.report(.done) }
        #expect(run.next == .applyProviders)
        run.report(.failed("nft did not finish within 5.0 s"))
        #expect(run.next == .stopParticipants(["calc"]), "what the plan started is stopped")
        #expect(run.outcome == nil)
        run.report(.failed("ignored"))
        #expect(run.next == nil)
        #expect(run.outcome == .failed("nft did not finish within 5.0 s"))
    }

    @Test("participants started late (the privileged helper's answer): a failure reported late ends the plan before the providers with participant_unavailable, nothing else to undo")
    func lateParticipantFailure() {
        let plan = RestrictionPlan.apply(set(1, ["calc"]), newSession: true, running: [])
        var run = plan.start()
        while let step = run.next, step != .startParticipants(["calc"]) { run.report(.done) }
        #expect(run.next == .startParticipants(["calc"]))
        #expect(run.outcome == nil, "in flight while the helper's answer is out")
        run.report(.failed("participant calc could not be started: the privileged helper did not answer spawn within 12.0 s"))
        #expect(run.next == nil, "the providers are never applied, and the step stopped what it started itself")
        #expect(run.outcome == .participantUnavailable("participant calc could not be started: the privileged helper did not answer spawn within 12.0 s"))
    }

    @Test("an empty revert plan has no step and nothing to fail")
    func revertRun() {
        var run = RestrictionPlan.revert(running: []).start()
        var count = 0
        while run.next != nil { run.report(.failed("x")); count += 1 }
        #expect(count == 4 && run.outcome == .applied)
    }

    @Test("one request in flight; the others wait in order")
    func queueOrder() {
        var queue = RestrictionQueue()
        let a = RestrictionQueue.Request.apply(set(1, []))
        #expect(queue.ask(a) == a)
        #expect(queue.ask(.revert(SessionID(1))) == nil)
        #expect(queue.ask(.apply(set(2, []))) == nil)
        #expect(queue.inFlight == a)
        #expect(queue.finished() == .revert(SessionID(1)))
        #expect(queue.finished() == .apply(set(2, [])))
        #expect(queue.finished() == nil)
        #expect(queue.inFlight == nil)
        #expect(queue.ask(.revert(SessionID(2))) == .revert(SessionID(2)), "idle: runs at once")
    }

    @Test("a revert asked while the apply's providers are in flight comes down after the apply, then the next begin")
    func revertDuringApply() {
        var compositor = Compositor()
        let never: (RestrictionPlan.Step) -> Bool = { _ in false }
        let always: (RestrictionPlan.Step) -> Bool = { _ in true }
        compositor.ask(.apply(set(1, ["calc"])), fails: never, later: always)
        #expect(compositor.late != nil, "the providers' result is awaited")
        #expect(compositor.machine.running == ["calc"] && compositor.machine.held == nil)
        // The session is released while restricting; another begins.
        compositor.ask(.revert(SessionID(1)), fails: never, later: always)
        compositor.ask(.apply(set(2, [])), fails: never, later: always)
        #expect(compositor.reported.isEmpty, "nothing reported before the result")
        #expect(compositor.log.allSatisfy { $0.0 == .apply(set(1, ["calc"])) }, "nothing of the waiting requests ran")
        compositor.arrive(fails: never, later: always)
        // Session 1's apply is reported (Core ignores it), then it comes down, then 2's apply runs up to its providers.
        #expect(compositor.reported.map(\.0) == [SessionID(1)])
        #expect(compositor.machine.running.isEmpty && compositor.machine.stopped == ["calc"])
        #expect(compositor.machine.providers == SessionID(2) && compositor.machine.held == nil)
        compositor.arrive(fails: never, later: always)
        #expect(compositor.reported.map(\.0) == [SessionID(1), SessionID(2)])
        #expect(compositor.reported.map(\.1) == [.applied, .applied])
        #expect(compositor.machine.held == SessionID(2))
    }

    @Test("seeded random faults and late results, with begins, updates and ends asked at any time: one plan at a time, outcomes in order, nothing left half done")
    func lateFaultInjection() {
        let ids = ["calc", "dict", "notes"]
        for seed in UInt64(1)...300 {
            var random = SplitMix64(state: seed)
            var compositor = Compositor()
            var asked: [SessionID] = []
            var nextSession: UInt64 = 1
            var current: SessionID?
            var lastRequest: RestrictionQueue.Request?
            let failureRate = Int.random(in: 2...6, using: &random)
            var failing: (RestrictionPlan.Step) -> Bool = { _ in false }
            var slow: (RestrictionPlan.Step) -> Bool = { _ in false }
            for _ in 0..<30 {
                let draws = (0..<16).map { _ in Int.random(in: 0..<failureRate, using: &random) == 0 }
                let lateness = (0..<16).map { _ in Bool.random(using: &random) }
                var f = 0, l = 0
                failing = { _ in f += 1; return draws[f % draws.count] }
                slow = { _ in l += 1; return lateness[l % lateness.count] }
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where compositor.late != nil:
                    compositor.arrive(fails: failing, later: slow)
                case 1 where current != nil:
                    let request = RestrictionQueue.Request.revert(current!)
                    compositor.ask(request, fails: failing, later: slow)
                    lastRequest = request
                    current = nil
                default:
                    let session = current ?? SessionID(nextSession)
                    if current == nil { nextSession += 1 }
                    current = session
                    let request = RestrictionQueue.Request.apply(set(session.raw, ids.filter { _ in Bool.random(using: &random) }))
                    asked.append(session)
                    compositor.ask(request, fails: failing, later: slow)
                    lastRequest = request
                }
            }
            // Everything still in flight or waiting answers.
            while compositor.late != nil { compositor.arrive(fails: failing, later: slow) }
            #expect(compositor.queue.inFlight == nil && compositor.queue.waiting.isEmpty, "seed \(seed): all ran")
            #expect(compositor.reported.map(\.0) == asked, "seed \(seed): one outcome per apply, in the order asked")
            #expect(compositor.overlaps == 0, "seed \(seed): a plan began while another was in flight")
            switch lastRequest {
            case .revert?:
                #expect(compositor.machine.running.isEmpty && compositor.machine.providers == nil
                        && compositor.machine.held == nil, "seed \(seed): the last end left \(compositor.machine)")
            case .apply(let set)?:
                if compositor.reported.last?.1 == .applied, compositor.machine.held == set.session {
                    #expect(compositor.machine.running == Set(set.participants) && compositor.machine.providers == set.session,
                            "seed \(seed): the last apply's restrictions are all up")
                }
                if compositor.machine.held == nil {
                    #expect(compositor.machine.running.isEmpty && compositor.machine.providers == nil,
                            "seed \(seed): nothing up without a session held: \(compositor.machine)")
                }
            case nil:
                break
            }
        }
    }
}
