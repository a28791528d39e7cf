import CarrelCore
import CarrelPasscode
import TOMLKit

/// Walks a parsed policy table key by key, building the `Policy` and
/// collecting a problem for every key that is wrong, unknown or missing, so
/// one run of `carrel check-policy` shows them all.
struct PolicyReader {
    let file: String
    let lines: SourceLines
    private(set) var problems: [PolicyProblem] = []

    init(file: String, lines: SourceLines) {
        self.file = file
        self.lines = lines
    }

    static let tables = ["assessment", "participants", "input_method", "on_screen_keyboard", "capture", "emergency", "outputs",
                         "kiosk", "app_lock", "guided_access", "control", "providers", "preconditions", "audit", "attestation",
                         "magnifier", "metrics"]
    static let minutes = 1...1440
    static let participantIDLength = 1...32

    mutating func read(_ root: TOMLTable) -> Policy {
        var policy = Policy.builtIn
        for key in root.keys where !Self.tables.contains(key) {
            problem([key], "unknown table; a policy has only \(Self.tables.map { "[\($0)]" }.joined(separator: ", "))")
        }
        if let t = section(root, ["assessment"], keys: ["roles", "default_time_limit_minutes", "maximum_time_limit_minutes"]) {
            readAssessment(t, into: &policy.session)
        }
        readParticipants(root, into: &policy)
        if let t = section(root, ["input_method"], keys: ["command", "engines"]), let command = command(t, ["input_method", "command"]) {
            var inputMethod = InputMethodPolicy(command: command)
            if let engines = engines(t, ["input_method", "engines"]) { inputMethod.engines = engines }
            policy.inputMethod = inputMethod
        }
        if let t = section(root, ["on_screen_keyboard"], keys: ["command"]),
           let command = command(t, ["on_screen_keyboard", "command"]) {
            policy.onScreenKeyboard = OnScreenKeyboardPolicy(command: command)
        }
        if let t = section(root, ["capture"], keys: ["enabled_outside_sessions", "roles"]) {
            readCapture(t, into: &policy.capture)
        }
        if let t = section(root, ["emergency"], keys: ["binding"]) {
            policy.emergencyBinding = keyCombination(t, ["emergency", "binding"])
        }
        if let t = section(root, ["outputs"], keys: ["allow_hotplug_during_session", "curtain_colour"]) {
            readOutputs(t, into: &policy.outputs)
        }
        if let t = section(root, ["kiosk"], keys: ["enabled", "maximum_relaunches", "initial_backoff_ms", "maximum_backoff_ms", "stability_window_ms", "vt_switching"]) {
            readKiosk(t, into: &policy.kiosk)
        }
        if let t = section(root, ["app_lock"], keys: ["allowed_executables", "require_confirmation", "banner_seconds"]) {
            readAppLock(t, into: &policy.appLock)
        }
        if let t = section(root, ["guided_access"], keys: ["passcode_hash", "unlock_keys"]) {
            readGuidedAccess(t, emergency: policy.emergencyBinding, into: &policy.guidedAccess)
        }
        if let t = section(root, ["control"], keys: ["socket", "group"]) {
            readControl(t, into: &policy.control)
        }
        if let t = section(root, ["providers"], keys: ["network", "media", "state_directory", "verify_interval_ms", "network_exempt_units"]) {
            readProviders(t, into: &policy.providers)
        }
        if let t = section(root, ["preconditions"], keys: ["waive", "virtual_machine"]) {
            readPreconditions(t, into: &policy.preconditions)
        }
        if let t = section(root, ["audit"], keys: ["path"]) {
            readAudit(t, into: &policy.audit)
        }
        if let t = section(root, ["metrics"], keys: ["textfile_dir"]) {
            readMetrics(t, into: &policy.metrics)
        }
        if let t = section(root, ["attestation"], keys: ["key"]) {
            readAttestation(t, into: &policy.attestation)
        }
        if let t = section(root, ["magnifier"], keys: ["zoom_in", "zoom_out", "zoom_off", "colour_filter"]) {
            readMagnifier(t, emergency: policy.emergencyBinding, unlock: policy.guidedAccess.unlockKeys, into: &policy.magnifier)
        }
        return policy
    }

    // MARK: - Tables

    private mutating func readAssessment(_ t: TOMLTable, into session: inout SessionPolicy) {
        let path = ["assessment"]
        if let roles = roles(t, path + ["roles"], allowed: [.app, .participant],
                             untrustedReason: "untrusted clients may never begin sessions: any program that reaches the public socket is untrusted") {
            session.entitledRoles = roles
        }
        let fallback = Int(SessionPolicy.fallbackMaximumTimeLimit / 60)
        let maximum = integer(t, path + ["maximum_time_limit_minutes"], in: Self.minutes)
        let `default` = integer(t, path + ["default_time_limit_minutes"], in: Self.minutes)
        if let maximum { session.maximumTimeLimit = UInt32(maximum * 60) }
        if let `default` {
            let maximumGiven = t["maximum_time_limit_minutes"] != nil
            if maximumGiven && maximum == nil { return }  // already reported
            let bound = maximum ?? fallback
            if `default` > bound {
                problem(path + ["default_time_limit_minutes"],
                        "must not exceed maximum_time_limit_minutes (\(bound)\(maximumGiven ? "" : " by default")), got \(`default`)")
            } else {
                session.defaultTimeLimit = UInt32(`default` * 60)
            }
        }
    }

    private mutating func readParticipants(_ root: TOMLTable, into policy: inout Policy) {
        guard let t = section(root, ["participants"], keys: nil) else { return }
        for id in t.keys {
            let path = ["participants", id]
            guard Self.isParticipantID(id) else {
                problem(path, "a participant id must be 1 to 32 characters of a-z, 0-9, _ and -, got \(Self.quoted(id))")
                continue
            }
            guard let p = section(t, path, keys: ["command", "network", "on_exit"]) else { continue }
            let command = command(p, path + ["command"])
            let network = bool(p, path + ["network"])
            let onExit = participantExit(p, path + ["on_exit"])
            if let command {
                policy.participants[id] = ParticipantPolicy(command: command, network: network ?? false,
                                                            onExit: onExit ?? .interrupt)
                policy.session.knownParticipants.insert(id)
            }
        }
    }

    private mutating func participantExit(_ t: TOMLTable, _ path: [String]) -> ParticipantExitPolicy? {
        let names = ParticipantExitPolicy.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        guard let text = string(t, path, expected: names) else { return nil }
        guard let value = ParticipantExitPolicy(rawValue: text) else {
            problem(path, "must be \(names), got \(Self.quoted(text))")
            return nil
        }
        return value
    }

    private mutating func readCapture(_ t: TOMLTable, into capture: inout CapturePolicy) {
        let path = ["capture"]
        let enabled = bool(t, path + ["enabled_outside_sessions"])
        let roles = roles(t, path + ["roles"], allowed: [.app, .participant],
                          untrustedReason: "capture never reaches untrusted clients")
        guard let enabled = enabled ?? (t["enabled_outside_sessions"] == nil ? false : nil),
              let roles = roles ?? (t["roles"] == nil ? [] : nil) else { return }
        if enabled && roles.isEmpty {
            problem(path + [t["roles"] == nil ? "enabled_outside_sessions" : "roles"],
                    "enabled_outside_sessions = true needs roles naming who may capture (app, participant)")
        } else if !enabled && !roles.isEmpty {
            problem(path + ["roles"],
                    "names roles but enabled_outside_sessions is false; set it to true, or remove roles")
        } else {
            capture = CapturePolicy(enabledOutsideSessions: enabled, roles: roles)
        }
    }

    private mutating func readOutputs(_ t: TOMLTable, into outputs: inout OutputPolicy) {
        let path = ["outputs"]
        if let allow = bool(t, path + ["allow_hotplug_during_session"]) { outputs.allowHotplugDuringSession = allow }
        if let text = string(t, path + ["curtain_colour"], expected: "a colour \"#RRGGBB\"") {
            let hex = text.dropFirst()
            if text.hasPrefix("#"), hex.count == 6, hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16) {
                outputs.curtainColour = value
            } else {
                problem(path + ["curtain_colour"], "must be a colour \"#RRGGBB\" (# and six hex digits), got \(Self.quoted(text))")
            }
        }
    }

    private mutating func readKiosk(_ t: TOMLTable, into kiosk: inout KioskPolicy) {
        let path = ["kiosk"]
        if let enabled = bool(t, path + ["enabled"]) { kiosk.enabled = enabled }
        if let switching = bool(t, path + ["vt_switching"]) { kiosk.virtualTerminalSwitching = switching }
        if let count = integer(t, path + ["maximum_relaunches"], in: 0...100) { kiosk.maximumRelaunches = count }
        if let window = integer(t, path + ["stability_window_ms"], in: 1_000...3_600_000) { kiosk.stabilityWindow = .milliseconds(window) }
        let initial = integer(t, path + ["initial_backoff_ms"], in: 10...60_000)
        let maximum = integer(t, path + ["maximum_backoff_ms"], in: 10...600_000)
        let initialGiven = t["initial_backoff_ms"] != nil, maximumGiven = t["maximum_backoff_ms"] != nil
        if (initialGiven && initial == nil) || (maximumGiven && maximum == nil) { return }  // already reported
        let initialMS = initial ?? Int(kiosk.initialBackoff / .milliseconds(1))
        let maximumMS = maximum ?? Int(kiosk.maximumBackoff / .milliseconds(1))
        if maximumMS < initialMS {
            if maximumGiven {
                problem(path + ["maximum_backoff_ms"], "must be at least initial_backoff_ms (\(initialMS)), got \(maximumMS)")
            } else {
                problem(path + ["initial_backoff_ms"], "must not exceed maximum_backoff_ms (\(maximumMS) by default), got \(initialMS)")
            }
            return
        }
        kiosk.initialBackoff = .milliseconds(initialMS)
        kiosk.maximumBackoff = .milliseconds(maximumMS)
    }

    private mutating func readAppLock(_ t: TOMLTable, into appLock: inout AppLockPolicy) {
        let path = ["app_lock"]
        // Matched against the connecting process's /proc/PID/exe, which is
        // always absolute and canonical: anything else could never match.
        if let paths = strings(t, path + ["allowed_executables"], expected: "absolute paths of executables, e.g. [\"/usr/bin/exam-browser\"]") {
            var valid = true
            for (index, executable) in paths.enumerated() where !Self.isCanonicalAbsolutePath(executable) {
                problem(path + ["allowed_executables"], "item \(index + 1) must be the absolute path of an executable as /proc/PID/exe shows it (no . or .. parts, no trailing /), got \(Self.quoted(executable))")
                valid = false
            }
            if valid { appLock.allowedExecutables = Set(paths) }
        }
        if let confirm = bool(t, path + ["require_confirmation"]) { appLock.requireConfirmation = confirm }
        if let seconds = integer(t, path + ["banner_seconds"], in: 0...30) { appLock.bannerDuration = .seconds(seconds) }
    }

    /// Each key replaces its default; no two of the four may be the same
    /// combination, nor any of them the emergency binding.
    private mutating func readMagnifier(_ t: TOMLTable, emergency: KeyCombination?, unlock: KeyCombination?,
                                        into magnifier: inout MagnifierPolicy) {
        var read = magnifier
        for (_, key, _) in magnifier.combinations where t[key] != nil {
            guard let combination = keyCombination(t, ["magnifier", key]) else { continue }
            switch key {
            case "zoom_in": read.zoomIn = combination
            case "zoom_out": read.zoomOut = combination
            case "zoom_off": read.zoomOff = combination
            default: read.colourFilter = combination
            }
        }
        let all = read.combinations
        for entry in all where t[entry.key] != nil {
            if let emergency, Self.sameKeys(emergency, entry.combination) {
                problem(["magnifier", entry.key], "is the same combination as emergency.binding (\(emergency)); choose another")
                return
            }
            if let unlock, Self.sameKeys(unlock, entry.combination) {
                problem(["magnifier", entry.key], "is the same combination as guided_access.unlock_keys (\(unlock)); choose another")
                return
            }
        }
        for (index, entry) in all.enumerated() {
            if let earlier = all[..<index].first(where: { Self.sameKeys($0.combination, entry.combination) }) {
                problem(["magnifier", entry.key], "is the same combination as magnifier.\(earlier.key) (\(entry.combination)); each magnifier key needs its own")
                return
            }
        }
        magnifier = read
    }

    private static func sameKeys(_ a: KeyCombination, _ b: KeyCombination) -> Bool {
        a.modifiers == b.modifiers && a.keyName.lowercased() == b.keyName.lowercased()
    }

    private mutating func readGuidedAccess(_ t: TOMLTable, emergency: KeyCombination?, into guided: inout GuidedAccessPolicy) {
        let path = ["guided_access"]
        if let line = string(t, path + ["passcode_hash"], expected: "the line `carrel hash-passcode` prints") {
            do throws(PasscodeHash.FormatError) {
                _ = try PasscodeHash(parsing: line)
                guided.passcodeHash = line
            } catch {
                problem(path + ["passcode_hash"], error.description)
            }
        }
        guard let keys = keyCombination(t, path + ["unlock_keys"]) else { return }
        if t["passcode_hash"] == nil {
            problem(path + ["unlock_keys"], "needs passcode_hash: without a passcode Guided Access is off and there is nothing to unlock")
        } else if let emergency, Self.sameKeys(keys, emergency) {
            problem(path + ["unlock_keys"], "is the same combination as emergency.binding (\(keys)); choose another")
        } else {
            guided.unlockKeys = keys
        }
    }

    private mutating func readControl(_ t: TOMLTable, into control: inout ControlPolicy) {
        let path = ["control"]
        if let socket = string(t, path + ["socket"], expected: "an absolute path") {
            if !socket.hasPrefix("/") || socket.hasSuffix("/") {
                problem(path + ["socket"], "must be an absolute path to a socket file, e.g. \"\(ControlPolicy.defaultSocketPath)\", got \(Self.quoted(socket))")
            } else if socket.utf8.count > 107 {
                problem(path + ["socket"], "must be at most 107 bytes long (the limit of a Unix socket address), got \(socket.utf8.count)")
            } else {
                control.socketPath = socket
            }
        }
        if let group = string(t, path + ["group"], expected: "a group name") {
            if Self.isGroupName(group) {
                control.group = group
            } else {
                problem(path + ["group"], "must be a group name (1 to 32 of a-z, 0-9, _ and -, not starting with a digit or -), got \(Self.quoted(group))")
            }
        }
    }

    private mutating func readProviders(_ t: TOMLTable, into providers: inout ProvidersPolicy) {
        let path = ["providers"]
        if let network = bool(t, path + ["network"]) { providers.network = network }
        if let media = bool(t, path + ["media"]) { providers.media = media }
        if let directory = string(t, path + ["state_directory"], expected: "an absolute path") {
            if Self.isCanonicalAbsolutePath(directory) {
                providers.stateDirectory = directory
            } else {
                problem(path + ["state_directory"], "must be an absolute path of a directory (no . or .. parts, no trailing /), e.g. \"/run/carrel\", got \(Self.quoted(directory))")
            }
        }
        if let ms = integer(t, path + ["verify_interval_ms"], in: 10...3_600_000) { providers.verifyInterval = .milliseconds(ms) }
        if let units = strings(t, path + ["network_exempt_units"], expected: "a list of systemd unit names") {
            if let bad = units.first(where: { !InfrastructureExemption.isUnitPattern($0) }) {
                problem(path + ["network_exempt_units"], "must list systemd unit names ending in .service, .socket or .scope (letters, digits, - _ . @ : \\, and * for any run of characters), e.g. \"ssh.service\", got \(Self.quoted(bad))")
            } else {
                providers.networkExemptUnits = units
            }
        }
    }

    private mutating func readPreconditions(_ t: TOMLTable, into preconditions: inout PreconditionPolicy) {
        let path = ["preconditions"]
        let names = Precondition.waivable.map(\.rawValue).joined(separator: ", ")
        if let list = strings(t, path + ["waive"], expected: "precondition names: \(names)") {
            var waived: Set<Precondition> = []
            var valid = true
            for name in list {
                if let kind = Precondition(rawValue: name), Precondition.waivable.contains(kind) {
                    waived.insert(kind)
                } else {
                    valid = false
                    problem(path + ["waive"], "\(Self.quoted(name)) cannot be waived; waivable (for testing only): \(names)")
                }
            }
            if valid { preconditions.waived = waived }
        }
        if let vm = string(t, path + ["virtual_machine"], expected: "\"report\" or \"refuse\"") {
            switch vm {
            case "report": preconditions.refuseVirtualMachine = false
            case "refuse": preconditions.refuseVirtualMachine = true
            default: problem(path + ["virtual_machine"], "must be \"report\" (say so in the log and audit log) or \"refuse\" (fail every begin), got \(Self.quoted(vm))")
            }
        }
    }

    private mutating func readAudit(_ t: TOMLTable, into audit: inout AuditPolicy) {
        if let file = absolutePath(t, ["audit", "path"], of: "a file", example: AuditPolicy.defaultPath) {
            audit.path = file
        }
    }

    private mutating func readMetrics(_ t: TOMLTable, into metrics: inout MetricsPolicy) {
        if let directory = absolutePath(t, ["metrics", "textfile_dir"], of: "node-exporter's textfile directory",
                                        example: MetricsPolicy.debianTextfileDirectory) {
            metrics.textfileDirectory = directory
        }
    }

    private mutating func readAttestation(_ t: TOMLTable, into attestation: inout AttestationPolicy) {
        if let file = absolutePath(t, ["attestation", "key"], of: "the private key `carrel keygen` wrote",
                                   example: "\(AttestationPolicy.defaultKeyDirectory)/attestation.key") {
            attestation.keyPath = file
        }
    }

    /// The absolute path at `path` (of `what`, for the message), or a problem
    /// naming what was wrong and an example.
    private mutating func absolutePath(_ t: TOMLTable, _ path: [String], of what: String, example: String) -> String? {
        guard let value = string(t, path, expected: "an absolute path") else { return nil }
        guard Self.isCanonicalAbsolutePath(value) && value != "/" else {
            problem(path, "must be the absolute path of \(what) (no . or .. parts, no trailing /), e.g. \"\(example)\", got \(Self.quoted(value))")
            return nil
        }
        return value
    }

    // MARK: - Values

    /// The table at `path` in `parent`, if the file has one; a problem if it is
    /// not a table, and one for every key not in `keys` (nil: any key).
    private mutating func section(_ parent: TOMLTable, _ path: [String], keys: [String]?) -> TOMLTable? {
        guard let value = parent[path.last!] else { return nil }
        guard value.type == .table, let table = value.table else {
            problem(path, "must be a table ([\(Self.dotted(path))]), got \(Self.describe(value))")
            return nil
        }
        if let keys {
            for key in table.keys where !keys.contains(key) {
                problem(path + [key], "unknown key; [\(Self.dotted(path))] may hold \(keys.joined(separator: ", "))")
            }
        }
        return table
    }

    private mutating func bool(_ t: TOMLTable, _ path: [String]) -> Bool? {
        guard let value = t[path.last!] else { return nil }
        guard value.type == .bool, let bool = value.bool else {
            problem(path, "must be true or false, got \(Self.describe(value))")
            return nil
        }
        return bool
    }

    private mutating func integer(_ t: TOMLTable, _ path: [String], in range: ClosedRange<Int>) -> Int? {
        guard let value = t[path.last!] else { return nil }
        guard value.type == .int, let int = value.int, range.contains(int) else {
            problem(path, "must be an integer from \(range.lowerBound) to \(range.upperBound), got \(Self.describe(value))")
            return nil
        }
        return int
    }

    private mutating func string(_ t: TOMLTable, _ path: [String], expected: String) -> String? {
        guard let value = t[path.last!] else { return nil }
        guard value.type == .string, let string = value.string else {
            problem(path, "must be a string (\(expected)), got \(Self.describe(value))")
            return nil
        }
        return string
    }

    private mutating func strings(_ t: TOMLTable, _ path: [String], expected: String) -> [String]? {
        guard let value = t[path.last!] else { return nil }
        guard value.type == .array, let array = value.array else {
            problem(path, "must be an array of strings (\(expected)), got \(Self.describe(value))")
            return nil
        }
        var strings: [String] = []
        for (index, item) in array.enumerated() {
            guard item.type == .string, let string = item.string else {
                problem(path, "item \(index + 1) must be a string (\(expected)), got \(Self.describe(item))")
                return nil
            }
            strings.append(string)
        }
        return strings
    }

    /// Roles named as strings; `untrusted` is refused for `untrustedReason`.
    private mutating func roles(_ t: TOMLTable, _ path: [String], allowed: [Role], untrustedReason: String) -> Set<Role>? {
        let names = allowed.map(\.rawValue).joined(separator: ", ")
        guard let list = strings(t, path, expected: "roles: \(names)") else { return nil }
        var roles: Set<Role> = []
        var valid = true
        for name in list {
            if let role = Role(rawValue: name), allowed.contains(role) {
                roles.insert(role)
            } else if name == Role.untrusted.rawValue {
                problem(path, "\"untrusted\" is not allowed: \(untrustedReason); allowed: \(names)")
                valid = false
            } else {
                problem(path, "unknown role \(Self.quoted(name)); allowed: \(names)")
                valid = false
            }
        }
        return valid ? roles : nil
    }

    /// A command to launch: required, program first, as an absolute path.
    /// fcitx5 input method names: letters, digits, `-` and `_`, at least one,
    /// none twice (they become lines of fcitx5's profile).
    private mutating func engines(_ t: TOMLTable, _ path: [String]) -> [String]? {
        guard let names = strings(t, path, expected: "fcitx5 input method names, e.g. [\"mozc\", \"hangul\", \"pinyin\"]") else { return nil }
        guard !names.isEmpty else {
            problem(path, "must name at least one engine, e.g. [\"mozc\"]; leave out [input_method] for no input method")
            return nil
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        for (index, name) in names.enumerated() where name.isEmpty || name.count > 64 || !name.allSatisfy(allowed.contains) {
            problem(path, "item \(index + 1) must be an fcitx5 input method name (letters, digits, - and _, at most 64), got \(Self.quoted(name))")
            return nil
        }
        guard Set(names).count == names.count else {
            problem(path, "names an engine twice; list each once, the one active at start first")
            return nil
        }
        return names
    }

    private mutating func command(_ t: TOMLTable, _ path: [String]) -> [String]? {
        let shape = "the program's absolute path, then its arguments, e.g. [\"/usr/bin/galculator\"]"
        guard t[path.last!] != nil else {
            problem(path, "is required: \(shape)")
            return nil
        }
        guard let argv = strings(t, path, expected: shape) else { return nil }
        guard let program = argv.first else {
            problem(path, "must not be empty: \(shape)")
            return nil
        }
        guard program.hasPrefix("/") else {
            problem(path, "the program must be an absolute path (Carrel does not search PATH), got \(Self.quoted(program))")
            return nil
        }
        return argv
    }

    private mutating func keyCombination(_ t: TOMLTable, _ path: [String]) -> KeyCombination? {
        guard let text = string(t, path, expected: "a key combination such as \"Ctrl+Alt+Shift+Escape\"") else { return nil }
        do throws(KeyCombination.ParseError) {
            return try KeyCombination(parsing: text)
        } catch {
            problem(path, "\(error); got \(Self.quoted(text))")
            return nil
        }
    }

    // MARK: - Reporting

    private mutating func problem(_ path: [String], _ message: String) {
        problems.append(PolicyProblem(file: file, line: lines.line(of: path), key: Self.dotted(path), message: message))
    }

    /// `kiosk.maximum_relaunches`; a part that is not a bare key is quoted.
    static func dotted(_ path: [String]) -> String {
        path.map { isBareKey($0) ? $0 : quoted($0) }.joined(separator: ".")
    }

    static func isBareKey(_ key: String) -> Bool {
        !key.isEmpty && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    static func isParticipantID(_ id: String) -> Bool {
        participantIDLength.contains(id.count)
            && id.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// `/usr/bin/x`: absolute, no empty, `.` or `..` parts, no trailing `/`.
    static func isCanonicalAbsolutePath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), path.count > 1 else { return false }
        return path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            .allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    /// The names `useradd` accepts on Debian by default.
    static func isGroupName(_ name: String) -> Bool {
        var body = Substring(name)
        if body.hasSuffix("$") { body = body.dropLast() }
        guard let first = body.first, (1...32).contains(name.count),
              first.isASCII, first.isLowercase || first == "_" else { return false }
        return body.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// A value as the message quotes it: strings in quotes, numbers and
    /// booleans as written, other kinds by name.
    static func describe(_ value: TOMLValueConvertible) -> String {
        switch value.type {
        case .string: quoted(value.string ?? "")
        case .int: value.int.map(String.init) ?? "an integer"
        case .double: value.double.map { "\($0)" } ?? "a number"
        case .bool: value.bool.map { "\($0)" } ?? "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .date, .time, .dateTime: "a \(value.type)"
        }
    }

    /// `text` in double quotes, escaped, shortened past 60 characters.
    static func quoted(_ text: String) -> String {
        var shown = ""
        for c in text.prefix(60) {
            switch c {
            case "\"": shown += "\\\""
            case "\\": shown += "\\\\"
            case "\n": shown += "\\n"
            case "\t": shown += "\\t"
            default: shown.append(c)
            }
        }
        return "\"\(shown)\(text.count > 60 ? "…" : "")\""
    }
}
