import CarrelCore
import Testing

/// A provider that records what it was asked, into a journal shared with
/// the other test providers and the store, and fails when told to.
final class TestProvider: RestrictionProvider {
    let name: String
    let journal: Journal
    var failApply: String?
    var failVerify: String?
    var failRevert: String?
    var failUpdate: String?
    /// Its revert answers later (as the network table's delete).
    var inFlight = false
    var revertInFlight: Bool { inFlight }
    var recoveryToken: String { "token-\(name)" }

    init(_ name: String, journal: Journal) {
        self.name = name
        self.journal = journal
    }

    func apply(_ set: RestrictionSet) throws(ProviderError) {
        journal.lines.append("apply \(name)")
        if let failApply { throw ProviderError(failApply) }
    }

    func verify() throws(ProviderError) {
        journal.lines.append("verify \(name)")
        if let failVerify { throw ProviderError(failVerify) }
    }

    func revert() throws(ProviderError) {
        journal.lines.append("revert \(name)")
        if let failRevert { throw ProviderError(failRevert) }
    }

    func update(_ set: RestrictionSet) throws(ProviderError) {
        journal.lines.append("update \(name) \(set.participants.joined(separator: ","))")
        if let failUpdate { throw ProviderError(failUpdate) }
    }
}

final class Journal { var lines: [String] = [] }

/// The state file as an array: what was recorded, in order.
final class TestStore: ProviderStateStore {
    let journal: Journal
    var current: ProviderState?
    var failRecord = false
    init(journal: Journal) { self.journal = journal }
    func record(_ state: ProviderState) throws(ProviderError) {
        if failRecord { throw ProviderError("disk full") }
        current = state
        journal.lines.append("record \(state.entries.map(\.name).joined(separator: ","))")
    }
    func clear() throws(ProviderError) {
        current = nil
        journal.lines.append("clear")
    }
}

@Suite("Restriction providers")
struct ProviderTests {
    let set = RestrictionSet(session: SessionID(1), owner: ClientID(1), configuration: .mostRestrictive, policy: SessionPolicy())

    func make(_ names: [String]) -> (ProviderCoordinator, [TestProvider], TestStore, Journal) {
        let journal = Journal()
        let providers = names.map { TestProvider($0, journal: journal) }
        let store = TestStore(journal: journal)
        return (ProviderCoordinator(providers: providers, store: store), providers, store, journal)
    }

    @Test("all apply in order, each recorded before it is applied")
    func applyInOrder() {
        let (coordinator, _, store, journal) = make(["network", "media"])
        #expect(coordinator.apply(set) == .applied)
        #expect(journal.lines == ["record network", "apply network", "record network,media", "apply media"])
        #expect(store.current?.entries.map(\.token) == ["token-network", "token-media"])
        #expect(coordinator.appliedNames == ["network", "media"])
        #expect(coordinator.needsVerification)
    }

    @Test("a failing second provider: the first is reverted (reverse order), the failure names the provider")
    func rollbackOnSecondFailure() {
        let (coordinator, providers, store, journal) = make(["a", "b", "c"])
        providers[2].failApply = "no session bus"
        let result = coordinator.apply(set)
        #expect(result == .failed(provider: "c", message: "no session bus", rolledBack: ["b", "a"], rollbackFailures: []))
        #expect(result.clientMessage == "restriction provider c could not be applied: no session bus")
        #expect(journal.lines == ["record a", "apply a", "record a,b", "apply b", "record a,b,c", "apply c",
                                  "revert c", "revert b", "revert a", "clear"])
        #expect(store.current == nil)
        #expect(coordinator.applied.isEmpty)
        #expect(!coordinator.needsVerification)
    }

    @Test("a state file that cannot be written fails closed before the provider is applied")
    func recordFailureFailsClosed() {
        let (coordinator, _, store, journal) = make(["network"])
        store.failRecord = true
        let result = coordinator.apply(set)
        guard case .failed(let provider, let message, _, _) = result else {
            Issue.record("applied without a record: \(result)")
            return
        }
        #expect(provider == "network")
        #expect(message.contains("disk full"))
        #expect(!journal.lines.contains("apply network"))
    }

    @Test("before providers put themselves up ahead, every one that could then hold is on record")
    func recordAhead() throws {
        let (coordinator, providers, store, journal) = make(["network", "media"])
        try coordinator.recordAhead()
        #expect(journal.lines == ["record network,media"])
        #expect(store.current?.entries.map(\.token) == ["token-network", "token-media"])
        // The prepared load failed: apply hears it, rolls back, the record goes.
        providers[0].failApply = "nft did not finish within 5.0 s"
        guard case .failed(let name, _, _, _) = coordinator.apply(set) else { Issue.record("applied"); return }
        #expect(name == "network")
        #expect(store.current == nil)
        // While they hold (an update) nothing is recorded ahead.
        providers[0].failApply = nil
        #expect(coordinator.apply(set) == .applied)
        journal.lines.removeAll()
        try coordinator.recordAhead()
        #expect(journal.lines.isEmpty)
        store.failRecord = true
        coordinator.revertAll()
        #expect(throws: ProviderError.self) { try coordinator.recordAhead() }
    }

    @Test("a revert still under way keeps its provider on record until it settles; failed, it stays")
    func revertInFlight() throws {
        let (coordinator, providers, store, _) = make(["network", "media"])
        #expect(coordinator.apply(set) == .applied)
        providers[0].inFlight = true
        #expect(coordinator.revertAll().isEmpty)
        #expect(store.current?.entries == [ProviderState.Entry(name: "network", token: "token-network")],
                "the table's delete is out: a crash now must still revert it")
        #expect(coordinator.revertSettled(providers[0], failure: nil).isEmpty)
        #expect(store.current == nil, "deleted: nothing is left on record")
        // A failed delete stays on record; the next apply keeps it there once, its revert takes it off.
        #expect(coordinator.apply(set) == .applied)
        #expect(coordinator.revertAll().isEmpty)
        let failures = coordinator.revertSettled(providers[0], failure: "nft did not finish within 5.0 s")
        #expect(failures == ["restriction provider network could not be reverted: nft did not finish within 5.0 s"])
        #expect(store.current?.entries.map(\.name) == ["network"])
        providers[0].inFlight = false
        #expect(coordinator.apply(set) == .applied)
        #expect(store.current?.entries.map(\.name) == ["network", "media"])
        #expect(coordinator.revertAll().isEmpty)
        #expect(store.current == nil)
    }

    @Test("a delete that settles while the next apply's load is out keeps every provider on record")
    func settledDuringApplyAhead() throws {
        let (coordinator, providers, store, _) = make(["network", "media"])
        #expect(coordinator.apply(set) == .applied)
        providers[0].inFlight = true
        coordinator.revertAll()
        try coordinator.recordAhead()
        #expect(coordinator.revertSettled(providers[0], failure: nil).isEmpty)
        #expect(store.current?.entries.map(\.name) == ["network", "media"], "the next load may be up at any moment")
    }

    @Test("a failed verify names the provider, stops verification and keeps the providers applied")
    func verifyFailure() {
        let (coordinator, providers, _, journal) = make(["network", "media"])
        #expect(coordinator.apply(set) == .applied)
        #expect(coordinator.verify() == nil)
        providers[1].failVerify = "player unreachable"
        let failure = coordinator.verify()
        #expect(failure == ProviderVerifyFailure(provider: "media", message: "player unreachable"))
        #expect(failure?.clientMessage == "restriction provider media stopped holding: player unreachable")
        #expect(!coordinator.needsVerification)
        #expect(coordinator.verify() == nil, "reported once")
        #expect(coordinator.appliedNames == ["network", "media"], "restrictions stay until the session ends")
        #expect(!journal.lines.contains { $0.hasPrefix("revert") })
    }

    @Test("a verify failure during an active session interrupts it with integrity; the restrictions stay")
    func verifyFailureInterrupts() {
        var compositor = CompositorDouble()
        let (id, app, now) = (SessionID(1), ClientID(1), Instant.seconds(10))
        compositor.run { $0.begin(id, client: app, role: .app, surface: .mappedToplevel, configuration: nil, now: now) }
        compositor.run { $0.framePresented(id, now: now) }
        let (coordinator, providers, _, _) = make(["network"])
        #expect(coordinator.apply(set) == .applied)
        providers[0].failVerify = "the nftables table inet carrel is gone"
        let failure = coordinator.verify()!
        let effects = compositor.run { $0.integrityLost(failure.clientMessage) }
        #expect(effects.events(on: id) == [.interrupted(.integrity, message: "restriction provider network stopped holding: the nftables table inet carrel is gone")])
        #expect(compositor.invigilator.restrictionsInForce != nil)
        #expect(!effects.contains(.revertRestrictions(id)))
    }

    @Test("revert goes in reverse order and clears the record; a failed revert stays on record")
    func revertOrder() {
        let (coordinator, providers, store, journal) = make(["network", "media"])
        #expect(coordinator.apply(set) == .applied)
        journal.lines.removeAll()
        providers[0].failRevert = "nft: Operation not permitted"
        let failures = coordinator.revertAll()
        #expect(journal.lines == ["revert media", "revert network", "record network"])
        #expect(failures == ["restriction provider network could not be reverted: nft: Operation not permitted"])
        #expect(store.current?.entries == [ProviderState.Entry(name: "network", token: "token-network")])
        // Next time it works: the record goes.
        providers[0].failRevert = nil
        #expect(coordinator.apply(set) == .applied)
        #expect(coordinator.revertAll().isEmpty)
        #expect(store.current == nil)
    }

    @Test("applying again while they hold (an update) applies nothing again; each provider is updated to the new set")
    func applyTwice() {
        let (coordinator, _, _, journal) = make(["network", "media"])
        #expect(coordinator.apply(set) == .applied)
        var policy = SessionPolicy()
        policy.knownParticipants = ["calculator"]
        let updated = RestrictionSet(session: SessionID(1), owner: ClientID(1),
                                     configuration: AssessmentConfiguration(participants: ["calculator"]), policy: policy)
        #expect(coordinator.apply(updated) == .applied)
        #expect(journal.lines.filter { $0.hasPrefix("apply") } == ["apply network", "apply media"])
        #expect(journal.lines.filter { $0.hasPrefix("update") } == ["update network calculator", "update media calculator"])
    }

    @Test("an update a provider refuses fails without reverting anything: what held still holds")
    func updateFails() {
        let (coordinator, providers, store, journal) = make(["network", "media"])
        #expect(coordinator.apply(set) == .applied)
        let recorded = store.current
        providers[0].failUpdate = "nft refused"
        #expect(coordinator.apply(set) == .failed(provider: "network", message: "nft refused", rolledBack: [], rollbackFailures: []))
        #expect(coordinator.appliedNames == ["network", "media"])
        #expect(!journal.lines.contains { $0.hasPrefix("revert") })
        #expect(store.current == recorded)
        #expect(!journal.lines.contains("update media "), "the providers after the one that failed are not asked")
    }

    @Test("crash recovery: what the state file records is reverted in reverse order")
    func recoveryPlan() {
        #expect(ProviderRecoveryPlan.plan(recorded: nil) == .nothing)
        #expect(ProviderRecoveryPlan.plan(recorded: "carrel-providers 1\n") == .nothing)
        let state = ProviderState(entries: [.init(name: "network", token: "carrel carrel-42"), .init(name: "media", token: "")])
        #expect(ProviderState(decoding: state.encoded) == state)
        #expect(ProviderRecoveryPlan.plan(recorded: state.encoded)
                == .revert([.init(name: "media", token: ""), .init(name: "network", token: "carrel carrel-42")]))
        // Garbled (a torn write cannot happen with rename, but a hand edit can): revert everything.
        guard case .revertAllKnown = ProviderRecoveryPlan.plan(recorded: "network\n") else {
            Issue.record("a file without the header must not be trusted")
            return
        }
    }

    @Test("the network ruleset lets only the session's cgroups through, in both directions")
    func networkRuleset() throws {
        let text = try NetworkRuleset(allowedCgroups: ["carrel-42"]).text()
        #expect(text.hasPrefix("table inet carrel\ndelete table inet carrel\ntable inet carrel {\n"))
        for hook in ["output", "input"] {
            #expect(text.contains("type filter hook \(hook) priority filter; policy accept;"))
        }
        #expect(text.components(separatedBy: "socket cgroupv2 level 1 \"carrel-42\" ct mark set 0x63617272 accept").count == 3)
        #expect(text.components(separatedBy: "ct mark 0x63617272 accept").count == 3)
        #expect(text.components(separatedBy: "counter drop").count == 3)
        // The session rule comes before the drop.
        let session = text.range(of: "socket cgroupv2")!.lowerBound
        let drop = text.range(of: "counter drop")!.lowerBound
        #expect(session < drop)
        #expect(NetworkRuleset.level(of: "carrel.slice/carrel-42") == 2)
        #expect(try NetworkRuleset(allowedCgroups: ["a/b"]).text().contains("level 2 \"a/b\""))
    }

    @Test("the network ruleset refuses paths and names that could inject rules")
    func networkRulesetRejectsInjection() {
        #expect(throws: NetworkRuleset.Problem.badCgroup("x\" accept")) { try NetworkRuleset(allowedCgroups: ["x\" accept"]).text() }
        #expect(throws: NetworkRuleset.Problem.badCgroup("../etc")) { try NetworkRuleset(allowedCgroups: ["../etc"]).text() }
        #expect(throws: NetworkRuleset.Problem.badCgroup("/abs")) { try NetworkRuleset(allowedCgroups: ["/abs"]).text() }
        #expect(throws: NetworkRuleset.Problem.badTableName("a b")) { try NetworkRuleset(tableName: "a b", allowedCgroups: ["x"]).text() }
    }

    @Test("providers are off by default; enable knows only real names")
    func policyDefaults() {
        var policy = Policy.builtIn.providers
        #expect(policy.enabledNames.isEmpty)
        let media = policy.enable("media")
        let network = policy.enable("network")
        let bluetooth = policy.enable("bluetooth")
        #expect(media && network && !bluetooth)
        #expect(policy.enabledNames == ["network", "media"])
        #expect(ProvidersPolicy(verifyInterval: .milliseconds(250)).verifyIntervalMilliseconds == 250)
    }
}

@Suite("Whose network the network provider keeps")
struct NetworkExemptionTests {
    func set(ownerRole: Role) -> RestrictionSet {
        RestrictionSet(session: SessionID(3), owner: ClientID(7), ownerRole: ownerRole,
                       configuration: .mostRestrictive, policy: SessionPolicy())
    }

    @Test("the launched app's session keeps the app's cgroup, whatever pid the owner has")
    func launchedApp() throws {
        #expect(try NetworkExemption.of(set(ownerRole: .app), ownerProcess: 4711) == .launchedApp)
        #expect(try NetworkExemption.of(set(ownerRole: .app), ownerProcess: nil) == .launchedApp)
    }

    @Test("an app-requested lock by another client keeps only that client's process, not the launched app")
    func appLockOwner() throws {
        #expect(try NetworkExemption.of(set(ownerRole: .untrusted), ownerProcess: 4711) == .ownerProcess(pid: 4711))
        #expect(try NetworkExemption.of(set(ownerRole: .participant), ownerProcess: 99) == .ownerProcess(pid: 99))
    }

    @Test("an owner other than the app whose process is unknown fails closed, saying why",
          arguments: [nil, 0, -1] as [Int32?])
    func unknownOwnerProcess(pid: Int32?) {
        #expect {
            try NetworkExemption.of(set(ownerRole: .untrusted), ownerProcess: pid)
        } throws: { error in
            let message = (error as? ProviderError)?.message ?? ""
            return message.contains("untrusted client that owns session 3 is unknown")
        }
    }
}
