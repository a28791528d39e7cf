import CarrelHelperRequests
import CarrelSystem

/// Carrel's nftables table, loaded only from `NetworkRuleset`, which the
/// helper builds itself from the cgroups a request names.
struct Nftables {
    let tableName: String

    func load(exempt: [String]) throws(HelperError) {
        let text: String
        do {
            text = try NetworkRuleset(tableName: tableName, allowedCgroups: exempt).text()
        } catch {
            throw HelperError(error.description)
        }
        let result = try Self.run(["nft", "-f", "-"], input: text)
        guard result.succeeded else { throw HelperError("nft could not load the ruleset: \(Self.firstLine(result.errors))") }
    }

    /// The table is there, lets exactly what was asked through, and drops the rest.
    func verify(exempt: [String]) throws(HelperError) {
        let result = try Self.run(["nft", "list", "table", "inet", tableName])
        guard result.succeeded else {
            throw HelperError("the nftables table inet \(tableName) is gone (\(Self.firstLine(result.errors)))")
        }
        guard exempt.allSatisfy({ result.output.contains("\"\($0)\"") }), result.output.contains("drop") else {
            throw HelperError("the nftables table inet \(tableName) was changed")
        }
    }

    /// Deletes the table; true if there was one.
    @discardableResult
    func delete() throws(HelperError) -> Bool {
        let listed = try Self.run(["nft", "list", "table", "inet", tableName])
        guard listed.succeeded else { return false }
        let result = try Self.run(["nft", "delete", "table", "inet", tableName])
        guard result.succeeded else {
            throw HelperError("nft could not delete the table inet \(tableName): \(Self.firstLine(result.errors))")
        }
        return true
    }

    private static func run(_ argv: [String], input: String = "") throws(HelperError) -> BoundedCommand.Result {
        do {
            return try BoundedCommand.run(argv, input: input)
        } catch {
            throw HelperError("\(error.description) (install nftables)")
        }
    }

    static func firstLine(_ text: String) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        return line.isEmpty ? "no message" : line
    }
}
