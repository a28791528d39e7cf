// The pure decisions the compositor makes on hot paths: once per global per
// client bind, once per state change, and once per rendered frame. Each must
// cost well under a microsecond per call (issue 6).

import Benchmark
import CarrelAudit
import CarrelCore
#if canImport(Glibc)
import Glibc
#endif

/// `bench/micro --smoke` (CI) only proves the benchmarks run.
private let smoke = getenv("CARREL_MICRO_SMOKE") != nil

/// Interfaces a client's registry walk meets: desktop globals, privileged
/// ones, our own, and names nobody classified.
private let probes: [(String, Role)] = {
    let names = GlobalAccess.desktopInterfaces + GlobalAccess.privilegedInterfaces
        + GlobalAccess.assessmentInterfaces + ["wp_unknown_v1", "ext_foreign_thing_v2"]
    return names.flatMap { name in Role.allCases.map { (name, $0) } }
}()

/// An Invigilator whose session `SessionID(1)` has begun.
private func activeInvigilator() -> Invigilator {
    var invigilator = Invigilator(policy: SessionPolicy())
    let now = Instant(nanoseconds: 1_000_000_000)
    _ = invigilator.begin(SessionID(1), client: ClientID(1), role: .app, surface: .mappedToplevel,
                          configuration: nil, now: now)
    _ = invigilator.restrictionsApplied(SessionID(1), .applied, now: now)
    _ = invigilator.framePresented(SessionID(1), now: now)
    precondition(invigilator.restrictionsInForce != nil, "the benchmark session did not begin")
    return invigilator
}

/// A frame's scene during a session: the exam's window (and a dialog), and
/// `foreign` windows of untrusted clients, all disabled as they must be.
private func sceneEntries(foreign: Int) -> [SceneAudit.Entry] {
    var entries = [
        SceneAudit.Entry(window: WindowID(1), owner: WindowOwner(client: ClientID(1), role: .app), isEnabled: true),
        SceneAudit.Entry(window: WindowID(2), owner: WindowOwner(client: ClientID(1), role: .app), isEnabled: true),
    ]
    for index in 0..<foreign {
        let id = UInt64(index + 10)
        entries.append(SceneAudit.Entry(window: WindowID(id), owner: WindowOwner(client: ClientID(id), role: .untrusted),
                                        isEnabled: false))
    }
    return entries
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        timeUnits: .nanoseconds,
        maxDuration: smoke ? .milliseconds(50) : .seconds(1),
        maxIterations: smoke ? 20 : 1_000_000
    )

    // Per call: each iteration decides one (interface, role) pair.
    Benchmark("GlobalAccess.decision (one global, one role)",
              configuration: .init(scalingFactor: .kilo)) { benchmark in
        let access = GlobalAccess.standard
        let count = probes.count
        var index = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let (name, role) = probes[index]
            blackHole(access.decision(interface: name, role: role))
            index = index + 1 == count ? 0 : index + 1
        }
    }

    Benchmark("RestrictionSet.init (most restrictive configuration)",
              configuration: .init(scalingFactor: .kilo)) { benchmark in
        let policy = SessionPolicy()
        let configuration = AssessmentConfiguration.mostRestrictive
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            blackHole(RestrictionSet(session: SessionID(UInt64(index)), owner: ClientID(1),
                                     configuration: configuration, policy: policy))
        }
    }

    Benchmark("Invigilator.restrictionsInForce (active session)",
              configuration: .init(scalingFactor: .kilo)) { benchmark in
        let invigilator = activeInvigilator()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(invigilator.restrictionsInForce)
        }
    }

    // The per-frame hidden-window invariant (Output.handleFrame in debug
    // builds): the exam's two windows plus 0, 50 or 100 hidden foreign ones.
    for foreign in [0, 50, 100] {
        Benchmark("SceneAudit.violations (session, 2 exam + \(foreign) hidden windows)",
                  configuration: .init(scalingFactor: .kilo)) { benchmark in
            let restrictions = activeInvigilator().restrictionsInForce
            let entries = sceneEntries(foreign: foreign)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(SceneAudit.violations(entries, under: restrictions))
            }
        }
    }

    // The audit log (issue 7): the cost of one record in full (JSON and
    // SHA-256, before the write), and of one attempt a flood has made a count.
    Benchmark("AuditChain.append (one blocked-attempt record: JSON + SHA-256)",
              configuration: .init(scalingFactor: .kilo)) { benchmark in
        var chain = AuditChain(resumingAfter: nil)
        let record = AuditRecord(time: "2026-11-23T10:47:29.594Z", run: "8b3526b91a749fcf", event: "blocked",
                                 session: 1, role: "untrusted", pid: 4301, kind: "clipboard",
                                 detail: "set_selection during a session, from outside it; refused")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(chain.append(record))
        }
    }

    Benchmark("AuditThrottle.admit (an attempt past the burst: counted)",
              configuration: .init(scalingFactor: .kilo)) { benchmark in
        var throttle = AuditThrottle()
        let key = AuditThrottle.Key(client: ClientID(7), kind: "clipboard")
        let now = Instant(nanoseconds: 1_000_000_000)
        for _ in 0..<10 { _ = throttle.admit(key, now: now) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(throttle.admit(key, now: now))
        }
    }
}
