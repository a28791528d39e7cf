import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// The state file, written durably (temp file, fsync, rename) before each
/// provider is applied and removed once all are reverted.
final class ProviderStateFile: ProviderStateStore {
    let directory: String
    var path: String { directory + "/providers.state" }

    init(directory: String) { self.directory = directory }

    func record(_ state: ProviderState) throws(ProviderError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw ProviderError("cannot create \(directory): \(SystemError.current)")
        }
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ProviderError("cannot write \(temporary): \(SystemError.current)") }
        let text = state.encoded
        let written = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == text.utf8.count, synced, rename(temporary, path) == 0 else {
            throw ProviderError("cannot write \(path): \(SystemError.current)")
        }
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
    }

    func clear() throws(ProviderError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ProviderError("cannot remove \(path): \(SystemError.current)")
        }
    }

    /// The file's text (its first 64 KiB: a record is a few lines); nil
    /// when there is none.
    func read() -> String? {
        BoundedFile.text(path, limit: Self.readLimit)
    }

    private static let readLimit = 65536
}

/// Everything about restriction providers the compositor does: recovery at
/// start, the app's cgroup, applying and reverting with the restriction set,
/// and the verify timer. Decisions are `ProviderCoordinator`'s (Core).
final class ProviderHost {
    let coordinator: ProviderCoordinator
    private let policy: ProvidersPolicy
    private let stateFile: ProviderStateFile
    private let cgroup: SessionCgroup?
    /// Why the app has no session cgroup, when it has none.
    let cgroupProblem: String?
    private let loop: OpaquePointer
    private let logger: Logger
    private var timer: EventLoopTimer?
    private let network: NetworkProvider?
    /// The providers whose verify reads ahead (network, media), in order.
    private var readAhead: [VerifiedAhead] = []
    /// The providers whose apply is started ahead (network), in order.
    private var applyAhead: [AppliedAhead] = []
    /// Called with the client's message when a verify fails.
    var integrityLost: (String) -> Void = { _ in }
    /// The pid of a client's connection, for the network provider to keep
    /// the network of a session owner that is not the launched app.
    var ownerProcess: (ClientID) -> pid_t? = { _ in nil } {
        didSet { network?.ownerProcess = ownerProcess }
    }

    /// `helper`: the nftables table goes through the privileged helper, and
    /// Carrel's cgroups are made inside its own (delegated) cgroup; the app's
    /// is made even without the network provider, so the app the helper
    /// starts is in Carrel's unit, not the helper's.
    init(policy: ProvidersPolicy, runtimeDirectory: String, loop: OpaquePointer, logger: Logger,
         helper: PrivilegedHelperLink? = nil) {
        self.policy = policy
        self.loop = loop
        self.logger = logger
        stateFile = ProviderStateFile(directory: policy.stateDirectory ?? runtimeDirectory + "/carrel")
        var delegationProblem: String?
        if helper != nil {
            if let own = SessionCgroup.own() {
                delegationProblem = SessionCgroup.delegate(to: own)
            } else {
                delegationProblem = "Carrel's own cgroup is unreadable (/proc/self/cgroup: \(SystemError.current))"
            }
        }
        Self.recover(stateFile, tableDeleted: helper != nil, logger: logger)

        var providers: [RestrictionProvider] = []
        var cgroup: SessionCgroup?
        var network: NetworkProvider?
        var problem = delegationProblem
        if problem == nil, policy.network || helper != nil {
            do {
                cgroup = try SessionCgroup.create()
            } catch {
                problem = error.message
            }
        }
        if policy.network {
            if let problem { logger.error("network provider: \(problem); sessions will fail to begin") }
            network = NetworkProvider(cgroup: cgroup, cgroupProblem: problem, table: helper.map(HelperNetworkTable.init(link:)),
                                      loop: loop)
            network!.exemptUnits = policy.networkExemptUnits
            providers.append(network!)
            applyAhead.append(network!)
        }
        if !policy.network, helper != nil, let problem {
            logger.error("the app has no cgroup in Carrel's unit (\(problem)); the privileged helper will not start it")
        }
        if policy.media {
            let address = getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }
            let media = MediaProvider(address: address, loop: loop) { [logger] in logger.notice("\($0)") }
            providers.append(media)
            readAhead.append(media)
            applyAhead.append(media)
        }
        if let network { readAhead.insert(network, at: 0) }
        self.cgroup = cgroup
        cgroupProblem = problem
        self.network = network
        coordinator = ProviderCoordinator(providers: providers, store: stateFile)
        network?.revertSettled = { [unowned self, logger] problem in
            // The table's delete, started without waiting, is over: off the
            // record, or (failed) kept there for the next start.
            guard let network = self.network else { return }
            for message in self.coordinator.revertSettled(network, failure: problem?.message) { logger.error("\(message)") }
        }
        if !providers.isEmpty {
            logger.notice("restriction providers enabled: \(policy.enabledNames.joined(separator: ", ")) (state in \(stateFile.path))")
        }
    }

    /// Reverts what a previous run left applied, as its state file says.
    private static func recover(_ stateFile: ProviderStateFile, tableDeleted: Bool, logger: Logger) {
        let entries: [ProviderState.Entry]
        switch ProviderRecoveryPlan.plan(recorded: stateFile.read()) {
        case .nothing:
            return
        case .revert(let recorded):
            entries = recorded
        case .revertAllKnown(let reason):
            logger.warning("\(stateFile.path): \(reason); reverting every provider to be safe")
            entries = ProvidersPolicy.knownNames.reversed().map { ProviderState.Entry(name: $0, token: "") }
        }
        var failed = false
        for entry in entries {
            do {
                switch entry.name {
                case ProvidersPolicy.network: try NetworkProvider.recover(token: entry.token, tableDeleted: tableDeleted)
                case ProvidersPolicy.media: break  // players stay paused; the user resumes them
                default:
                    logger.warning("\(stateFile.path) names an unknown provider \(entry.name); ignored")
                    continue
                }
                logger.notice("recovered: reverted restriction provider \(entry.name) left applied by a previous run")
            } catch {
                failed = true
                logger.error("could not revert restriction provider \(entry.name) left applied by a previous run: \(error.message)")
            }
        }
        if !failed { try? stateFile.clear() }
    }

    /// The participants of a set that keep the network (the policy's
    /// `network = true`), for the network provider's ruleset.
    var participantsWithNetwork: (RestrictionSet) -> [String] = { _ in [] } {
        didSet { network?.participantsWithNetwork = participantsWithNetwork }
    }

    /// Launches participant `id` through `body`: when the network provider
    /// is on and the participant keeps the network, inside a cgroup of its
    /// own (which the ruleset lets through); otherwise where Carrel runs,
    /// which the ruleset does not.
    func launchParticipant<T>(_ id: String, network keepsNetwork: Bool, _ body: () throws -> T) throws -> T {
        let name = SessionCgroup.participantName(id)
        guard network != nil, keepsNetwork else { return try launchInOwnCgroup(name, body) }
        let cgroup: SessionCgroup
        do {
            pendingRemovals[name] = nil
            cgroup = try SessionCgroup.create(named: name)
        } catch {
            throw CompositorError.launch("\(id) keeps the network, but: \(error.message)")
        }
        ownCgroups.insert(name)
        return try cgroup.spawnInside(body)
    }

    /// Launches a program Carrel starts itself (a participant, the input
    /// method, the keyboard) inside cgroup `name` of its own where Carrel
    /// may make one (as root, or in a delegated cgroup), so that its stop
    /// kills all it started, however fast it forks (`cgroup.kill`); where
    /// it may not, where Carrel runs (its process tree is then followed
    /// through /proc). The ruleset lets such a cgroup through only when it
    /// is a participant's that keeps the network.
    func launchInOwnCgroup<T>(_ name: String, _ body: () throws -> T) throws -> T {
        pendingRemovals[name] = nil
        guard let cgroup = try? SessionCgroup.create(named: name) else { return try body() }
        ownCgroups.insert(name)
        return try cgroup.spawnInside(body)
    }

    /// Cgroups made by `launchInOwnCgroup` this run: killed and removed when Carrel stops.
    private var ownCgroups: Set<String> = []

    /// The program in cgroup `name` was stopped and reaped: the cgroup goes
    /// once empty (retried from a timer, never waiting).
    func removeWhenEmpty(_ name: String) {
        if SessionCgroup.remove(relativePath: name) { return }
        pendingRemovals[name] = monotonicSeconds() + Self.removalBound
        armRemovals()
    }

    /// Carrel is stopping: every cgroup of a program it started itself is
    /// killed and removed (its processes take a moment to go: up to 0.5 s).
    func removeOwnCgroups() {
        let names = ownCgroups.union(pendingRemovals.keys)
        for name in names { _ = SessionCgroup.kill(relativePath: name) }
        var left = names
        let deadline = monotonicSeconds() + 0.5
        repeat {
            left = left.filter { !SessionCgroup.remove(relativePath: $0) }
            if left.isEmpty { break }
            usleep(10_000)
        } while monotonicSeconds() < deadline
        for name in left { logger.warning("the cgroup \(SessionCgroup.root)/\(name) still has processes as Carrel stops; left in place") }
        ownCgroups.removeAll()
        pendingRemovals.removeAll()
    }

    /// With the privileged helper: the cgroup participant `id` is started in,
    /// made here inside Carrel's delegated cgroup whether or not it keeps the
    /// network (the ruleset lets through only those that do), so that the
    /// helper can kill all it left when Carrel goes.
    func participantCgroup(_ id: String) throws -> String {
        do {
            let name = SessionCgroup.participantName(id)
            pendingRemovals[name] = nil
            return try SessionCgroup.create(named: name).relativePath
        } catch {
            throw CompositorError.launch("participant \(id) needs a cgroup of its own to be started by the privileged helper, but: \(error.message)")
        }
    }

    /// With the privileged helper: the cgroup the input method or the
    /// keyboard is started in (made here in Carrel's delegated cgroup), so
    /// that everything it starts can be killed with it.
    func roleCgroup(_ role: PrivilegedRequest.SpawnRole) throws -> String {
        do {
            pendingRemovals[SessionCgroup.roleName(role)] = nil
            return try SessionCgroup.create(named: SessionCgroup.roleName(role)).relativePath
        } catch {
            throw CompositorError.launch("the \(role.rawValue) needs a cgroup of its own to be started by the privileged helper, but: \(error.message)")
        }
    }

    /// Participant `id` is being stopped: every process in its cgroup (the
    /// one the helper started it in, or its network cgroup) is killed at
    /// once by the kernel (cgroup.kill), whatever user it runs as and
    /// however it left its process tree. A participant without a cgroup
    /// has nothing to do here.
    func killParticipantCgroup(_ id: String) {
        if let problem = SessionCgroup.kill(relativePath: SessionCgroup.participantName(id)) {
            logger.error("could not kill what is left of participant \(id) in its cgroup (\(problem)); only its process tree was killed")
        }
    }

    /// Participant `id` was stopped and reaped: its cgroup goes. A process
    /// of it that cgroup.kill has not yet ended keeps it (rmdir says EBUSY),
    /// so a cgroup not yet empty is tried again from a timer, every 50 ms for
    /// up to 10 s, never waiting on the loop; starting the participant again
    /// takes the cgroup back from the retries.
    func participantStopped(_ id: String) {
        removeWhenEmpty(SessionCgroup.participantName(id))
    }

    /// Cgroups of stopped participants still to be removed, with the
    /// monotonic deadline after which Carrel gives up and says so.
    private var pendingRemovals: [String: Double] = [:]
    private var removalTimer: EventLoopTimer?
    private static let removalBound = 10.0

    private func armRemovals() {
        if removalTimer == nil {
            removalTimer = EventLoopTimer(loop: loop) { [unowned self] in retryRemovals() }
        }
        removalTimer?.arm(after: .milliseconds(50))
    }

    private func retryRemovals() {
        let now = monotonicSeconds()
        for (name, deadline) in pendingRemovals {
            if SessionCgroup.remove(relativePath: name) {
                pendingRemovals[name] = nil
            } else if now >= deadline {
                pendingRemovals[name] = nil
                logger.warning("the cgroup \(SessionCgroup.root)/\(name) of a stopped program still has processes \(Int(Self.removalBound)) s after it was reaped; it is left in place")
            }
        }
        if !pendingRemovals.isEmpty { armRemovals() }
    }

    /// The app's session cgroup (relative to the cgroup root), when the
    /// network provider needs one: the privileged helper starts the app in it.
    var appCgroup: String? { cgroup?.relativePath }

    /// Launches the app through `body`, inside the session cgroup when the
    /// network provider needs one.
    func launch<T>(_ body: () throws -> T) throws -> T {
        guard let cgroup else { return try body() }
        return try cgroup.spawnInside(body)
    }

    /// Counts applies and stops: a prepared result that comes back after
    /// its apply was dropped (Carrel stopping) is ignored.
    private var applyRound = 0

    /// Applies the providers; `.failed` names the provider. What is slow
    /// (the nft load, the helper's answer) is started ahead without
    /// waiting, on record first; the coordinator's all-or-nothing apply runs
    /// once every prepared result is in. Returns the outcome when it is known
    /// at once (nothing to wait for); otherwise nil, and `done` runs with
    /// it later, on the loop.
    func apply(_ set: RestrictionSet, done: @escaping (RestrictionOutcome) -> Void) -> RestrictionOutcome? {
        applyRound += 1
        let round = applyRound
        var waiting = applyAhead.count
        guard waiting > 0 else { return applyNow(set) }
        do {
            try coordinator.recordAhead()
        } catch {
            // Fail closed, as the coordinator does when its own record fails: nothing was started.
            let message = "restriction provider \(applyAhead[0].name) could not be applied: could not record its state before applying (\(error.message))"
            logger.error("\(message)")
            return .failed(message)
        }
        var answered: RestrictionOutcome?
        var returned = false
        for provider in applyAhead {
            provider.prepareApply(set) { [weak self] in
                guard let self, applyRound == round else { return }
                waiting -= 1
                guard waiting == 0 else { return }
                let outcome = applyNow(set)
                if returned { done(outcome) } else { answered = outcome }
            }
        }
        returned = true
        return answered
    }

    /// The coordinator's apply, with what was prepared ahead (taken by the providers).
    private func applyNow(_ set: RestrictionSet) -> RestrictionOutcome {
        let result = coordinator.apply(set)
        for provider in applyAhead { provider.discardPrepared() }
        if case .failed(let provider, let message, let rolledBack, let failures) = result {
            logger.error("restriction provider \(provider) failed: \(message); rolled back [\(rolledBack.joined(separator: ", "))]")
            for failure in failures { logger.error("\(failure)") }
            // A failed update leaves what held before: still verified (a
            // reading dropped by its load would otherwise never come back).
            if coordinator.needsVerification { armVerify() }
            return .failed(result.clientMessage ?? message)
        }
        if !coordinator.applied.isEmpty {
            logger.notice("restriction providers applied: \(coordinator.appliedNames.joined(separator: ", "))")
        }
        armVerify()
        return .applied
    }

    func revert() {
        disarmVerify()
        let names = coordinator.appliedNames
        for failure in coordinator.revertAll() { logger.error("\(failure)") }
        if !names.isEmpty { logger.notice("restriction providers reverted: \(names.reversed().joined(separator: ", "))") }
    }

    func shutdown() {
        applyRound += 1
        for provider in applyAhead { provider.stopAhead() }
        revert()
        removeOwnCgroups()
        if let cgroup, !cgroup.remove() {
            logger.warning("cgroup \(cgroup.path) still has processes; left in place")
        }
    }

    // MARK: - Verify timer

    /// Counts verify rounds: a reading that comes back after its round was
    /// dropped (restrictions reverted or applied again) is ignored.
    private var verifyRound = 0

    private func armVerify() {
        dropVerifyInFlight()
        guard coordinator.needsVerification else { return }
        if timer == nil {
            timer = EventLoopTimer(loop: loop) { [unowned self] in verifyNow() }
        }
        timer?.arm(after: policy.verifyInterval)
    }

    private func disarmVerify() {
        dropVerifyInFlight()
        timer?.cancel()
        timer = nil
    }

    private func dropVerifyInFlight() {
        verifyRound += 1
        for provider in readAhead { provider.cancelVerify() }
    }

    /// What the applied providers verify by is read first, without waiting
    /// (the network table's listing, the players' answers: the loop goes on
    /// drawing); the verify itself runs once every reading is in.
    private func verifyNow() {
        let round = verifyRound
        let applied = coordinator.appliedNames
        let reading = readAhead.filter { applied.contains($0.name) }
        var left = reading.count
        guard left > 0 else {
            verifyReadings()
            return
        }
        for provider in reading {
            provider.prepareVerify { [weak self] in
                guard let self, verifyRound == round else { return }
                left -= 1
                if left == 0 { verifyReadings() }
            }
        }
    }

    private func verifyReadings() {
        if let failure = coordinator.verify() {
            logger.error("\(failure.clientMessage)")
            integrityLost(failure.clientMessage)
            return
        }
        armVerify()
    }
}
