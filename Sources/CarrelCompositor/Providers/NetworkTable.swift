import CarrelCore
import CarrelSystem
import Glibc

/// Carrel's nftables table as the network provider uses it: loaded with
/// the cgroups to let through, checked, deleted. In process (`nft`, Carrel
/// runs as root) or through the privileged helper, which builds the same
/// `NetworkRuleset` itself.
protocol NetworkTable: AnyObject {
    func load(_ allowed: [String], session: SessionID, doing what: String) throws(ProviderError)
    /// The table is there with exactly `allowed` let through and the rest dropped.
    func verify(_ allowed: [String]) throws(ProviderError)
    /// `verify` without waiting: `done` runs later, on the event loop, with
    /// nil when the table is as loaded, or what is wrong.
    func check(_ allowed: [String], done: @escaping (ProviderError?) -> Void)
    /// Drops a check still running (its `done` may still run, and is to be ignored).
    func cancelCheck()
    func delete() throws(ProviderError)
    /// `load` without waiting: `done` runs later, on the event loop, with
    /// nil once the ruleset is loaded, or why it is not (a bound reached
    /// is a failure). Runs after every load or delete started before it.
    func loadAhead(_ allowed: [String], session: SessionID, doing what: String,
                   done: @escaping (ProviderError?) -> Void)
    /// `delete` without waiting, in order with the loads: `done` runs later,
    /// on the loop, with nil once the table is gone, or why it may not be.
    func deleteAhead(done: @escaping (ProviderError?) -> Void)
    /// Carrel is stopping: drops the loads and deletes under way or waiting
    /// (their `done` never runs). True when one was dropped, so the table
    /// may be in any state and is to be deleted while waiting.
    func dropAhead() -> Bool
}

/// The table through `nft`, run by Carrel itself.
final class InProcessNetworkTable: NetworkTable {
    let tableName: String
    static let timeout = 5.0
    /// For the nft runs of `check`, `loadAhead` and `deleteAhead`; nil:
    /// they wait for nft like `verify`, `load` and `delete`.
    private let loop: OpaquePointer?
    private var checking: LoopCommand?

    init(tableName: String = NetworkRuleset.defaultTableName, loop: OpaquePointer? = nil) {
        self.tableName = tableName
        self.loop = loop
    }

    /// An nft run that changes the table (a load, a delete), started from
    /// the loop once the one before it has ended: the table's changes are
    /// made in the order asked, so a begin's load never races the previous
    /// end's delete.
    private struct Change {
        let arguments: [String]
        let input: String
        let doing: String
        let absentIsDone: Bool
        let done: (ProviderError?) -> Void
    }
    private var changes: [Change] = []
    private var changing: LoopCommand?
    /// A change runs (its nft, or its failure on the way to the loop).
    private var busy = false
    /// Counts drops: an answer from before one is ignored.
    private var generation = 0

    func loadAhead(_ allowed: [String], session: SessionID, doing what: String,
                   done: @escaping (ProviderError?) -> Void) {
        let text: String
        do {
            text = try NetworkRuleset(tableName: tableName, allowedCgroups: allowed).text()
        } catch {
            // Said from the loop like every other answer, never before this returns.
            change(Change(arguments: [], input: "", doing: error.description, absentIsDone: false, done: done))
            return
        }
        change(Change(arguments: ["-f", "-"], input: text, doing: what, absentIsDone: false, done: done))
    }

    func deleteAhead(done: @escaping (ProviderError?) -> Void) {
        change(Change(arguments: ["delete", "table", "inet", tableName], input: "",
                      doing: "delete the table inet \(tableName)", absentIsDone: true, done: done))
    }

    func dropAhead() -> Bool {
        let dropped = busy || !changes.isEmpty
        generation += 1
        busy = false
        changes.removeAll()
        changing?.cancel()
        changing = nil
        return dropped
    }

    private func change(_ change: Change) {
        changes.append(change)
        if !busy { startNextChange() }
    }

    private func startNextChange() {
        guard !changes.isEmpty else { return }
        let next = changes.removeFirst()
        guard let loop else {
            // No loop to be answered from: waited for, as before.
            do throws(ProviderError) {
                if next.arguments.isEmpty { throw ProviderError(next.doing) }
                try Self.nft(next.arguments, input: next.input, doing: next.doing, absentIsDone: next.absentIsDone)
                next.done(nil)
            } catch {
                next.done(error)
            }
            startNextChange()
            return
        }
        busy = true
        let generation = self.generation
        let finished: (Result<BoundedCommand.Result, BoundedCommand.Failure>) -> Void = { [weak self] result in
            guard let self, self.generation == generation else { return }
            changing = nil
            busy = false
            let problem: ProviderError?
            switch result {
            case .failure(let error):
                problem = ProviderError("nft could not \(next.doing): \(error.description)")
            case .success(let ran):
                do throws(ProviderError) {
                    try Self.judge(ran, doing: next.doing, absentIsDone: next.absentIsDone)
                    problem = nil
                } catch {
                    problem = error
                }
            }
            next.done(problem)
            if !busy { startNextChange() }
        }
        if next.arguments.isEmpty {
            // A ruleset that could not be written: failed, answered from the loop.
            let failure = ProviderError(next.doing)
            let later = LaterCall(loop: loop) { [weak self] in
                guard let self, self.generation == generation else { return }
                busy = false
                next.done(failure)
                if !busy { startNextChange() }
            }
            if let later { later.arm() } else { busy = false; next.done(failure) }
            return
        }
        changing = LoopCommand.start(["nft"] + next.arguments, input: next.input, timeout: Self.timeout, loop: loop,
                                     done: finished)
    }

    /// One nft transaction: a refused one leaves the previous ruleset as it was.
    func load(_ allowed: [String], session: SessionID, doing what: String) throws(ProviderError) {
        let text: String
        do {
            text = try NetworkRuleset(tableName: tableName, allowedCgroups: allowed).text()
        } catch {
            throw ProviderError(error.description)
        }
        try Self.nft(["-f", "-"], input: text, doing: what)
    }

    func verify(_ allowed: [String]) throws(ProviderError) {
        let result: BoundedCommand.Result
        do {
            result = try BoundedCommand.run(listing, timeout: Self.timeout)
        } catch {
            throw ProviderError(error.description)
        }
        try judge(result, allowed: allowed)
    }

    /// The same listing as `verify`, by an nft the event loop does not wait for.
    func check(_ allowed: [String], done: @escaping (ProviderError?) -> Void) {
        guard let loop else {
            do throws(ProviderError) { try verify(allowed); done(nil) } catch { done(error) }
            return
        }
        checking?.cancel()
        checking = LoopCommand.start(listing, timeout: Self.timeout, loop: loop) { [weak self] result in
            guard let self else { return }
            checking = nil
            switch result {
            case .failure(let error):
                done(ProviderError(error.description))
            case .success(let listed):
                do throws(ProviderError) { try judge(listed, allowed: allowed); done(nil) } catch { done(error) }
            }
        }
    }

    func cancelCheck() {
        checking?.cancel()
        checking = nil
    }

    private var listing: [String] { ["nft", "list", "table", "inet", tableName] }

    /// What `nft list table` says of the table: there, letting `allowed` through, dropping the rest.
    private func judge(_ result: BoundedCommand.Result, allowed: [String]) throws(ProviderError) {
        guard result.succeeded else {
            throw ProviderError("the nftables table inet \(tableName) is gone (\(Self.firstLine(result.errors)))")
        }
        guard allowed.allSatisfy({ result.output.contains("\"\($0)\"") }), result.output.contains("drop") else {
            throw ProviderError("the nftables table inet \(tableName) was changed")
        }
    }

    func delete() throws(ProviderError) { try Self.deleteTable(tableName) }

    /// Deletes the table in one nft run; a table not there is nothing to revert.
    static func deleteTable(_ table: String) throws(ProviderError) {
        try nft(["delete", "table", "inet", table], doing: "delete the table inet \(table)",
                absentIsDone: true)
    }

    private static func nft(_ arguments: [String], input: String = "", doing what: String,
                            absentIsDone: Bool = false) throws(ProviderError) {
        let result: BoundedCommand.Result
        do {
            result = try BoundedCommand.run(["nft"] + arguments, input: input, timeout: timeout)
        } catch {
            throw ProviderError("\(error.description) (install nftables)")
        }
        try judge(result, doing: what, absentIsDone: absentIsDone)
    }

    /// What an nft run that changes the table came to.
    private static func judge(_ result: BoundedCommand.Result, doing what: String,
                              absentIsDone: Bool) throws(ProviderError) {
        // nft's word for a table that does not exist (ENOENT).
        if absentIsDone, !result.succeeded, result.errors.contains("No such file or directory") { return }
        guard result.succeeded else {
            var hint = ""
            if result.errors.contains("Operation not permitted") {
                hint = "; Carrel needs root or CAP_NET_ADMIN for the network provider, or --privileged-helper"
            }
            throw ProviderError("nft could not \(what): \(firstLine(result.errors))\(hint)")
        }
    }

    private static func firstLine(_ text: String) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        return line.isEmpty ? "no message" : line
    }
}

/// The table through `carrel-privileged`: Carrel names the cgroups, the
/// helper builds and loads the ruleset (and deletes it if Carrel dies).
final class HelperNetworkTable: NetworkTable {
    private let link: PrivilegedHelperLink

    init(link: PrivilegedHelperLink) { self.link = link }

    func load(_ allowed: [String], session: SessionID, doing what: String) throws(ProviderError) {
        do {
            try link.request(.networkApply(session: session.raw, exempt: allowed))
        } catch {
            throw ProviderError("could not \(what) through the privileged helper: \(error.message)")
        }
    }

    func verify(_ allowed: [String]) throws(ProviderError) {
        try link.request(.networkVerify)
    }

    /// The helper compares the table with what it loaded itself.
    func check(_ allowed: [String], done: @escaping (ProviderError?) -> Void) {
        link.send(.networkVerify) { result in
            switch result {
            case .success: done(nil)
            case .failure(let error): done(error)
            }
        }
    }

    /// A request sent cannot be taken back: its answer is ignored by the provider.
    func cancelCheck() {}

    func delete() throws(ProviderError) {
        try link.request(.networkRevert)
    }

    /// The helper answers in order: a load sent after a delete runs after it.
    func loadAhead(_ allowed: [String], session: SessionID, doing what: String,
                   done: @escaping (ProviderError?) -> Void) {
        link.send(.networkApply(session: session.raw, exempt: allowed)) { result in
            switch result {
            case .success: done(nil)
            case .failure(let error): done(ProviderError("could not \(what) through the privileged helper: \(error.message)"))
            }
        }
    }

    func deleteAhead(done: @escaping (ProviderError?) -> Void) {
        link.send(.networkRevert) { result in
            switch result {
            case .success: done(nil)
            case .failure(let error): done(error)
            }
        }
    }

    /// A request sent cannot be taken back; the helper deletes the table
    /// itself when Carrel goes.
    func dropAhead() -> Bool { false }
}
