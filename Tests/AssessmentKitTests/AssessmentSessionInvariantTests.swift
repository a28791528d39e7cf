import AssessmentKit
import CarrelTestSupport
import Testing

/// Seeded random operation sequences over several sessions of one lockdown,
/// checking after every step what the protocol promises an app.
@Suite("AssessmentSession invariants under random operations")
struct AssessmentSessionInvariantTests {
    enum Operation: CaseIterable {
        case make, begin, end, update, interrupt, release, dispatch, scriptFailure, scriptPending, answerPending
    }

    @Test("invariants hold after every step", arguments: Array(UInt64(1)...UInt64(40)))
    func randomSequences(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let lockdown = InMemoryAssessmentManager()
        var live: [(AssessmentSession, DelegateRecorder)] = []
        var finished: [DelegateRecorder] = []

        for step in 0..<200 {
            switch Operation.allCases.randomElement(using: &random)! {
            case .make where live.count < 4:
                live.append(makeSession(lockdown))
            case .make:
                break
            case .begin:
                live.randomElement(using: &random)?.0.begin()
            case .end:
                live.randomElement(using: &random)?.0.end()
            case .update:
                let feature = AssessmentFeature.allCases.randomElement(using: &random)!
                live.randomElement(using: &random)?.0.update(to: AssessmentConfiguration(allowedFeatures: [feature]))
            case .interrupt:
                lockdown.interrupt([.integrity, .administrative, .timeLimit, .shutdown].randomElement(using: &random)!)
            case .release:
                if !live.isEmpty {
                    finished.append(live.remove(at: Int.random(in: 0..<live.count, using: &random)).1)
                }
            case .dispatch:
                lockdown.dispatch()
            case .scriptFailure:
                lockdown.nextBeginResult = .failed(.restrictionFailed)
            case .scriptPending:
                lockdown.nextBeginResult = .pending
            case .answerPending:
                lockdown.answerBegin(Bool.random(using: &random) ? .began : .failed(.timeout))
            }
            check(live: live, finished: finished, lockdown: lockdown, context: "seed \(seed) step \(step)")
        }
    }

    private func check(live: [(AssessmentSession, DelegateRecorder)], finished: [DelegateRecorder],
                       lockdown: InMemoryAssessmentManager, context: String) {
        for recorder in finished + live.map(\.1) {
            let kinds = recorder.events.map(\.kind)
            let answers = kinds.filter { $0 == .began || $0 == .failed }
            #expect(answers.count <= 1, "at most one answer to begin (\(context)): \(kinds)")
            if let terminal = kinds.firstIndex(where: { $0 == .failed || $0 == .ended }) {
                let after = kinds[(terminal + 1)...].filter { $0 != .updateFailed }
                #expect(after.isEmpty, "nothing but local refusals after a terminal event (\(context)): \(kinds)")
            }
            if kinds.contains(.ended) || kinds.contains(.interrupted) {
                #expect(kinds.first == .began || kinds.first == .updateFailed,
                        "interrupted and ended only after began (\(context)): \(kinds)")
            }
        }
        let active = live.filter(\.0.isActive)
        #expect(active.count <= 1, "at most one session active (\(context))")
        // The lockdown is locked exactly while some session's restrictions hold
        // (or its begin is unanswered), once every queued event is heard.
        if lockdown.pendingEventCount == 0 {
            let pendingOrActive = live.filter { [.beginning, .active, .interrupted].contains($0.0.state) }
            #expect(pendingOrActive.count <= 1, "at most one session pending or active (\(context))")
            let holding = live.contains { [.beginning, .active, .interrupted].contains($0.0.state) }
            #expect(lockdown.isLocked == holding, "lock state matches the sessions (\(context))")
        }
    }
}
