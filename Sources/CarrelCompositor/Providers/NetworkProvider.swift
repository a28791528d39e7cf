import CarrelCore
import CarrelMedia
import CarrelShim
import Glibc

/// `network`: while a session holds, only sockets of the app's cgroup reach
/// the network (see `NetworkRuleset` for the rules). Applying loads Carrel's
/// own nftables table in one transaction; reverting deletes it.
final class NetworkProvider: RestrictionProvider {
    let name = ProvidersPolicy.network
    private let cgroup: SessionCgroup?
    /// Why there is no cgroup (said when applying: fail closed).
    private let cgroupProblem: String?
    private let tableName: String
    static let timeout = 5.0

    init(cgroup: SessionCgroup?, cgroupProblem: String?, tableName: String = NetworkRuleset.defaultTableName) {
        self.cgroup = cgroup
        self.cgroupProblem = cgroupProblem
        self.tableName = tableName
    }

    /// The table, then the cgroup to remove after a crash.
    var recoveryToken: String { "\(tableName) \(cgroup?.relativePath ?? "")" }

    func apply(_ set: RestrictionSet) throws(ProviderError) {
        guard let cgroup else {
            throw ProviderError("the app has no cgroup of its own: \(cgroupProblem ?? "unknown reason")")
        }
        if let problem = SessionCgroup.rootProblem() { throw ProviderError(problem) }
        let text: String
        do {
            text = try NetworkRuleset(tableName: tableName, allowedCgroups: [cgroup.relativePath]).text()
        } catch {
            throw ProviderError(error.description)
        }
        try Self.nft(["-f", "-"], input: text, doing: "load the ruleset")
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
        guard let cgroup, result.output.contains("\"\(cgroup.relativePath)\""), result.output.contains("drop") else {
            throw ProviderError("the nftables table inet \(tableName) was changed")
        }
    }

    func revert() throws(ProviderError) {
        try Self.deleteTable(tableName)
    }

    /// Undoes what a crashed run left, from its recovery token.
    static func recover(token: String) throws(ProviderError) {
        let parts = token.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        let table = parts.first.flatMap { $0.isEmpty ? nil : $0 } ?? NetworkRuleset.defaultTableName
        try deleteTable(table)
        if parts.count > 1, !parts[1].isEmpty, !SessionCgroup.remove(relativePath: parts[1]) {
            // Processes of the crashed run are still in it; the table is gone,
            // so they have no special access any more.
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

/// `media`: MPRIS players on the session bus are paused at began; one that
/// reports (PropertiesChanged) or is found (each verify) playing during the
/// session is paused again. Nothing is resumed at the end.
final class MediaProvider: RestrictionProvider {
    let name = ProvidersPolicy.media
    let recoveryToken = ""
    private let address: String?
    private let loop: OpaquePointer
    private let logger: (String) -> Void
    private var connection: OpaquePointer?
    private var source: OpaquePointer?
    static let timeoutMicroseconds: UInt64 = 2_000_000

    init(address: String?, loop: OpaquePointer, logger: @escaping (String) -> Void) {
        self.address = address
        self.loop = loop
        self.logger = logger
    }

    func apply(_ set: RestrictionSet) throws(ProviderError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let media = carrel_media_connect(address, Self.timeoutMicroseconds, &error, error.count) else {
            throw ProviderError(String(cString: error))
        }
        connection = media
        guard carrel_media_watch(media, &error, error.count) == 0 else {
            throw ProviderError(String(cString: error))
        }
        try pause(all: true)
        // Players that start playing are paused at once, not only at the next verify.
        source = wl_event_loop_add_fd(loop, carrel_media_fd(media), UInt32(WL_EVENT_READABLE), { _, _, data in
            Unmanaged<MediaProvider>.fromOpaque(data!).takeUnretainedValue().busReadable()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func verify() throws(ProviderError) {
        try pause(all: false)
    }

    func revert() throws(ProviderError) {
        if let source { wl_event_source_remove(source) }
        source = nil
        if let connection { carrel_media_close(connection) }
        connection = nil
    }

    private func busReadable() {
        guard let connection else { return }
        guard carrel_media_process(connection) == 0, carrel_media_connected(connection) != 0 else {
            // The bus went away: stop watching (the fd would stay readable);
            // the next verify reports it.
            if let source { wl_event_source_remove(source) }
            source = nil
            return
        }
        guard carrel_media_take_playing(connection) != 0 else { return }
        do { try pause(all: false) } catch { logger("media: \(error.message)") }
    }

    private func pause(all: Bool) throws(ProviderError) {
        guard let connection else { throw ProviderError("no session bus connection") }
        var error = [CChar](repeating: 0, count: 512)
        var paused = [CChar](repeating: 0, count: 1024)
        let count = carrel_media_pause(connection, all ? 1 : 0, &paused, paused.count, &error, error.count)
        if count > 0 {
            logger("media: paused \(String(cString: paused))\(all ? "" : " (it started playing during the session)")")
        }
        guard count >= 0 else { throw ProviderError(String(cString: error)) }
        // Signals that arrived during the calls are queued, not readable.
        if carrel_media_process(connection) == 0, carrel_media_take_playing(connection) != 0, !all {
            _ = carrel_media_pause(connection, 0, &paused, paused.count, &error, error.count)
        }
    }
}
