import AssessmentKit
import CarrelCore
import CarrelTestSupport
import Testing

/// The compositor's Invigilator and AssessmentKit's in-memory lockdown answer
/// begin, update and end alike for whole configurations (participants, time
/// limits, features, participant network wishes) under generated policies:
/// both apply CarrelWire's `ConfigurationRule` and `SessionAnswer`. Seeded
/// random cases, so a failing seed replays exactly.
@Suite("Invigilator and in-memory lockdown agree on whole configurations")
struct ConfigurationRuleAgreementTests {
    /// What a client hears, in protocol terms.
    enum Answer: Hashable, CustomStringConvertible {
        case began
        case failed(String, message: String)
        case interrupted(String)
        case updated
        case updateFailed(String, message: String)
        case ended

        var description: String {
            switch self {
            case .began: return "began"
            case .failed(let reason, let message): return "failed(\(reason), \"\(message)\")"
            case .interrupted(let reason): return "interrupted(\(reason))"
            case .updated: return "updated"
            case .updateFailed(let reason, let message): return "update_failed(\(reason), \"\(message)\")"
            case .ended: return "ended"
            }
        }
    }

    /// One generated case: what the app asks for, as AssessmentKit holds it.
    struct Case: CustomStringConvertible {
        var features: Set<AssessmentFeature>
        var participants: [String]
        var networkWishes: [String: Bool]
        var mainNetwork: Bool
        var timeLimitSeconds: UInt32?

        /// The app's configuration, built through Apple's names where they exist.
        var kit: AssessmentKit.AssessmentConfiguration {
            var configuration = AssessmentKit.AssessmentConfiguration(allowedFeatures: features)
            configuration.timeLimit = timeLimitSeconds.map { .seconds(Int64($0)) }
            configuration.mainParticipantConfiguration.allowsNetworkAccess = mainNetwork
            for id in participants {
                configuration.setConfiguration(AssessmentParticipantConfiguration(allowsNetworkAccess: networkWishes[id] ?? true),
                                               for: AssessmentApplication(policyName: id))
            }
            return configuration
        }

        /// What the compositor copies from the wire: each participant once, in
        /// order; a network wish of `false` as a denial (the owner's too).
        var wire: CarrelCore.AssessmentConfiguration {
            var seen: Set<String> = []
            let distinct = participants.filter { seen.insert($0).inserted }
            return CarrelCore.AssessmentConfiguration(allowedFeatures: features, participants: distinct,
                                                      timeLimit: timeLimitSeconds,
                                                      networkDeniedParticipants: Set(distinct.filter { networkWishes[$0] == false }),
                                                      ownerNetworkDenied: !mainNetwork)
        }

        var description: String {
            "allow \(features.sorted()) participants \(participants) network \(networkWishes) main \(mainNetwork) limit \(timeLimitSeconds.map(String.init) ?? "default")"
        }
    }

    /// The compositor's side; restrictions always hold and frames are always presented.
    struct Compositor {
        var invigilator: Invigilator
        let now = Instant(nanoseconds: 1_000_000_000)

        init(policy: SessionPolicy) { invigilator = Invigilator(policy: policy) }

        mutating func begin(_ session: Int, _ configuration: CarrelCore.AssessmentConfiguration) -> [Answer] {
            let id = SessionID(UInt64(session))
            var effects = invigilator.begin(id, client: ClientID(UInt64(session)), role: .app, surface: .mappedToplevel,
                                            configuration: configuration, now: now)
            if effects.contains(where: { if case .applyRestrictions = $0 { true } else { false } }) {
                effects += invigilator.restrictionsApplied(id, .applied, now: now)
                effects += invigilator.framePresented(id, now: now)
            }
            return answers(effects)
        }

        mutating func update(_ session: Int, _ configuration: CarrelCore.AssessmentConfiguration) -> [Answer] {
            let id = SessionID(UInt64(session))
            var effects = invigilator.update(id, to: configuration)
            while effects.contains(where: { if case .applyRestrictions = $0 { true } else { false } }) {
                effects = effects.filter { if case .applyRestrictions = $0 { false } else { true } }
                effects += invigilator.restrictionsApplied(id, .applied, now: now)
            }
            return answers(effects)
        }

        mutating func interrupt() -> [Answer] { answers(invigilator.integrityLost("a restriction stopped holding")) }

        mutating func finish(_ session: Int) -> [Answer] {
            let id = SessionID(UInt64(session))
            let effects = invigilator.liveSession?.id == id ? invigilator.end(id) : []
            _ = invigilator.destroy(id)
            return answers(effects)
        }

        private func answers(_ effects: [SessionEffect]) -> [Answer] {
            effects.compactMap { effect in
                guard case .send(_, let event) = effect else { return nil }
                switch event {
                case .began: return .began
                case .failed(let reason, let message): return .failed(reason.protocolName, message: message)
                case .interrupted(let reason, _): return .interrupted(reason.protocolName)
                case .updated: return .updated
                case .updateFailed(let reason, let message): return .updateFailed(reason.protocolName, message: message)
                case .ended: return .ended
                }
            }
        }
    }

    /// The app's side: AssessmentKit sessions on one in-memory lockdown.
    final class Lockdown: AssessmentSessionDelegate {
        let manager: InMemoryAssessmentManager
        var sessions: [Int: AssessmentSession] = [:]
        var heard: [Answer] = []

        init(policy: SessionPolicy) {
            manager = InMemoryAssessmentManager(features: policy.announcedFeatures)
            manager.knownParticipants = policy.knownParticipants
            manager.maximumTimeLimit = policy.effectiveMaximumTimeLimit
        }

        func begin(_ number: Int, _ configuration: AssessmentKit.AssessmentConfiguration) -> [Answer] {
            let session = AssessmentSession(configuration: configuration, manager: manager)
            session.delegate = self
            sessions[number] = session
            session.begin()
            return take()
        }

        func update(_ number: Int, _ configuration: AssessmentKit.AssessmentConfiguration) -> [Answer] {
            sessions[number]?.update(to: configuration)
            return take()
        }

        func interrupt() -> [Answer] {
            manager.interrupt(.integrity, message: "a restriction stopped holding")
            return take()
        }

        func finish(_ number: Int) -> [Answer] {
            if sessions[number]?.isActive == true { sessions[number]?.end() }
            let answers = take()
            sessions[number] = nil
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
        func assessmentSession(_ session: AssessmentSession, wasInterruptedWithError error: AssessmentError) {
            heard.append(.interrupted(error.code.protocolName))
        }
        func assessmentSessionDidEnd(_ session: AssessmentSession) { heard.append(.ended) }
        func assessmentSessionDidUpdate(_ session: AssessmentSession) { heard.append(.updated) }
        func assessmentSession(_ session: AssessmentSession, failedToUpdateTo configuration: AssessmentKit.AssessmentConfiguration,
                               error: AssessmentError) {
            heard.append(.updateFailed(error.code.protocolName, message: error.message))
        }
    }

    static let participantPool = ["calculator", "dictionary", "periodic-table", "browser"]
    static let limits: [UInt32?] = [nil, nil, 1, 599, 600, 601, 3600, 7200, 7201, 8 * 3600, 8 * 3600 + 1]

    static func policy(_ random: inout SeededRandom) -> SessionPolicy {
        let known = Set(participantPool.dropLast().filter { _ in Double.random(in: 0..<1, using: &random) < 0.75 })
        let maximum = ([nil, 600, 7200] as [UInt32?]).randomElement(using: &random)!
        let announced = Dictionary(uniqueKeysWithValues: AssessmentFeature.allCases
            .filter { _ in Double.random(in: 0..<1, using: &random) < 0.95 }
            .map { ($0, Bool.random(using: &random) ? AssessmentFeature.Enforcement.client : .compositor) })
        var policy = SessionPolicy(maximumTimeLimit: maximum, knownParticipants: known, announcedFeatures: announced)
        // The in-memory lockdown stands for a machine that enforces every
        // restriction, the network's too (without it a network denial is refused).
        policy.networkRestricted = true
        return policy
    }

    static func generatedCase(_ random: inout SeededRandom) -> Case {
        let features = Set(AssessmentFeature.allCases.filter { _ in Double.random(in: 0..<1, using: &random) < 0.3 })
        let count = Int.random(in: 0...3, using: &random)
        let participants = (0..<count).map { _ in participantPool.randomElement(using: &random)! }
        let wishes = Dictionary(participants.map { ($0, Bool.random(using: &random)) }, uniquingKeysWith: { first, _ in first })
        return Case(features: features, participants: participants, networkWishes: wishes,
                    mainNetwork: Bool.random(using: &random), timeLimitSeconds: limits.randomElement(using: &random)!)
    }

    @Test("the same answers to begin, a second begin, update and end", arguments: [1, 2, 3, 7, 42, 2026] as [UInt64])
    func sameAnswers(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var began = 0, refused = 0, participantsBegun = 0, updatesRefused = 0, interrupted = 0
        for round in 0..<200 {
            let policy = Self.policy(&random)
            var compositor = Compositor(policy: policy)
            let lockdown = Lockdown(policy: policy)
            let first = Self.generatedCase(&random)
            let context = "seed \(seed) round \(round), policy known \(policy.knownParticipants.sorted()) max \(policy.effectiveMaximumTimeLimit)"

            let answer = compositor.begin(1, first.wire)
            #expect(lockdown.begin(1, first.kit) == answer, "\(context): begin \(first)")
            guard answer == [.began] else {
                refused += 1
                #expect(lockdown.finish(1) == compositor.finish(1), "\(context): after a refused begin")
                continue
            }
            began += 1
            if !first.participants.isEmpty { participantsBegun += 1 }

            // Another session while this one holds the lock.
            let second = Self.generatedCase(&random)
            #expect(lockdown.begin(2, second.kit) == compositor.begin(2, second.wire), "\(context): second begin \(second)")
            _ = lockdown.finish(2); _ = compositor.finish(2)

            for step in 0..<Int.random(in: 0...3, using: &random) {
                if Int.random(in: 0..<3, using: &random) == 0 {
                    interrupted += 1
                    #expect(lockdown.interrupt() == compositor.interrupt(), "\(context): interrupt before update \(step)")
                }
                let next = Self.generatedCase(&random)
                let updated = compositor.update(1, next.wire)
                #expect(lockdown.update(1, next.kit) == updated, "\(context): update \(step) to \(next)")
                if updated != [.updated] { updatesRefused += 1 }
            }
            #expect(lockdown.finish(1) == compositor.finish(1), "\(context): end")
        }
        // The cases reach every row of the rule table.
        #expect(began > 15 && refused > 15 && participantsBegun > 5 && updatesRefused > 5 && interrupted > 2,
                "seed \(seed): \(began) began (\(participantsBegun) with participants), \(refused) refused, \(updatesRefused) updates refused, \(interrupted) interrupted")
    }

    @Test("each row of the rule table, named")
    func rows() {
        var policy = SessionPolicy(maximumTimeLimit: 600, knownParticipants: ["calculator"])
        policy.networkRestricted = true
        let all = Set(AssessmentFeature.allCases)
        let rows: [(Case, String?)] = [
            (Case(features: [], participants: ["calculator"], networkWishes: ["calculator": true], mainNetwork: true, timeLimitSeconds: 600), nil),
            (Case(features: all, participants: ["browser"], networkWishes: [:], mainNetwork: false, timeLimitSeconds: nil),
             "participant \"browser\" not in the policy (known: calculator)"),
            (Case(features: [], participants: [], networkWishes: [:], mainNetwork: false, timeLimitSeconds: 601),
             "time limit 601 s is above the policy's maximum of 600 s"),
        ]
        for (row, expected) in rows {
            var compositor = Compositor(policy: policy)
            let lockdown = Lockdown(policy: policy)
            let answer = compositor.begin(1, row.wire)
            #expect(answer == (expected.map { [.failed("unsupported_configuration", message: $0)] } ?? [.began]), "\(row)")
            #expect(lockdown.begin(1, row.kit) == answer, "\(row)")
        }
    }
}
