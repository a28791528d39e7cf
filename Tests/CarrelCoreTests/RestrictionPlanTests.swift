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
