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
}

/// The table through `nft`, run by Carrel itself.
final class InProcessNetworkTable: NetworkTable {
    let tableName: String
    static let timeout = 5.0
    /// For `check`'s nft run; nil: checks wait for nft like `verify`.
    private let loop: OpaquePointer?
    private var checking: LoopCommand?

    init(tableName: String = NetworkRuleset.defaultTableName, loop: OpaquePointer? = nil) {
        self.tableName = tableName
        self.loop = loop
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
}
