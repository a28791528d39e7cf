import FoundationEssentials

/// One request from the compositor to the privileged helper
/// (`carrel-privileged`): a JSON object on one line, answered by one
/// `PrivilegedReply` line. A closed vocabulary; every field is validated
/// before the helper does anything, and unknown keys or values are refused.
///
/// ```
/// {"request":"network_apply","session":3,"exempt":["system.slice/carrel-kiosk.service/carrel-812"]}
/// {"request":"network_verify"}
/// {"request":"network_revert"}
/// {"request":"spawn","role":"app","argv":["/usr/bin/carrel-demo-exam"],"env":{"LANG":"C.UTF-8"},"cgroup":"..."}
/// {"request":"spawn","role":"input_method","argv":["/usr/bin/fcitx5"],"env":{},"cgroup":"...","files":{".config/fcitx5/profile":"..."}}
/// {"request":"signal","id":1,"signal":"TERM"}
/// {"request":"recover"}
/// {"request":"input_readers"}
/// ```
///
/// The helper never takes ruleset text: `network_apply` names the cgroups to
/// let through, and the helper builds `NetworkRuleset` from them itself. A
/// `spawn` carries the program's Wayland connection as a file descriptor
/// (SCM_RIGHTS) with the line: the app needs no path to Carrel.
public enum PrivilegedRequest: Sendable, Hashable {
    /// Load the `inet carrel` table letting only `exempt`'s sockets through.
    case networkApply(session: UInt64, exempt: [String])
    /// Check the table the last `networkApply` loaded is there, unchanged.
    case networkVerify
    /// Delete the table (nothing to do if it is not loaded).
    case networkRevert
    /// Start `argv` as the role's user in `cgroup` with exactly `environment`
    /// (plus the role user's identity and WAYLAND_SOCKET); answered with the id.
    /// The input method and the keyboard get a fresh private home, made by
    /// the helper and holding `files` (paths relative to it), removed when
    /// they end; the app and participants use their user's own home, and
    /// `files` must be empty for them.
    case spawn(role: SpawnRole, argv: [String], environment: [String: String], cgroup: String,
               files: [String: String] = [:])
    /// Send `signal` to the process group of a process this connection spawned.
    case signal(id: UInt64, signal: StopSignal)
    /// Undo what a previous helper left applied (the table).
    case recover
    /// List the processes holding an input device open (/proc/*/fd, which
    /// only root can read for every process): answered with `holders`.
    case inputReaders

    /// Whose user a spawned program runs as (the helper's command line names them).
    public enum SpawnRole: String, Sendable, Hashable, CaseIterable {
        case app, participant
        case inputMethod = "input_method"
        case onScreenKeyboard = "on_screen_keyboard"

        /// Whether the helper makes the program a private home of its own.
        public var hasPrivateHome: Bool { self == .inputMethod || self == .onScreenKeyboard }
    }

    /// The signals a compositor may send: the two that stop a program.
    public enum StopSignal: String, Sendable, Hashable, CaseIterable {
        case term = "TERM", kill = "KILL"
    }

    /// The longest request line, newline excluded (a spawn's environment is most of it).
    public static let maximumLineLength = 131_072
    public static let maximumArguments = 256
    public static let maximumVariables = 256
    public static let maximumExempt = 64
    /// The longest argument or variable value, in bytes of UTF-8.
    public static let maximumValueLength = 8192

    public var name: String {
        switch self {
        case .networkApply: return "network_apply"
        case .networkVerify: return "network_verify"
        case .networkRevert: return "network_revert"
        case .spawn: return "spawn"
        case .signal: return "signal"
        case .recover: return "recover"
        case .inputReaders: return "input_readers"
        }
    }

    /// The wire form: one JSON object, no newline.
    public var line: String {
        var object: [String: JSONValue] = ["request": .string(name)]
        switch self {
        case .networkApply(let session, let exempt):
            object["session"] = .number(session)
            object["exempt"] = .strings(exempt)
        case .networkVerify, .networkRevert, .recover, .inputReaders:
            break
        case .spawn(let role, let argv, let environment, let cgroup, let files):
            object["role"] = .string(role.rawValue)
            object["argv"] = .strings(argv)
            object["env"] = .object(environment)
            object["cgroup"] = .string(cgroup)
            if !files.isEmpty { object["files"] = .object(files) }
        case .signal(let id, let signal):
            object["id"] = .number(id)
            object["signal"] = .string(signal.rawValue)
        }
        return JSONValue.encodeObject(object)
    }

    /// Parses and validates one line (without its newline); cgroups must be
    /// session cgroups (`SessionCgroupName`) under `subtree`, the delegated
    /// subtree the helper was started with; a network exemption may also
    /// name one unit's cgroup in system.slice (`InfrastructureExemption`).
    public static func parse(_ line: some Collection<UInt8>, subtree: String) -> Result<PrivilegedRequest, PrivilegedFailure> {
        guard line.count <= maximumLineLength else {
            return .failure(PrivilegedFailure("request is \(line.count) bytes; the limit is \(maximumLineLength)"))
        }
        let object: [String: JSONValue]
        do {
            object = try JSONDecoder().decode([String: JSONValue].self, from: Data(line))
        } catch {
            return .failure(PrivilegedFailure("request is not one JSON object of strings, whole numbers, string lists and string maps; send e.g. {\"request\":\"recover\"}"))
        }
        guard case .string(let request)? = object["request"] else {
            return .failure(PrivilegedFailure("request has no string \"request\"; known: \(known)"))
        }
        var fields = Fields(object: object, request: request)
        let result: Result<PrivilegedRequest, PrivilegedFailure>
        switch request {
        case "network_apply":
            result = fields.number("session").flatMap { session in
                fields.strings("exempt", limit: maximumExempt).flatMap { exempt in
                    if let bad = exempt.first(where: { SessionCgroupName.isNetworkless($0, under: subtree) }) {
                        return .failure(PrivilegedFailure("network_apply: \"\(shown(bad))\" is the input method's or the keyboard's cgroup, which never keeps the network"))
                    }
                    if let bad = exempt.first(where: { !SessionCgroupName.isSessionCgroup($0, under: subtree)
                                                       && !InfrastructureExemption.isInfrastructureCgroup($0, subtree: subtree) }) {
                        return .failure(PrivilegedFailure("network_apply: \"\(shown(bad))\" is neither a session cgroup under \(subtree.isEmpty ? "the cgroup root" : subtree) (carrel-PID, carrel-PID-owner or carrel-PID-participant-ID) nor one unit's cgroup in system.slice (system.slice/UNIT.service)"))
                    }
                    return .success(.networkApply(session: session, exempt: exempt))
                }
            }
        case "network_verify": result = .success(.networkVerify)
        case "network_revert": result = .success(.networkRevert)
        case "recover": result = .success(.recover)
        case "input_readers": result = .success(.inputReaders)
        case "spawn":
            result = fields.word("role", of: SpawnRole.self).flatMap { role in
                fields.strings("argv", limit: maximumArguments).flatMap { argv in
                    guard let first = argv.first, !first.isEmpty else {
                        return .failure(PrivilegedFailure("spawn: \"argv\" is empty; name the program to start"))
                    }
                    // The environment is set after the drop by `env NAME=VALUE... PROGRAM`: a
                    // program named with '=' would be read as one more variable.
                    guard !first.contains("=") else {
                        return .failure(PrivilegedFailure("spawn: the program \"\(shown(first))\" holds '='; name it by a path without one"))
                    }
                    return fields.environment().flatMap { environment in
                        fields.optionalString("cgroup").flatMap { cgroup in
                            // Every program goes into a session cgroup, so that when Carrel's
                            // connection closes the helper can kill all it left, wherever it went.
                            guard let cgroup else {
                                return .failure(PrivilegedFailure("spawn: \"cgroup\" is missing; every program starts in a session cgroup"))
                            }
                            if !SessionCgroupName.isSessionCgroup(cgroup, under: subtree) {
                                return .failure(PrivilegedFailure("spawn: \"\(shown(cgroup))\" is not a session cgroup under \(subtree.isEmpty ? "the cgroup root" : subtree)"))
                            }
                            return fields.files(for: role).map { files in
                                .spawn(role: role, argv: argv, environment: environment, cgroup: cgroup, files: files)
                            }
                        }
                    }
                }
            }
        case "signal":
            result = fields.number("id").flatMap { id in
                fields.word("signal", of: StopSignal.self).map { .signal(id: id, signal: $0) }
            }
        default:
            return .failure(PrivilegedFailure("unknown request \"\(shown(request))\"; known: \(known)"))
        }
        guard case .success = result else { return result }
        if let extra = fields.unused.sorted().first {
            return .failure(PrivilegedFailure("\(request): unknown key \"\(shown(extra))\""))
        }
        return result
    }

    static let known = "network_apply, network_verify, network_revert, spawn, signal, recover, input_readers"

    /// A word as a message may echo it: short, control characters as "?".
    public static func shown(_ word: String) -> String {
        String(String.UnicodeScalarView(word.unicodeScalars.prefix(64).map {
            $0.properties.generalCategory == .control ? "?" : $0
        }))
    }

    /// The request's fields, each taken once; what is left over is unknown.
    private struct Fields {
        let object: [String: JSONValue]
        let request: String
        private(set) var unused: Set<String>

        init(object: [String: JSONValue], request: String) {
            self.object = object
            self.request = request
            unused = Set(object.keys).subtracting(["request"])
        }

        private func failure<T>(_ text: String) -> Result<T, PrivilegedFailure> {
            .failure(PrivilegedFailure("\(request): \(text)"))
        }

        mutating func number(_ key: String) -> Result<UInt64, PrivilegedFailure> {
            unused.remove(key)
            guard case .number(let value)? = object[key] else { return failure("\"\(key)\" must be a whole number") }
            return .success(value)
        }

        mutating func optionalString(_ key: String) -> Result<String?, PrivilegedFailure> {
            unused.remove(key)
            switch object[key] {
            case nil: return .success(nil)
            case .string(let value)?: return .success(value)
            default: return failure("\"\(key)\" must be a string")
            }
        }

        mutating func word<W: RawRepresentable & CaseIterable>(_ key: String, of: W.Type) -> Result<W, PrivilegedFailure> where W.RawValue == String {
            unused.remove(key)
            let allowed = W.allCases.map(\.rawValue).joined(separator: ", ")
            guard case .string(let text)? = object[key] else { return failure("\"\(key)\" must be one of \(allowed)") }
            guard let value = W(rawValue: text) else { return failure("\"\(key)\" is \"\(shown(text))\"; expected one of \(allowed)") }
            return .success(value)
        }

        mutating func strings(_ key: String, limit: Int) -> Result<[String], PrivilegedFailure> {
            unused.remove(key)
            guard case .strings(let values)? = object[key] else { return failure("\"\(key)\" must be a list of strings") }
            guard values.count <= limit else { return failure("\"\(key)\" has \(values.count) entries; the limit is \(limit)") }
            if let bad = values.first(where: { !PrivilegedRequest.isPlain($0) }) {
                return failure("an entry of \"\(key)\" (\"\(shown(bad))\") is longer than \(maximumValueLength) bytes or holds a NUL")
            }
            return .success(values)
        }

        /// A spawn's `files`: absent or empty, except for a role with a
        /// private home, where each is a relative path of plain names.
        mutating func files(for role: SpawnRole) -> Result<[String: String], PrivilegedFailure> {
            unused.remove("files")
            guard let value = object["files"] else { return .success([:]) }
            guard case .object(let files) = value else { return failure("\"files\" must be an object of strings (path: contents)") }
            if files.isEmpty { return .success([:]) }
            guard role.hasPrivateHome else {
                return failure("\"files\" is only for a role with a private home (input_method, on_screen_keyboard), not \(role.rawValue)")
            }
            guard files.count <= maximumFiles else { return failure("\"files\" has \(files.count) entries; the limit is \(maximumFiles)") }
            for (path, contents) in files.sorted(by: { $0.key < $1.key }) {
                guard PrivilegedRequest.isHomePath(path) else {
                    return failure("\"\(shown(path))\" is not a path inside the home: give names of letters, digits, '.', '_' or '-' joined by '/', none of them '.' or '..'")
                }
                guard PrivilegedRequest.isPlain(contents) else { return failure("the contents of \(path) are longer than \(maximumValueLength) bytes or hold a NUL") }
            }
            return .success(files)
        }

        mutating func environment() -> Result<[String: String], PrivilegedFailure> {
            unused.remove("env")
            guard case .object(let values)? = object["env"] else { return failure("\"env\" must be an object of strings") }
            guard values.count <= maximumVariables else { return failure("\"env\" has \(values.count) variables; the limit is \(maximumVariables)") }
            for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                guard PrivilegedRequest.isVariableName(name) else {
                    return failure("\"\(shown(name))\" is not a variable name (letters, digits and '_', not starting with a digit)")
                }
                guard PrivilegedRequest.isPlain(value) else { return failure("the value of \(name) is longer than \(maximumValueLength) bytes or holds a NUL") }
            }
            return .success(values)
        }
    }

    /// Whether a value may travel in a request (argv entry, variable value).
    public static func isPlain(_ text: String) -> Bool {
        text.utf8.count <= maximumValueLength && !text.utf8.contains(0)
    }

    /// The most files a spawn may put into a private home.
    public static let maximumFiles = 16

    /// Whether `path` names a file inside a private home: relative, at most
    /// eight names of letters, digits, '.', '_' and '-', none `.` or `..`.
    public static func isHomePath(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.count <= 8, path.utf8.count <= 256 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part != "." && part != ".."
                && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
        }
    }

    /// Whether `name` may name a variable in a spawn's environment.
    public static func isVariableName(_ name: String) -> Bool {
        guard let first = name.first, !first.isNumber, name.utf8.count <= 128 else { return false }
        return name.allSatisfy { $0.isASCII && ($0 == "_" || $0.isLetter || $0.isNumber) }
    }
}

/// Why the helper refused a request: one sentence, sent back as the error.
public struct PrivilegedFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
