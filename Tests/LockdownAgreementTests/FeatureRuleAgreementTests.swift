import AssessmentKit
import CarrelCore
import CarrelTestSupport
import Testing

/// The compositor's Invigilator and AssessmentKit's in-memory lockdown answer
/// begin and update the same way for any announced features and any
/// configuration: both apply CarrelWire's `FeatureRule`. Seeded random
/// sequences, so a failing seed replays exactly.
@Suite("Invigilator and in-memory lockdown agree on features")
struct FeatureRuleAgreementTests {
    /// What a client hears for a request, in protocol terms.
    enum Answer: Hashable, CustomStringConvertible {
        case began
        case failed(String, message: String)
        case updated
        case updateFailed(String, message: String)
        case ended

        var description: String {
            switch self {
            case .began: return "began"
            case .failed(let reason, let message): return "failed(\(reason), \"\(message)\")"
            case .updated: return "updated"
            case .updateFailed(let reason, let message): return "update_failed(\(reason), \"\(message)\")"
            case .ended: return "ended"
            }
        }
    }

    /// The compositor's side: an Invigilator whose restrictions always hold
    /// and whose frames are always presented, as a compositor would report.
    struct Compositor {
        var invigilator: Invigilator
        let session = SessionID(1)
        let client = ClientID(1)
        let now = Instant(nanoseconds: 1_000_000_000)

        init(announced: [AssessmentFeature: AssessmentFeature.Enforcement]) {
            invigilator = Invigilator(policy: SessionPolicy(announcedFeatures: announced))
        }

        mutating func begin(allowing allowed: Set<AssessmentFeature>) -> [Answer] {
            let configuration = CarrelCore.AssessmentConfiguration(allowedFeatures: allowed)
            var effects = invigilator.begin(session, client: client, role: .app, surface: .mappedToplevel,
                                            configuration: configuration, now: now)
            if effects.contains(where: { if case .applyRestrictions = $0 { true } else { false } }) {
                effects += invigilator.restrictionsApplied(session, .applied, now: now)
                effects += invigilator.framePresented(session, now: now)
            }
            return answers(effects)
        }

        mutating func update(allowing allowed: Set<AssessmentFeature>) -> [Answer] {
            var effects = invigilator.update(session, to: CarrelCore.AssessmentConfiguration(allowedFeatures: allowed))
            if effects.contains(where: { if case .applyRestrictions = $0 { true } else { false } }) {
                effects += invigilator.restrictionsApplied(session, .applied, now: now)
            }
            return answers(effects)
        }

        mutating func finish() -> [Answer] {
            let wasLive = invigilator.liveSession != nil
            let effects = wasLive ? invigilator.end(session) : []
            _ = invigilator.destroy(session)
            return answers(effects)
        }

        private func answers(_ effects: [SessionEffect]) -> [Answer] {
            effects.compactMap { effect in
                guard case .send(_, let event) = effect else { return nil }
                switch event {
                case .began: return .began
                case .failed(let reason, let message): return .failed(reason.protocolName, message: message)
                case .updated: return .updated
                case .updateFailed(let reason, let message): return .updateFailed(reason.protocolName, message: message)
                case .ended: return .ended
                case .interrupted: return nil
                }
            }
        }
    }

    /// The app's side: an AssessmentKit session on the in-memory lockdown.
    final class Lockdown: AssessmentSessionDelegate {
        let manager: InMemoryAssessmentManager
        var session: AssessmentSession?
        var heard: [Answer] = []

        init(announced: [AssessmentFeature: AssessmentFeature.Enforcement]) {
            manager = InMemoryAssessmentManager(features: announced)
        }

        func begin(allowing allowed: Set<AssessmentFeature>) -> [Answer] {
            let session = manager.makeSession(configuration: AssessmentKit.AssessmentConfiguration(allowedFeatures: allowed))
            session.delegate = self
            self.session = session
            session.begin()
            return take()
        }

        func update(allowing allowed: Set<AssessmentFeature>) -> [Answer] {
            session?.update(to: AssessmentKit.AssessmentConfiguration(allowedFeatures: allowed))
            return take()
        }

        func finish() -> [Answer] {
            if session?.isActive == true { session?.end() }
            let answers = take()
            session = nil
            return answers
        }

        private func take() -> [Answer] {
            manager.dispatch()
            defer { heard = [] }
            return heard
        }

        func assessmentSessionDidBegin(_ session: AssessmentSession) { heard.append(.began) }
        func assessmentSession(_ session: AssessmentSession, failedToBeginWithError error: AssessmentError) {
            heard.append(.failed(error.code.protocolName, message: error.message))
        }
        func assessmentSessionDidEnd(_ session: AssessmentSession) { heard.append(.ended) }
        func assessmentSessionDidUpdate(_ session: AssessmentSession) { heard.append(.updated) }
        func assessmentSession(_ session: AssessmentSession, failedToUpdateTo configuration: AssessmentKit.AssessmentConfiguration,
                               error: AssessmentError) {
            heard.append(.updateFailed(error.code.protocolName, message: error.message))
        }
    }

    static func features(_ random: inout SeededRandom, keep chance: Double) -> Set<AssessmentFeature> {
        Set(AssessmentFeature.allCases.filter { _ in Double.random(in: 0..<1, using: &random) < chance })
    }

    @Test("the same answers to begin and update", arguments: [1, 2, 3, 7, 42, 2026] as [UInt64])
    func sameAnswers(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var refusals = 0, acceptances = 0
        for round in 0..<200 {
            // Mostly-complete announcements, so both outcomes are common.
            let announcedSet = Self.features(&random, keep: 0.85)
            let announced = Dictionary(uniqueKeysWithValues: announcedSet.map {
                ($0, Bool.random(using: &random) ? AssessmentFeature.Enforcement.client : .compositor)
            })
            var compositor = Compositor(announced: announced)
            let lockdown = Lockdown(announced: announced)
            #expect(lockdown.manager.features == compositor.invigilator.policy.announcedFeatures)

            let allowed = Self.features(&random, keep: 0.5)
            let begun = compositor.begin(allowing: allowed)
            #expect(lockdown.begin(allowing: allowed) == begun,
                    "seed \(seed) round \(round): announced \(announced.keys.sorted()), allowed \(allowed.sorted())")
            if begun == [.began] { acceptances += 1 } else { refusals += 1 }

            // Updates only of a begun session: on the wire an update after
            // failed is ignored, while AssessmentKit refuses it locally.
            for step in 0..<(begun == [.began] ? Int.random(in: 0...3, using: &random) : 0) {
                let next = Self.features(&random, keep: 0.5)
                let updated = compositor.update(allowing: next)
                #expect(lockdown.update(allowing: next) == updated,
                        "seed \(seed) round \(round) update \(step): announced \(announced.keys.sorted()), allowed \(next.sorted())")
            }
            #expect(lockdown.finish() == compositor.finish(), "seed \(seed) round \(round): end")
        }
        // The sequences exercise both sides of the rule.
        #expect(refusals > 10 && acceptances > 10, "seed \(seed): \(acceptances) began, \(refusals) refused")
    }

    @Test("allowing a feature nobody announced has no effect; leaving it denied is refused")
    func unannouncedFeature() {
        let announced = FeatureRule.standardAnnouncements.filter { $0.key != .screenReader }
        var compositor = Compositor(announced: announced)
        let lockdown = Lockdown(announced: announced)
        #expect(compositor.begin(allowing: [.screenReader]) == [.began])
        #expect(lockdown.begin(allowing: [.screenReader]) == [.began])
        _ = compositor.finish(); _ = lockdown.finish()

        var refusing = Compositor(announced: announced)
        let refused = refusing.begin(allowing: [])
        #expect(refused == [.failed("unsupported_configuration", message: FeatureRule.refusal(allowed: [], announced: announced)!)])
        #expect(Lockdown(announced: announced).begin(allowing: []) == refused)
    }
}
