import CarrelCore
import CarrelPolicyFile
import Foundation
import Testing

/// What docs/POLICY.md ("The built-in policy") says of one key's built-in value.
enum BuiltInKind: String, Sendable {
    /// No other allowed value grants less.
    case mostRestrictive = "most restrictive"
    /// A stricter value exists; the documentation says why it is not the default.
    case notMostRestrictive = "not the most restrictive"
    /// A place, a duration or a colour: "stricter" has no meaning.
    case notARestriction = "not a restriction"
}

/// One key of the policy file, its kind, and a check of the built-in value
/// against a literal written here (never against the code's own defaults).
struct BuiltInKey: Sendable, CustomTestStringConvertible {
    let key: String
    let kind: BuiltInKind
    let holds: @Sendable () throws -> Bool

    init(_ key: String, _ kind: BuiltInKind, _ holds: @escaping @Sendable () throws -> Bool) {
        self.key = key
        self.kind = kind
        self.holds = holds
    }

    var testDescription: String { "\(key) (\(kind.rawValue))" }
}

private let builtIn = Policy.builtIn

/// A participant that sets only what is required, to see what the rest falls back to.
private func participantWithDefaults() throws -> ParticipantPolicy? {
    try PolicyFile.parse("[participants.calc]\ncommand = [\"/usr/bin/galculator\"]\n", file: "p.toml").participants["calc"]
}

/// An input method that sets only what is required.
private func inputMethodWithDefaults() throws -> InputMethodPolicy? {
    try PolicyFile.parse("[input_method]\ncommand = [\"/usr/bin/fcitx5\"]\n", file: "p.toml").inputMethod
}

/// Every key the policy reader accepts, with its built-in value pinned.
let builtInKeys: [BuiltInKey] = [
    BuiltInKey("assessment.roles", .notMostRestrictive) { builtIn.session.entitledRoles == [.app] },
    BuiltInKey("assessment.default_time_limit_minutes", .notARestriction) {
        builtIn.session.defaultTimeLimit == nil && builtIn.session.effectiveDefaultTimeLimit == 480 * 60
    },
    BuiltInKey("assessment.maximum_time_limit_minutes", .notARestriction) {
        builtIn.session.maximumTimeLimit == nil && builtIn.session.effectiveMaximumTimeLimit == 480 * 60
    },
    BuiltInKey("participants.ID.command", .mostRestrictive) {
        builtIn.participants.isEmpty && builtIn.session.knownParticipants.isEmpty
    },
    BuiltInKey("participants.ID.network", .mostRestrictive) { try participantWithDefaults()?.network == false },
    BuiltInKey("participants.ID.on_exit", .mostRestrictive) { try participantWithDefaults()?.onExit == .interrupt },
    BuiltInKey("input_method.command", .mostRestrictive) { builtIn.inputMethod == nil },
    BuiltInKey("input_method.engines", .notARestriction) { try inputMethodWithDefaults()?.engines == ["mozc", "hangul", "pinyin"] },
    BuiltInKey("on_screen_keyboard.command", .notARestriction) { builtIn.onScreenKeyboard.command == ["/usr/bin/wvkbd-mobintl"] },
    BuiltInKey("capture.enabled_outside_sessions", .mostRestrictive) { builtIn.capture.enabledOutsideSessions == false },
    BuiltInKey("capture.roles", .mostRestrictive) { builtIn.capture.roles.isEmpty },
    BuiltInKey("emergency.binding", .mostRestrictive) { builtIn.emergencyBinding == nil },
    BuiltInKey("outputs.allow_hotplug_during_session", .mostRestrictive) { builtIn.outputs.allowHotplugDuringSession == false },
    BuiltInKey("outputs.curtain_colour", .notARestriction) { builtIn.outputs.curtainColour == 0x14171C },
    BuiltInKey("kiosk.enabled", .notMostRestrictive) { builtIn.kiosk.enabled == false },
    BuiltInKey("kiosk.maximum_relaunches", .notARestriction) { builtIn.kiosk.maximumRelaunches == 5 },
    BuiltInKey("kiosk.initial_backoff_ms", .notARestriction) { builtIn.kiosk.initialBackoff == .milliseconds(250) },
    BuiltInKey("kiosk.maximum_backoff_ms", .notARestriction) { builtIn.kiosk.maximumBackoff == .milliseconds(10_000) },
    BuiltInKey("kiosk.stability_window_ms", .notARestriction) { builtIn.kiosk.stabilityWindow == .milliseconds(30_000) },
    BuiltInKey("kiosk.vt_switching", .notMostRestrictive) { builtIn.kiosk.virtualTerminalSwitching },
    BuiltInKey("app_lock.allowed_executables", .mostRestrictive) { builtIn.appLock.allowedExecutables.isEmpty },
    BuiltInKey("app_lock.require_confirmation", .notMostRestrictive) { builtIn.appLock.requireConfirmation == false },
    BuiltInKey("app_lock.banner_seconds", .notARestriction) { builtIn.appLock.bannerDuration == .zero },
    BuiltInKey("guided_access.passcode_hash", .mostRestrictive) { builtIn.guidedAccess.passcodeHash == nil },
    BuiltInKey("guided_access.unlock_keys", .mostRestrictive) { builtIn.guidedAccess.unlockKeys == nil },
    BuiltInKey("control.socket", .notARestriction) { builtIn.control.socketPath == "/run/carrel/control.sock" },
    BuiltInKey("control.group", .mostRestrictive) { builtIn.control.group == nil },
    BuiltInKey("providers.network", .notMostRestrictive) { builtIn.providers.network == false },
    BuiltInKey("providers.media", .notMostRestrictive) { builtIn.providers.media == false },
    // nil: $XDG_RUNTIME_DIR/carrel, resolved when Carrel starts.
    BuiltInKey("providers.state_directory", .notARestriction) { builtIn.providers.stateDirectory == nil },
    BuiltInKey("providers.verify_interval_ms", .notARestriction) { builtIn.providers.verifyInterval == .milliseconds(1000) },
    BuiltInKey("providers.network_exempt_units", .mostRestrictive) { builtIn.providers.networkExemptUnits.isEmpty },
    BuiltInKey("preconditions.waive", .mostRestrictive) { builtIn.preconditions.waived.isEmpty },
    BuiltInKey("preconditions.virtual_machine", .notMostRestrictive) { builtIn.preconditions.refuseVirtualMachine == false },
    BuiltInKey("audit.path", .notARestriction) { builtIn.audit.path == "/var/log/carrel/audit.jsonl" },
    BuiltInKey("attestation.key", .notARestriction) { builtIn.attestation.keyPath == nil },
    BuiltInKey("metrics.textfile_dir", .notARestriction) { builtIn.metrics.textfileDirectory == nil },
    BuiltInKey("magnifier.zoom_in", .notARestriction) { builtIn.magnifier.zoomIn == KeyCombination(modifiers: [.logo, .alt], keyName: "equal") },
    BuiltInKey("magnifier.zoom_out", .notARestriction) { builtIn.magnifier.zoomOut == KeyCombination(modifiers: [.logo, .alt], keyName: "minus") },
    BuiltInKey("magnifier.zoom_off", .notARestriction) { builtIn.magnifier.zoomOff == KeyCombination(modifiers: [.logo, .alt], keyName: "0") },
    BuiltInKey("magnifier.colour_filter", .notARestriction) { builtIn.magnifier.colourFilter == KeyCombination(modifiers: [.logo, .alt], keyName: "c") },
]

/// The one problem `text` has at `key`, as the reader words it.
private func message(_ text: String, at key: String) -> String? {
    do {
        _ = try PolicyFile.parse(text, file: "p.toml")
        return nil
    } catch {
        return error.problems.first { $0.key == key }?.message
    }
}

/// The comma-separated list that follows `marker` in `message`.
private func list(after marker: String, in message: String?) -> [String] {
    guard let message, let range = message.range(of: marker) else { return [] }
    return message[range.upperBound...].split(separator: ", ").map { String($0) }
}

/// Every key the policy reader accepts, learnt from the reader itself: its
/// refusal of an unknown table names every table, and its refusal of an
/// unknown key in a table names every key of that table. A participant's keys
/// are written `participants.ID.KEY`.
func keysThePolicyReaderAccepts() -> Set<String> {
    let tables = list(after: "a policy has only ", in: message("[not_a_table]\n", at: "not_a_table"))
        .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
    var keys: Set<String> = []
    for table in tables {
        let section = table == "participants" ? "participants.calc" : table
        let accepted = list(after: "may hold ", in: message("[\(section)]\nnot_a_key = 1\n", at: "\(section).not_a_key"))
        let prefix = table == "participants" ? "participants.ID" : table
        keys.formUnion(accepted.map { "\(prefix).\($0)" })
    }
    return keys
}

/// The built-in policy table of docs/POLICY.md: key → the kind its row states.
func documentedKinds() throws -> [String: String] {
    let page = try String(contentsOfFile: repository.appendingPathComponent("docs/POLICY.md").path, encoding: .utf8)
    guard let start = page.range(of: "\n## The built-in policy\n") else { return [:] }
    let section = page[start.upperBound...].components(separatedBy: "\n## ").first ?? ""
    var kinds: [String: String] = [:]
    for line in section.split(separator: "\n") where line.hasPrefix("| `") {
        let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard cells.count >= 4 else { continue }
        kinds[cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[3]
    }
    return kinds
}

@Suite("The built-in policy, key by key")
struct BuiltInPolicyTests {
    @Test("each key's built-in value is the one documented", arguments: builtInKeys)
    func valueIsPinned(entry: BuiltInKey) throws {
        #expect(try entry.holds(), "the built-in \(entry.key) is not the value docs/POLICY.md documents")
    }

    @Test("a file with no keys is the built-in policy the table describes")
    func emptyFileIsBuiltIn() throws {
        #expect(try PolicyFile.parse("", file: "p.toml") == Policy.builtIn)
    }

    @Test("the table decides every key the policy reader accepts, and no other")
    func tableCoversEveryKey() {
        let accepted = keysThePolicyReaderAccepts()
        let pinned = Set(builtInKeys.map(\.key))
        #expect(accepted.count > 20, "could not learn the reader's keys from its messages: \(accepted.sorted())")
        #expect(pinned.count == builtInKeys.count, "a key is pinned twice")
        #expect(accepted.subtracting(pinned).isEmpty,
                "keys with no decided built-in value: \(accepted.subtracting(pinned).sorted()); add each to builtInKeys and to docs/POLICY.md")
        #expect(pinned.subtracting(accepted).isEmpty,
                "pinned keys the reader does not accept: \(pinned.subtracting(accepted).sorted())")
    }

    @Test("docs/POLICY.md states the same kind for every key")
    func documentationAgrees() throws {
        let documented = try documentedKinds()
        let pinned = Dictionary(uniqueKeysWithValues: builtInKeys.map { ($0.key, $0.kind.rawValue) })
        let disagreeing = Set(documented.keys).union(pinned.keys).sorted().filter { documented[$0] != pinned[$0] }
            .map { "\($0): documented \(documented[$0] ?? "nothing"), pinned \(pinned[$0] ?? "nothing")" }
        #expect(disagreeing.isEmpty, "docs/POLICY.md and this test disagree on: \(disagreeing)")
    }
}
