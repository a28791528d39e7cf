import CarrelCore
import CarrelShim
import Glibc

/// `network`: while a session holds, only sockets of the session owner's
/// cgroup reach the network (see `NetworkRuleset` for the rules, and
/// `NetworkExemption` for whose cgroup that is). Applying loads Carrel's own
/// nftables table in one transaction; reverting deletes it and moves an
/// adopted owner process back where it was.
final class NetworkProvider: RestrictionProvider {
    let name = ProvidersPolicy.network
    private let cgroup: SessionCgroup?
    /// Why there is no cgroup (said when applying: fail closed).
    private let cgroupProblem: String?
    private let tableName: String
    /// The pid of a session owner's connection (nil: unknown).
    var ownerProcess: (ClientID) -> pid_t? = { _ in nil }
    /// The cgroups the loaded ruleset lets through (what verify looks for).
    private var allowed: [String] = []
    /// The owner's cgroup while the ruleset is loaded (let through unless
    /// the configuration denies the owner's network); nil when not applied.
    private var ownerCgroup: String?
    /// The owner process moved into the owner cgroup, and where it came from.
    private var adopted: (pid: pid_t, original: String)?
    static let timeout = 5.0

    init(cgroup: SessionCgroup?, cgroupProblem: String?, tableName: String = NetworkRuleset.defaultTableName) {
        self.cgroup = cgroup
        self.cgroupProblem = cgroupProblem
        self.tableName = tableName
    }

    /// The participants of a set that keep the network (`ParticipantNetwork`).
    var participantsWithNetwork: (RestrictionSet) -> [String] = { _ in [] }

    /// The table, then the cgroups to remove after a crash (the app's, the owner's).
    var recoveryToken: String { "\(tableName) \(cgroup?.relativePath ?? "") \(SessionCgroup.ownerName)" }

    func apply(_ set: RestrictionSet) throws(ProviderError) {
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
        do {
            try load(cgroups(of: set, owner: exempt.relativePath), doing: "load the ruleset")
        } catch {
            releaseOwner()
            throw error
        }
        ownerCgroup = exempt.relativePath
    }

    /// Loads the ruleset letting `wanted` through, in one nft transaction
    /// (a refused one leaves the previous ruleset as it was).
    private func load(_ wanted: [String], doing what: String) throws(ProviderError) {
        let text: String
        do {
            text = try NetworkRuleset(tableName: tableName, allowedCgroups: wanted).text()
        } catch {
            throw ProviderError(error.description)
        }
        try Self.nft(["-f", "-"], input: text, doing: what)
        allowed = wanted
    }

    /// The cgroups `set` lets through: the owner's unless its network is
    /// denied, then the participants' that keep theirs.
    private func cgroups(of set: RestrictionSet, owner: String) -> [String] {
        (NetworkExemption.keepsNetwork(set) ? [owner] : []) + participantCgroups(set)
    }

    /// An update changed the participants (or the owner's network): the ruleset is loaded again, in
    /// one transaction, so one that keeps the network and was added by the
    /// update is let through exactly as one named at begin (its cgroup was
    /// made when it was launched, before this runs). If nft refuses, the
    /// previous ruleset stays loaded and the update fails.
    func update(_ set: RestrictionSet) throws(ProviderError) {
        guard let ownerCgroup else { return }  // not applied: nothing to fit
        let wanted = cgroups(of: set, owner: ownerCgroup)
        guard wanted != allowed else { return }
        try load(wanted, doing: "load the ruleset for the updated participants")
    }

    /// The cgroups of the set's participants that keep the network (they
    /// were launched into them before the providers were applied).
    private func participantCgroups(_ set: RestrictionSet) -> [String] {
        participantsWithNetwork(set).map { ParticipantNetwork.cgroupName(run: getpid(), participant: $0) }
    }

    func verify() throws(ProviderError) {
        let result: BoundedCommand.Result
        do {
            result = try BoundedCommand.run(["nft", "list", "table", "inet", tableName], timeout: Self.timeout)
        } catch {
            throw ProviderError(error.description)
        }
        guard result.succeeded else {
            throw ProviderError("the nftables table inet \(tableName) is gone (\(Self.firstLine(result.errors)))")
        }
        guard ownerCgroup != nil, allowed.allSatisfy({ result.output.contains("\"\($0)\"") }), result.output.contains("drop") else {
            throw ProviderError("the nftables table inet \(tableName) was changed")
        }
    }

    func revert() throws(ProviderError) {
        try Self.deleteTable(tableName)
        allowed = []
        ownerCgroup = nil
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
    static func recover(token: String) throws(ProviderError) {
        let parts = token.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let table = parts.first.flatMap { $0.isEmpty ? nil : $0 } ?? NetworkRuleset.defaultTableName
        try deleteTable(table)
        // Processes of the crashed run may still be in its cgroups, which then
        // stay; the table is gone, so they have no special access any more.
        for path in parts.dropFirst() where !path.isEmpty {
            _ = SessionCgroup.remove(relativePath: path)
        }
    }

    private static func deleteTable(_ table: String) throws(ProviderError) {
        let listed: BoundedCommand.Result
        do {
            listed = try BoundedCommand.run(["nft", "list", "table", "inet", table], timeout: timeout)
        } catch {
            throw ProviderError(error.description)
        }
        guard listed.succeeded else { return }  // not there: nothing to revert
        try nft(["delete", "table", "inet", table], doing: "delete the table inet \(table)")
    }

    private static func nft(_ arguments: [String], input: String = "", doing what: String) throws(ProviderError) {
        let result: BoundedCommand.Result
        do {
            result = try BoundedCommand.run(["nft"] + arguments, input: input, timeout: timeout)
        } catch {
            throw ProviderError("\(error.description) (install nftables)")
        }
        guard result.succeeded else {
            var hint = ""
            if result.errors.contains("Operation not permitted") {
                hint = "; Carrel needs root or CAP_NET_ADMIN for the network provider"
            }
            throw ProviderError("nft could not \(what): \(firstLine(result.errors))\(hint)")
        }
    }

    private static func firstLine(_ text: String) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        return line.isEmpty ? "no message" : line
    }
}
