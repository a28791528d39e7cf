/// One line from the privileged helper to the compositor: the answer to the
/// request before it (`ok`, with the id of a spawned program, or `error`),
/// or an event that can come at any time (`exited`: a spawned program ended).
/// `input_readers` is answered with the holders (each an `InputDeviceHolder`
/// line) and how many more there were than the answer lists.
///
/// ```
/// {"ok":"yes"}
/// {"id":1,"ok":"yes"}
/// {"holders":["812\t/usr/lib/systemd/systemd-logind\tsystemd-logind\t/dev/input/event0"],"ok":"yes","omitted":0}
/// {"error":"network_apply: nft could not load the ruleset: ..."}
/// {"event":"exited","id":1,"wait_status":256}
/// ```
public enum PrivilegedReply: Sendable, Hashable {
    case ok(id: UInt64?)
    case error(String)
    /// The answer to `input_readers`: the processes with an input device
    /// open, and how many more there were than `InputDeviceHolder.maximumListed`.
    case holders([InputDeviceHolder], omitted: UInt64)
    /// Spawned program `id` ended; `waitStatus` is waitpid's status word.
    case exited(id: UInt64, waitStatus: UInt64)

    /// A `holders` answer is the longest (`InputDeviceHolder`'s limits keep it under).
    public static let maximumLineLength = 16384

    /// Whether this answers a request (rather than being an event).
    public var isAnswer: Bool {
        if case .exited = self { return false }
        return true
    }

    public var line: String {
        switch self {
        case .ok(let id):
            var object: [String: JSONValue] = ["ok": .string("yes")]
            if let id { object["id"] = .number(id) }
            return JSONValue.encodeObject(object)
        case .error(let message):
            return JSONValue.encodeObject(["error": .string(String(message.prefix(2000)))])
        case .holders(let holders, let omitted):
            let listed = holders.prefix(InputDeviceHolder.maximumListed)
            return JSONValue.encodeObject(["ok": .string("yes"), "holders": .strings(listed.map(\.line)),
                                           "omitted": .number(omitted + UInt64(holders.count - listed.count))])
        case .exited(let id, let status):
            return JSONValue.encodeObject(["event": .string("exited"), "id": .number(id), "wait_status": .number(status)])
        }
    }

    /// Parses one line; nil for anything that is not exactly one of the forms.
    public static func parse(_ line: some Collection<UInt8>) -> PrivilegedReply? {
        guard line.count <= maximumLineLength, let object = JSONValue.decodeObject(line) else { return nil }
        switch (object["ok"], object["error"], object["event"]) {
        case (.string("yes")?, nil, nil):
            switch object["id"] {
            case nil where object.count == 1: return .ok(id: nil)
            case .number(let id)? where object.count == 2: return .ok(id: id)
            case nil where object.count == 3:
                guard case .strings(let lines)? = object["holders"], case .number(let omitted)? = object["omitted"] else { return nil }
                let holders = lines.compactMap(InputDeviceHolder.parse)
                guard holders.count == lines.count else { return nil }
                return .holders(holders, omitted: omitted)
            default: return nil
            }
        case (nil, .string(let message)?, nil) where object.count == 1:
            return .error(message)
        case (nil, nil, .string("exited")?):
            guard object.count == 3, case .number(let id)? = object["id"], case .number(let status)? = object["wait_status"] else { return nil }
            return .exited(id: id, waitStatus: status)
        default:
            return nil
        }
    }
}
