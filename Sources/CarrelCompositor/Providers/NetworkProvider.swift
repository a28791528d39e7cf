import CarrelCore
import CarrelShim
import Glibc

/// `network`: while a session holds, only sockets of the session owner's
/// cgroup reach the network (see `NetworkRuleset` for the rules, and
/// `NetworkExemption` for whose cgroup that is). Applying loads Carrel's own
/// nftables table in one transaction; reverting deletes it and moves an
/// adopted owner process back where it was.
/// A provider whose verify first reads something slow (a program's or a
/// peer's answer): read ahead without waiting, then judged by `verify`.
protocol VerifiedAhead: AnyObject {
    var name: String { get }
    /// Starts the reading; `ready` runs on the loop once it is in.
    func prepareVerify(_ ready: @escaping () -> Void)
    /// Drops a reading under way (its `ready` never runs).
    func cancelVerify()
}

/// A provider whose apply (or update) waits for something slow (an nft
/// load, the helper's answer): started ahead without waiting, then taken
/// by `apply`/`update`, which the coordinator runs once every prepared
/// result is in. Its revert starts without waiting too, in order with the
/// next apply's work.
protocol AppliedAhead: AnyObject {
    var name: String { get }
    /// Starts putting itself up for `set` (or fitting it, when up); `ready`
    /// runs on the loop once the result is in, never before this returns.
    func prepareApply(_ set: RestrictionSet, _ ready: @escaping () -> Void)
    /// The apply that was to take the prepared result did not (an earlier
    /// step of the coordinator failed): what it put up comes down.
    func discardPrepared()
    /// Carrel is stopping: what is under way is dropped, and from now on
    /// a revert waits (nothing would be left to hear its answer).
    func stopAhead()
}

final class NetworkProvider: RestrictionProvider, VerifiedAhead, AppliedAhead {
    let name = ProvidersPolicy.network
    private let cgroup: SessionCgroup?
    /// Why there is no cgroup (said when applying: fail closed).
    private let cgroupProblem: String?
    private let tableName: String
    private let table: NetworkTable
    /// Where answers come from (nil: nothing is done ahead; everything waits).
    private let loop: OpaquePointer?
    /// The pid of a session owner's connection (nil: unknown).
    var ownerProcess: (ClientID) -> pid_t? = { _ in nil }
    /// The cgroups the loaded ruleset lets through (what verify looks for).
    private var allowed: [String] = []
    /// The owner's cgroup while the ruleset is loaded (let through unless
    /// the configuration denies the owner's network); nil when not applied.
    private var ownerCgroup: String?
    /// The owner process moved into the owner cgroup, and where it came from.
    private var adopted: (pid: pid_t, original: String)?

    /// `table`: nil for `nft` run in process on `tableName` (from `loop`,
    /// when given, for the checks that must not wait).
    init(cgroup: SessionCgroup?, cgroupProblem: String?, tableName: String = NetworkRuleset.defaultTableName,
         table: NetworkTable? = nil, loop: OpaquePointer? = nil) {
        self.cgroup = cgroup
        self.cgroupProblem = cgroupProblem
        self.tableName = tableName
        self.loop = loop
        self.table = table ?? InProcessNetworkTable(tableName: tableName, loop: loop)
    }

    /// The participants of a set that keep the network (`ParticipantNetwork`).
    var participantsWithNetwork: (RestrictionSet) -> [String] = { _ in [] }
    /// The policy's `network_exempt_units`: the seat's own services that keep the network.
    var exemptUnits: [String] = []
    /// The infrastructure cgroups let through and their ids when loaded: a
    /// unit that starts, stops or restarts (a new cgroup, a new id, which is
    /// what nftables matches) is seen at the next verify and the ruleset is
    /// loaded again.
    private var infrastructure: [SessionCgroup.Entry] = []

    /// The table, then the cgroups to remove after a crash (the app's, the owner's).
    var recoveryToken: String { "\(tableName) \(cgroup?.relativePath ?? "") \(SessionCgroup.ownerName)" }

    /// What `prepareApply` came to, for the `apply` or `update` of its set.
    private enum Prepared {
        /// Loaded, letting `allowed` through, the owner's cgroup `owner`.
        case loaded(session: SessionID, allowed: [String], owner: String)
        /// Up already and nothing to change.
        case unchanged(session: SessionID)
        case failed(session: SessionID, ProviderError)
    }
    private var prepared: Prepared?
    /// A load started ahead has not answered yet: a listing now may show either ruleset.
    private var loading = false
    /// Counts preparations and drops: a load's answer counts only if nothing came after it.
    private var preparing = 0
    /// A revert's delete is started without waiting (false once Carrel is stopping).
    private var revertsAhead = true
    /// The delete of a loaded table, started without waiting, is out: the
    /// provider stays on record until `revertSettled` says how it ended.
    private(set) var revertInFlight = false
    /// That delete ended: nil when the table is gone, or why it may not be.
    var revertSettled: (ProviderError?) -> Void = { _ in }

    /// Starts what `apply` (not up yet) or `update` (up) will take: the
    /// owner's exemption is made now (quick: cgroup files), the ruleset is
    /// loaded by an nft the loop does not wait for (or the helper's answer),
    /// bounded (5 s; the helper's 12 s): reaching the bound is a failure,
    /// and the begin fails or the update does.
    func prepareApply(_ set: RestrictionSet, _ ready: @escaping () -> Void) {
        preparing += 1
        let round = preparing
        prepared = nil
        // A reload for the seat's services still out is dropped: this load
        // comes after it, and the next verify sees what it left to do.
        reloading = false
        let session = set.session
        let finish: (Prepared) -> Void = { [weak self] result in
            guard let self, preparing == round else { return }
            prepared = result
            ready()
        }
        let wanted: [String]
        let owner: String
        if let ownerCgroup {
            lastSet = set
            wanted = cgroups(of: set, owner: ownerCgroup)
            owner = ownerCgroup
            guard wanted != allowed else { return later(finish, .unchanged(session: session)) }
        } else {
            do {
                owner = try exemption(for: set)
            } catch {
                return later(finish, .failed(session: session, error))
            }
            wanted = cgroups(of: set, owner: owner)
        }
        let fresh = ownerCgroup == nil
        let what = fresh ? "load the ruleset" : "load the ruleset for the updated participants"
        // A reading taken around a load may be of either ruleset: not judged.
        checks += 1
        tableReading = .stale
        loading = true
        table.loadAhead(wanted, session: session, doing: what) { [weak self] problem in
            guard let self, preparing == round else { return }
            loading = false
            if let problem {
                if fresh { releaseOwner() }
                finish(.failed(session: session, problem))
            } else {
                finish(.loaded(session: session, allowed: wanted, owner: owner))
            }
        }
    }

    /// `ready` with `result`, from the loop (never before `prepareApply` returns).
    private func later(_ finish: @escaping (Prepared) -> Void, _ result: Prepared) {
        if let loop, let call = LaterCall(loop: loop, { finish(result) }) { call.arm() } else { finish(result) }
    }

    func discardPrepared() {
        guard case .loaded? = prepared, ownerCgroup == nil else { prepared = nil; return }
        prepared = nil
        try? revert(loaded: true)
    }

    func stopAhead() {
        preparing += 1
        prepared = nil
        loading = false
        reloading = false
        revertsAhead = false
        guard table.dropAhead() else { return }
        // A load or delete was cut short: the table may be in any state.
        let problem: ProviderError?
        do { try table.delete(); problem = nil } catch { problem = error }
        if revertInFlight {
            revertInFlight = false
            revertSettled(problem)
        }
    }

    /// The prepared result for `session`'s set, taken (nil: none; applied in place, waiting).
    private func takePrepared(_ session: SessionID) -> Prepared? {
        defer { prepared = nil }
        switch prepared {
        case .loaded(let s, _, _)?, .unchanged(let s)?, .failed(let s, _)?: return s == session ? prepared : nil
        case nil: return nil
        }
    }

    /// Whose cgroup the ruleset lets through for `set` (an adopted owner
    /// process is moved into the owner cgroup); the infrastructure read.
    private func exemption(for set: RestrictionSet) throws(ProviderError) -> String {
        guard let cgroup else {
            throw ProviderError("the app has no cgroup of its own: \(cgroupProblem ?? "unknown reason")")
        }
        if let problem = SessionCgroup.rootProblem() { throw ProviderError(problem) }
        let exempt: SessionCgroup
        switch try NetworkExemption.of(set, ownerProcess: ownerProcess(set.owner)) {
        case .launchedApp:
            exempt = cgroup
        case .ownerProcess(let pid):
            exempt = try SessionCgroup.create(named: SessionCgroup.ownerName)
            adopted = (pid, try exempt.adopt(pid))
        }
        infrastructure = SessionCgroup.infrastructure(exemptUnits)
        return exempt.relativePath
    }

    func apply(_ set: RestrictionSet) throws(ProviderError) {
        switch takePrepared(set.session) {
        case .loaded(_, let wanted, let owner)?:
            allowed = wanted
            ownerCgroup = owner
            lastSet = set
            return
        case .failed(_, let problem)?:
            throw problem
        case .unchanged?, nil:
            break
        }
        // Not prepared (no loop): put up here, waiting for nft.
        let exempt = try exemption(for: set)
        do {
            try load(cgroups(of: set, owner: exempt), session: set.session, doing: "load the ruleset")
        } catch {
            releaseOwner()
            throw error
        }
        ownerCgroup = exempt
        lastSet = set
    }

    /// The set the loaded ruleset was made for (what a reload keeps).
    private var lastSet: RestrictionSet?

    /// Loads the ruleset letting `wanted` through, in one nft transaction
    /// (a refused one leaves the previous ruleset as it was).
    private func load(_ wanted: [String], session: SessionID, doing what: String) throws(ProviderError) {
        // A reading taken around a load may be of either ruleset: not judged.
        checks += 1
        tableReading = .stale
        try table.load(wanted, session: session, doing: what)
        allowed = wanted
    }

    /// What the table check ahead of a verify found (`prepareVerify`); taken by `verify`.
    private enum TableReading {
        case asLoaded
        case wrong(ProviderError)
        /// Taken while the ruleset was loaded again, or dropped: judged at the next verify.
        case stale
    }
    private var tableReading: TableReading?
    /// Counts checks begun, loads and drops: a check's answer counts only if
    /// nothing came after it.
    private var checks = 0

    /// Reads the table without waiting (the slow part of a verify: an nft
    /// run, or the helper's, bounded at 5 and 12 s); `ready` runs on the
    /// event loop once the reading is in, for `verify` to judge, so the loop
    /// that draws the exam and reads its keys never waits for it.
    func prepareVerify(_ ready: @escaping () -> Void) {
        checks += 1
        let check = checks
        tableReading = nil
        guard let ownerCgroup else { ready(); return }  // verify fails on its own
        guard !loading, !reloading else {
            // An update's load is out: judged at the next verify.
            tableReading = .stale
            ready()
            return
        }
        let now = SessionCgroup.infrastructure(exemptUnits)
        if now != infrastructure, let set = lastSet {
            return reloadAhead(now, set: set, owner: ownerCgroup, check: check, ready)
        }
        table.check(allowed) { [weak self] problem in
            guard let self, checks == check else { return }
            tableReading = problem.map { .wrong($0) } ?? .asLoaded
            ready()
        }
    }

    /// A reload for the seat's restarted services is out (`reloadAhead`).
    private var reloading = false

    /// The seat's services changed (a unit started, stopped or restarted):
    /// the ruleset is loaded again, in one transaction, by an nft the loop
    /// does not wait for (or the helper's answer), bounded like any load (5
    /// s; the helper's 12 s). Its answer is this verify's reading: loaded,
    /// the table is as wanted; refused or past its bound, the previous
    /// ruleset stays (or the table is in doubt) and the verify fails, so
    /// the session is interrupted.
    private func reloadAhead(_ now: [SessionCgroup.Entry], set: RestrictionSet, owner: String, check: Int,
                             _ ready: @escaping () -> Void) {
        let wanted = cgroups(of: set, owner: owner, infrastructure: now)
        let round = preparing
        reloading = true
        table.loadAhead(wanted, session: set.session, doing: "let the seat's restarted services through") { [weak self] problem in
            guard let self, preparing == round else { return }  // reverted or applied again since
            reloading = false
            if let problem {
                tableReading = checks == check ? .wrong(problem) : nil
            } else {
                infrastructure = now
                allowed = wanted
                tableReading = checks == check ? .asLoaded : nil
            }
            if checks == check { ready() }
        }
    }

    /// Drops a check in flight (the session's restrictions are coming down,
    /// or are applied again).
    func cancelVerify() {
        checks += 1
        tableReading = nil
        table.cancelCheck()
    }

    /// The cgroups `set` lets through: the owner's unless its network is
    /// denied, then the participants' that keep theirs.
    private func cgroups(of set: RestrictionSet, owner: String,
                         infrastructure: [SessionCgroup.Entry]? = nil) -> [String] {
        (NetworkExemption.keepsNetwork(set) ? [owner] : []) + participantCgroups(set)
            + (infrastructure ?? self.infrastructure).map(\.path)
    }

    /// An update changed the participants (or the owner's network): the ruleset is loaded again, in
    /// one transaction, so one that keeps the network and was added by the
    /// update is let through exactly as one named at begin (its cgroup was
    /// made when it was launched, before this runs). If nft refuses, the
    /// previous ruleset stays loaded and the update fails.
    func update(_ set: RestrictionSet) throws(ProviderError) {
        guard let ownerCgroup else { return }  // not applied: nothing to fit
        switch takePrepared(set.session) {
        case .loaded(_, let wanted, _)?:
            allowed = wanted
            lastSet = set
            return
        case .unchanged?:
            lastSet = set
            return
        case .failed(_, let problem)?:
            throw problem
        case nil:
            break
        }
        lastSet = set
        let wanted = cgroups(of: set, owner: ownerCgroup)
        guard wanted != allowed else { return }
        try load(wanted, session: set.session, doing: "load the ruleset for the updated participants")
    }

    /// The cgroups of the set's participants that keep the network (they
    /// were launched into them before the providers were applied).
    private func participantCgroups(_ set: RestrictionSet) -> [String] {
        participantsWithNetwork(set).map(SessionCgroup.participantName)
    }

    func verify() throws(ProviderError) {
        guard let ownerCgroup else { throw ProviderError("the nftables table inet \(tableName) was changed") }
        let reading = tableReading
        tableReading = nil
        switch reading {
        case .asLoaded?, .stale?: return  // read ahead: a reload for the seat's services was made then
        case .wrong(let problem)?: throw problem
        case nil: try table.verify(allowed)  // not read ahead: read now
        }
        // Not read ahead (no loop): reloaded here, waiting for nft.
        let now = SessionCgroup.infrastructure(exemptUnits)
        if now != infrastructure, let set = lastSet {
            // Loaded again in one transaction; if nft refuses, the previous
            // ruleset stays and this verify fails (the session is interrupted).
            let previous = infrastructure
            infrastructure = now
            do {
                try load(cgroups(of: set, owner: ownerCgroup), session: set.session, doing: "let the seat's restarted services through")
            } catch {
                infrastructure = previous
                throw error
            }
        }
    }

    /// Deletes the table: without waiting while Carrel runs (the loop goes
    /// on; the next load is made after it; the provider stays on record
    /// until it settles, and after if it fails), waiting once it stops.
    func revert() throws(ProviderError) {
        try revert(loaded: ownerCgroup != nil)
    }

    /// `loaded`: a ruleset is (or may be) up, so a delete that fails later
    /// leaves it up and goes back on record; after a load that failed there
    /// is nothing to go back on record (as a failed revert is then ignored).
    private func revert(loaded: Bool) throws(ProviderError) {
        preparing += 1
        prepared = nil
        loading = false
        reloading = false
        if revertsAhead, loop != nil {
            revertInFlight = loaded
            table.deleteAhead { [weak self] problem in
                guard let self, loaded else { return }
                revertInFlight = false
                revertSettled(problem)
            }
        } else {
            try table.delete()
        }
        allowed = []
        ownerCgroup = nil
        lastSet = nil
        infrastructure = []
        releaseOwner()
    }

    /// Moves an adopted owner process back to its own cgroup (if it still
    /// runs) and removes the owner cgroup once empty.
    private func releaseOwner() {
        guard let adopted else { return }
        self.adopted = nil
        SessionCgroup.release(adopted.pid, to: adopted.original)
        _ = SessionCgroup.remove(relativePath: SessionCgroup.ownerName)
    }

    /// Undoes what a crashed run left, from its recovery token.
    /// `tableDeleted`: the privileged helper deletes the table itself (Carrel
    /// cannot), so only the cgroups are left to remove here.
    static func recover(token: String, tableDeleted: Bool = false) throws(ProviderError) {
        let parts = token.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let table = parts.first.flatMap { $0.isEmpty ? nil : $0 } ?? NetworkRuleset.defaultTableName
        if !tableDeleted { try InProcessNetworkTable.deleteTable(table) }
        // Processes of the crashed run may still be in its cgroups, which then
        // stay; the table is gone, so they have no special access any more.
        for path in parts.dropFirst() where !path.isEmpty {
            _ = SessionCgroup.remove(relativePath: path)
        }
    }
}
