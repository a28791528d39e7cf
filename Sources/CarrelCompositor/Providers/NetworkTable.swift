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
    func delete() throws(ProviderError)
}

/// The table through `nft`, run by Carrel itself.
final class InProcessNetworkTable: NetworkTable {
    let tableName: String
    static let timeout = 5.0

    init(tableName: String = NetworkRuleset.defaultTableName) { self.tableName = tableName }

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
            result = try BoundedCommand.run(["nft", "list", "table", "inet", tableName], timeout: Self.timeout)
        } catch {
            throw ProviderError(error.description)
        }
        guard result.succeeded else {
            throw ProviderError("the nftables table inet \(tableName) is gone (\(Self.firstLine(result.errors)))")
        }
        guard allowed.allSatisfy({ result.output.contains("\"\($0)\"") }), result.output.contains("drop") else {
            throw ProviderError("the nftables table inet \(tableName) was changed")
        }
    }

    func delete() throws(ProviderError) { try Self.deleteTable(tableName) }

    static func deleteTable(_ table: String) throws(ProviderError) {
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

    func delete() throws(ProviderError) {
        try link.request(.networkRevert)
    }
}
