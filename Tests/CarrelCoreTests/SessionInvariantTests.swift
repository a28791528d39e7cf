import CarrelCore
import CarrelTestSupport
import Testing

/// Seeded random operation sequences from several clients, checking Core's
/// promises after every step. A failure names the seed and the step; rerun
/// `run(seed:steps:)` with that seed to replay it.
@Suite("Session invariants under random operation sequences")
struct SessionInvariantTests {
    static let seeds: [UInt64] = (1...24).map { $0 &* 0x2545_F491_4F6C_DD1D }
    static let steps = 4000

    @Test("invariants hold after every step", arguments: seeds)
    func randomSequence(seed: UInt64) {
        let failures = Self.run(seed: seed, steps: Self.steps)
        #expect(failures.isEmpty, "seed \(seed): \(failures.prefix(5).joined(separator: "\n"))")
    }

    @Test("the sequences reach every phase and every kind of event")
    func coverage() {
        var phases: Set<String> = []
        var events: Set<String> = []
        for seed in Self.seeds.prefix(8) {
            _ = Self.run(seed: seed, steps: Self.steps) { compositor in
                for record in compositor.invigilator.sessions.values {
                    phases.insert("\(record.phase)".prefix { $0 != "(" }.description)
                }
                for list in compositor.eventsBySession.values {
                    for event in list { events.insert("\(event.kind)") }
                }
            }
        }
        for phase in ["restricting", "awaiting-presentation", "active", "interrupted", "failed", "ended"] {
            #expect(phases.contains(phase), "never reached \(phase)")
        }
        for event in ["began", "ended", "updated", "failed(already_active)", "failed(timeout)", "failed(restriction_failed)",
                      "failed(unsupported_configuration)", "failed(not_entitled)", "failed(surface_not_ready)",
                      "interrupted(time_limit)", "interrupted(integrity)", "interrupted(administrative)",
                      "update_failed(restriction_failed)", "update_failed(unsupported_configuration)",
                      "update_failed(interrupted)"] {
            #expect(events.contains(event), "never sent \(event)")
        }
    }

    /// A client as the sequences see it: its role and the session objects it holds.
    struct Client {
        var id: ClientID
        var role: Role
        var sessions: [SessionID] = []
    }

    /// Runs one sequence; returns every invariant violation found (empty if none).
    static func run(seed: UInt64, steps: Int, observe: (CompositorDouble) -> Void = { _ in }) -> [String] {
        var rng = SeededRandom(seed: seed)
        let policies = [
            SessionPolicy(defaultTimeLimit: 600, knownParticipants: ["calculator", "dictionary"]),
            SessionPolicy(maximumTimeLimit: 3600, knownParticipants: ["calculator"], presentationTimeout: .milliseconds(200)),
            SessionPolicy(entitledRoles: [.app, .participant], announcedFeatures:
                SessionPolicy.standardAnnouncements.filter { $0.key != .screenMagnifier }),
        ]
        var compositor = CompositorDouble(policy: policies[Int(seed % UInt64(policies.count))])
        var clients: [Client] = []
        var nextClient: UInt64 = 1
        var nextSession: UInt64 = 1
        var failures: [String] = []
        var shutDown = false

        func newClient() -> Int {
            let roles: [Role] = [.app, .app, .app, .app, .app, .participant, .untrusted]
            clients.append(Client(id: ClientID(nextClient), role: roles[Int(rng.next() % UInt64(roles.count))]))
            nextClient += 1
            return clients.count - 1
        }
        func randomConfiguration() -> AssessmentConfiguration? {
            if rng.next() % 5 == 0 { return nil }
            var configuration = AssessmentConfiguration()
            for feature in AssessmentFeature.allCases where rng.next() % 4 == 0 { configuration.allowedFeatures.insert(feature) }
            let ids = ["calculator", "dictionary", "browser"]
            for id in ids where rng.next() % 6 == 0 { configuration.participants.append(id) }
            let limits: [UInt32?] = [nil, nil, 1, 30, 600, 3600, 9 * 3600]
            configuration.timeLimit = limits[Int(rng.next() % UInt64(limits.count))]
            return configuration
        }
        func pickSession() -> (client: Int, session: SessionID)? {
            // Half the time the live session, where most rules bite.
            if let live = compositor.invigilator.liveSessionID, rng.next() % 2 == 0,
               let holder = clients.firstIndex(where: { $0.sessions.contains(live) }) {
                return (holder, live)
            }
            let holders = clients.indices.filter { !clients[$0].sessions.isEmpty }
            guard !holders.isEmpty else { return nil }
            let c = holders[Int(rng.next() % UInt64(holders.count))]
            return (c, clients[c].sessions[Int(rng.next() % UInt64(clients[c].sessions.count))])
        }
        /// Liveliest target for compositor reports: usually the live session.
        func reportTarget() -> SessionID? {
            if let live = compositor.invigilator.liveSessionID, rng.next() % 4 != 0 { return live }
            return pickSession()?.session
        }
        /// Mostly a well-behaved client: a session it has seen began for and
        /// not ended. Sometimes any session, so client bugs happen too.
        func pickBegunSession() -> (client: Int, session: SessionID)? {
            if rng.next() % 8 != 0 {
                let begunNotEnded = clients.indices.flatMap { c in
                    clients[c].sessions.filter { id in
                        let events = compositor.eventsBySession[id] ?? []
                        return events.contains(.began) && !events.contains(.ended)
                    }.map { (client: c, session: $0) }
                }
                if begunNotEnded.isEmpty { return nil }
                return begunNotEnded[Int(rng.next() % UInt64(begunNotEnded.count))]
            }
            return pickSession()
        }
        func disconnect(_ index: Int) {
            _ = compositor.clientDisconnects(clients[index].id)
            clients.remove(at: index)
        }

        for step in 0..<steps {
            // The restriction hook fails now and then, and reports late now and then.
            let failRoll = rng.next() % 10
            compositor.hookOutcome = { _ in failRoll == 0 ? .failed("hook refused") : .applied }
            compositor.reportsImmediately = rng.next() % 4 != 0
            compositor.now = compositor.now.advanced(by: .milliseconds(Int64(rng.next() % 50)))

            let operation = rng.next() % 100
            var effects: [SessionEffect] = []
            var described = ""
            switch operation {
            case 0..<16:
                let c = clients.isEmpty || rng.next() % 8 == 0 ? newClient() : Int(rng.next() % UInt64(clients.count))
                let id = SessionID(nextSession); nextSession += 1
                let surfaces: [SurfaceReadiness] = Array(repeating: .mappedToplevel, count: 12) + [.unmappedToplevel, .notToplevel]
                let surface = surfaces[Int(rng.next() % UInt64(surfaces.count))]
                let configuration = randomConfiguration()
                let (client, role, now) = (clients[c].id, clients[c].role, compositor.now)
                described = "begin \(id) by \(client) (\(role)) surface \(surface) \(String(describing: configuration))"
                effects = compositor.run { $0.begin(id, client: client, role: role, surface: surface, configuration: configuration, now: now) }
                clients[c].sessions.append(id)
            case 16..<24:
                described = "deliver report"
                effects = compositor.deliverReport()
            case 24..<36:
                guard let id = reportTarget() else { continue }
                let now = compositor.now
                described = "frame presented for \(id)"
                effects = compositor.run { $0.framePresented(id, now: now) }
            case 36..<41:
                // The presentation timer fires, sometimes early.
                guard let (id, deadline) = compositor.presentationWaits.min(by: { $0.key < $1.key }).map({ ($0.key, $0.value) }) else { continue }
                let early = rng.next() % 3 == 0
                let now = early ? Instant(nanoseconds: deadline.nanoseconds &- 1) : max(compositor.now, deadline)
                if !early { compositor.now = now }
                described = "presentation deadline for \(id) at \(now)"
                effects = compositor.run { $0.presentationDeadlinePassed(id, now: now) }
            case 41..<45:
                guard let (id, deadline) = compositor.timeLimits.min(by: { $0.key < $1.key }).map({ ($0.key, $0.value) }) else { continue }
                let early = rng.next() % 3 == 0
                let now = early ? Instant(nanoseconds: deadline.nanoseconds &- 1_000) : max(compositor.now, deadline)
                if !early { compositor.now = now }
                described = "time limit for \(id) at \(now)"
                effects = compositor.fireTimeLimit(id, at: now)
            case 45..<56:
                guard let (_, id) = pickBegunSession() else { continue }
                described = "end \(id)"
                effects = compositor.run { $0.end(id) }
            case 56..<70:
                guard let (_, id) = pickBegunSession() else { continue }
                let configuration = randomConfiguration() ?? .mostRestrictive
                described = "update \(id) to \(configuration)"
                effects = compositor.run { $0.update(id, to: configuration) }
            case 70..<77:
                guard let (c, id) = pickSession() else { continue }
                described = "destroy \(id)"
                effects = compositor.clientDestroys(id)
                clients[c].sessions.removeAll { $0 == id }
            case 77..<81:
                guard !clients.isEmpty else { continue }
                let c = Int(rng.next() % UInt64(clients.count))
                described = "disconnect \(clients[c].id)"
                disconnect(c)
            case 81..<83:
                described = "integrity lost"
                effects = compositor.run { $0.integrityLost("a restriction stopped holding") }
            case 83..<85:
                described = "administrative interrupt"
                effects = compositor.run { $0.administrativeInterrupt("exam office") }
            case 85..<87:
                // A report for a session not waiting for one (e.g. after it ended).
                guard let id = pickSession()?.session,
                      compositor.invigilator.session(id)?.restrictionRequest == nil,
                      !compositor.unreported.contains(where: { $0.session == id }) else { continue }
                let now = compositor.now
                described = "stray report for \(id)"
                effects = compositor.run { $0.restrictionsApplied(id, .applied, now: now) }
            case 87..<99:
                // Time passes in larger steps, so deadlines come due.
                compositor.now = compositor.now.advanced(by: .seconds(Int64(rng.next() % 900)))
                continue
            default:
                guard !shutDown, step > steps * 19 / 20 else { continue }
                shutDown = true
                described = "shutdown"
                effects = compositor.run { $0.shutdown("poweroff") }
            }

            // A protocol error disconnects the client, as libwayland does.
            for violation in effects.protocolErrors {
                let owner = clients.firstIndex { $0.sessions.contains(violation.session) }
                if case .notBegun(let id) = violation, compositor.eventsBySession[id]?.contains(.began) == true {
                    failures.append("step \(step): not_begun for \(id), which had began")
                }
                if case .alreadyEnded(let id) = violation, compositor.eventsBySession[id]?.last != .ended {
                    failures.append("step \(step): already_ended for \(id), which had not ended")
                }
                if let owner { disconnect(owner) }
            }

            if shutDown, let live = compositor.invigilator.liveSession, live.phase.isPending {
                failures.append("step \(step): \(live.id) is pending after shutdown")
            }
            var touched = Set(effects.compactMap { effect -> SessionID? in
                if case .send(let id, _) = effect { return id } else { return nil }
            })
            touched.formUnion(effects.appliedSets.map(\.session))
            if let live = compositor.invigilator.liveSessionID { touched.insert(live) }
            let problems = compositor.invariantViolations(touched: touched) + CompositorDouble.selectionProblems(effects)
            if !problems.isEmpty {
                failures.append("step \(step) (\(described)): " + problems.joined(separator: "; "))
                break
            }
            observe(compositor)
        }

        // Drain: every report delivered and every presentation wait run out,
        // then each begin must have been answered exactly once, unless its
        // object was destroyed first.
        while !compositor.unreported.isEmpty { compositor.deliverReport() }
        while let (id, deadline) = compositor.presentationWaits.first {
            compositor.now = max(compositor.now, deadline)
            let now = compositor.now
            compositor.run { $0.presentationDeadlinePassed(id, now: now) }
        }
        for record in compositor.invigilator.sessions.values {
            let answers = compositor.eventsBySession[record.id]?.filter(\.answersBegin).count ?? 0
            if answers != 1 { failures.append("after draining, \(record.id) (\(record.phase)) has \(answers) answers") }
        }
        failures += compositor.invariantViolations()
        return failures
    }
}
