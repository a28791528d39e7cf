import CarrelCore
@testable import CarrelPolicyFile
import Testing

/// Every problem `text` has, or none if it parses.
func problems(_ text: String, file: String = "p.toml") -> [PolicyProblem] {
    do {
        _ = try PolicyFile.parse(text, file: file)
        return []
    } catch {
        return error.problems
    }
}

/// One invalid value: the file, the key and line the problem must name, and
/// words the message must contain (what was wrong and what is allowed).
struct Invalid: CustomTestStringConvertible, Sendable {
    let toml: String
    let key: String
    let line: Int
    let says: [String]
    init(_ toml: String, _ key: String, line: Int, _ says: String...) {
        self.toml = toml
        self.key = key
        self.line = line
        self.says = says
    }
    var testDescription: String { "\(key): \(toml.split(separator: "\n").last ?? "")" }
}

let hash = "pbkdf2-sha256$600000$yWtgz4IaRFr3zawtgWrsyg==$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc="

let invalidValues: [Invalid] = [
    // [assessment]
    Invalid("[assessment]\nroles = [\"untrusted\"]", "assessment.roles", line: 2, "\"untrusted\" is not allowed", "allowed: app, participant"),
    Invalid("[assessment]\nroles = [\"app\", \"admin\"]", "assessment.roles", line: 2, "unknown role \"admin\"", "allowed: app, participant"),
    Invalid("[assessment]\nroles = \"app\"", "assessment.roles", line: 2, "must be an array of strings", "got \"app\""),
    Invalid("[assessment]\nroles = [1]", "assessment.roles", line: 2, "item 1 must be a string", "got 1"),
    Invalid("[assessment]\ndefault_time_limit_minutes = 0", "assessment.default_time_limit_minutes", line: 2, "must be an integer from 1 to 1440, got 0"),
    Invalid("[assessment]\ndefault_time_limit_minutes = \"five\"", "assessment.default_time_limit_minutes", line: 2, "must be an integer from 1 to 1440, got \"five\""),
    Invalid("[assessment]\nmaximum_time_limit_minutes = 1441", "assessment.maximum_time_limit_minutes", line: 2, "from 1 to 1440, got 1441"),
    Invalid("[assessment]\nmaximum_time_limit_minutes = 1.5", "assessment.maximum_time_limit_minutes", line: 2, "got 1.5"),
    Invalid("[assessment]\ndefault_time_limit_minutes = 120\nmaximum_time_limit_minutes = 60", "assessment.default_time_limit_minutes", line: 2, "must not exceed maximum_time_limit_minutes (60), got 120"),
    Invalid("[assessment]\ndefault_time_limit_minutes = 600", "assessment.default_time_limit_minutes", line: 2, "(480 by default), got 600"),
    Invalid("[assessment]\nmaximum = 60", "assessment.maximum", line: 2, "unknown key", "maximum_time_limit_minutes"),
    // [participants.ID]
    Invalid("[participants.Calc]\ncommand = [\"/usr/bin/galculator\"]", "participants.Calc", line: 1, "participant id must be 1 to 32 characters of a-z, 0-9, _ and -", "got \"Calc\""),
    Invalid("[participants.\"two words\"]\ncommand = [\"/bin/x\"]", "participants.\"two words\"", line: 1, "got \"two words\""),
    Invalid("[participants.\(String(repeating: "a", count: 33))]\ncommand = [\"/bin/x\"]", "participants.\(String(repeating: "a", count: 33))", line: 1, "1 to 32"),
    Invalid("# calculator\n[participants.calc]\nnetwork = true", "participants.calc.command", line: 2, "is required", "absolute path"),
    Invalid("[participants.calc]\ncommand = []", "participants.calc.command", line: 2, "must not be empty"),
    Invalid("[participants.calc]\ncommand = [\"galculator\"]", "participants.calc.command", line: 2, "must be an absolute path", "got \"galculator\""),
    Invalid("[participants.calc]\ncommand = \"/usr/bin/galculator\"", "participants.calc.command", line: 2, "must be an array of strings"),
    Invalid("[participants.calc]\ncommand = [\"/bin/x\"]\nnetwork = \"yes\"", "participants.calc.network", line: 3, "must be true or false, got \"yes\""),
    Invalid("[participants.calc]\ncommand = [\"/bin/x\"]\nnetwrok = true", "participants.calc.netwrok", line: 3, "unknown key", "command, network"),
    Invalid("[participants.calc]\ncommand = [\"/bin/x\"]\non_exit = \"restart\"", "participants.calc.on_exit", line: 3, "must be \"relaunch\" or \"interrupt\"", "got \"restart\""),
    Invalid("[participants.calc]\ncommand = [\"/bin/x\"]\non_exit = true", "participants.calc.on_exit", line: 3, "must be a string"),
    Invalid("participants = 5", "participants", line: 1, "must be a table", "got 5"),
    Invalid("[participants]\ncalc = \"/bin/x\"", "participants.calc", line: 2, "must be a table ([participants.calc])"),
    // [input_method]
    Invalid("\n[input_method]\n", "input_method.command", line: 2, "is required"),
    Invalid("[input_method]\ncommand = [\"fcitx5\"]", "input_method.command", line: 2, "absolute path"),
    Invalid("[input_method]\ncommand = [\"/usr/bin/fcitx5\"]\nengines = []", "input_method.engines", line: 3, "at least one engine"),
    Invalid("[input_method]\ncommand = [\"/usr/bin/fcitx5\"]\nengines = [\"mozc\", \"mo zc\"]", "input_method.engines", line: 3, "item 2"),
    Invalid("[input_method]\ncommand = [\"/usr/bin/fcitx5\"]\nengines = [\"mozc\", \"mozc\"]", "input_method.engines", line: 3, "twice"),
    // [capture]
    Invalid("[capture]\nenabled_outside_sessions = true\nroles = []", "capture.roles", line: 3, "needs roles"),
    Invalid("[capture]\nenabled_outside_sessions = true", "capture.enabled_outside_sessions", line: 2, "needs roles"),
    Invalid("[capture]\nenabled_outside_sessions = false\nroles = [\"app\"]", "capture.roles", line: 3, "enabled_outside_sessions is false"),
    Invalid("[capture]\nenabled_outside_sessions = true\nroles = [\"untrusted\"]", "capture.roles", line: 3, "\"untrusted\" is not allowed", "never reaches untrusted"),
    Invalid("[capture]\nenabled_outside_sessions = 1", "capture.enabled_outside_sessions", line: 2, "must be true or false, got 1"),
    // [emergency]
    Invalid("[emergency]\nbinding = \"Ctrl+Q\"", "emergency.binding", line: 2, "at least 2 modifiers", "got \"Ctrl+Q\""),
    Invalid("[emergency]\nbinding = \"Ctrl+Hyper+Q\"", "emergency.binding", line: 2, "unknown modifier \"Hyper\"", "Ctrl, Alt, Shift and Logo"),
    Invalid("[emergency]\nbinding = \"Ctrl+Alt\"", "emergency.binding", line: 2, "names no key"),
    Invalid("[emergency]\nbinding = \"Ctrl++Alt+Q\"", "emergency.binding", line: 2, "empty part"),
    Invalid("[emergency]\nbinding = \"Ctrl+ctrl+Alt+Q\"", "emergency.binding", line: 2, "repeats the modifier"),
    Invalid("[emergency]\nbinding = \"Ctrl+Alt+Esc ape\"", "emergency.binding", line: 2, "not an xkb keysym name"),
    Invalid("[emergency]\nbinding = 27", "emergency.binding", line: 2, "must be a string", "got 27"),
    // [outputs]
    Invalid("[outputs]\ncurtain_colour = \"black\"", "outputs.curtain_colour", line: 2, "#RRGGBB", "got \"black\""),
    Invalid("[outputs]\ncurtain_colour = \"#12345\"", "outputs.curtain_colour", line: 2, "six hex digits"),
    Invalid("[outputs]\ncurtain_colour = \"#GG0000\"", "outputs.curtain_colour", line: 2, "six hex digits"),
    Invalid("[outputs]\ncurtain_color = \"#000000\"", "outputs.curtain_color", line: 2, "unknown key", "curtain_colour"),
    Invalid("[outputs]\nallow_hotplug_during_session = \"no\"", "outputs.allow_hotplug_during_session", line: 2, "true or false"),
    // [kiosk]
    Invalid("[kiosk]\nmaximum_relaunches = \"five\"", "kiosk.maximum_relaunches", line: 2, "must be an integer from 0 to 100, got \"five\""),
    Invalid("[kiosk]\nmaximum_relaunches = 101", "kiosk.maximum_relaunches", line: 2, "from 0 to 100, got 101"),
    Invalid("[kiosk]\nmaximum_relaunches = -1", "kiosk.maximum_relaunches", line: 2, "got -1"),
    Invalid("[kiosk]\ninitial_backoff_ms = 5", "kiosk.initial_backoff_ms", line: 2, "from 10 to 60000, got 5"),
    Invalid("[kiosk]\nmaximum_backoff_ms = 600001", "kiosk.maximum_backoff_ms", line: 2, "from 10 to 600000"),
    Invalid("[kiosk]\ninitial_backoff_ms = 500\nmaximum_backoff_ms = 400", "kiosk.maximum_backoff_ms", line: 3, "at least initial_backoff_ms (500), got 400"),
    Invalid("[kiosk]\ninitial_backoff_ms = 20000", "kiosk.initial_backoff_ms", line: 2, "must not exceed maximum_backoff_ms (10000 by default)"),
    Invalid("[kiosk]\nstability_window_ms = 999", "kiosk.stability_window_ms", line: 2, "from 1000 to 3600000, got 999"),
    Invalid("[kiosk]\nenabled = \"true\"", "kiosk.enabled", line: 2, "true or false, got \"true\""),
    Invalid("[kiosk]\nenable = true", "kiosk.enable", line: 2, "unknown key", "enabled, maximum_relaunches"),
    Invalid("kiosk = 5", "kiosk", line: 1, "must be a table ([kiosk]), got 5"),
    // [app_lock]
    Invalid("[app_lock]\nallowed_executables = [\"/usr/bin/exam\", \"exam-browser\"]", "app_lock.allowed_executables", line: 2, "item 2 must be the absolute path of an executable", "got \"exam-browser\""),
    Invalid("[app_lock]\nallowed_executables = [\"/usr/bin/../bin/exam\"]", "app_lock.allowed_executables", line: 2, "item 1", "no . or .. parts"),
    Invalid("[app_lock]\nallowed_executables = [\"/usr/bin/\"]", "app_lock.allowed_executables", line: 2, "no trailing /"),
    Invalid("[app_lock]\nallowed_executables = [\"/\"]", "app_lock.allowed_executables", line: 2, "got \"/\""),
    Invalid("[app_lock]\nallowed_executables = \"/usr/bin/exam\"", "app_lock.allowed_executables", line: 2, "array of strings"),
    Invalid("[app_lock]\nallowed_app_ids = [\"org.example.Exam\"]", "app_lock.allowed_app_ids", line: 2, "unknown key", "allowed_executables"),
    Invalid("[app_lock]\nbanner_seconds = 31", "app_lock.banner_seconds", line: 2, "from 0 to 30, got 31"),
    Invalid("[app_lock]\nrequire_confirmation = 0", "app_lock.require_confirmation", line: 2, "true or false, got 0"),
    // [guided_access]
    Invalid("[guided_access]\npasscode_hash = \"4711\"", "guided_access.passcode_hash", line: 2, "4 fields", "carrel hash-passcode"),
    Invalid("[guided_access]\npasscode_hash = \"md5$1$2$3\"", "guided_access.passcode_hash", line: 2, "pbkdf2-sha256", "got \"md5\""),
    Invalid("[guided_access]\npasscode_hash = \"pbkdf2-sha256$1000$yWtgz4IaRFr3zawtgWrsyg==$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=\"", "guided_access.passcode_hash", line: 2, "iteration count from 210000", "got \"1000\""),
    Invalid("[guided_access]\npasscode_hash = \"pbkdf2-sha256$600000$!!$tf9Kp+5sO1t2GblekHc+4BumZG4zsSUepnvAyWXbhvc=\"", "guided_access.passcode_hash", line: 2, "salt"),
    Invalid("[guided_access]\npasscode_hash = \"pbkdf2-sha256$600000$yWtgz4IaRFr3zawtgWrsyg==$AAAA\"", "guided_access.passcode_hash", line: 2, "32-byte hash"),
    Invalid("[guided_access]\npasscode_hash = 4711", "guided_access.passcode_hash", line: 2, "must be a string", "got 4711"),
    Invalid("[guided_access]\nunlock_keys = \"Ctrl+Alt+Shift+U\"", "guided_access.unlock_keys", line: 2, "needs passcode_hash"),
    Invalid("[emergency]\nbinding = \"Ctrl+Alt+Shift+U\"\n[guided_access]\npasscode_hash = \"\(hash)\"\nunlock_keys = \"shift+alt+ctrl+u\"", "guided_access.unlock_keys", line: 5, "same combination as emergency.binding"),
    Invalid("[guided_access]\npasscode_hash = \"\(hash)\"\nunlock_keys = \"U\"", "guided_access.unlock_keys", line: 3, "at least 2 modifiers"),
    Invalid("[magnifier]\nzoom_out = \"Logo+Alt+equal\"", "magnifier.zoom_out", line: 2, "same combination as magnifier.zoom_in"),
    Invalid("[magnifier]\nzoom_in = \"Alt+equal\"", "magnifier.zoom_in", line: 2, "at least 2 modifiers"),
    Invalid("[emergency]\nbinding = \"Ctrl+Alt+Shift+Escape\"\n[magnifier]\nzoom_off = \"shift+alt+ctrl+escape\"", "magnifier.zoom_off", line: 4, "same combination as emergency.binding"),
    Invalid("[magnifier]\npan = \"Logo+Alt+p\"", "magnifier.pan", line: 2, "unknown"),
    Invalid("[guided_access]\npasscode_hash = \"pbkdf2-sha256$210000$MDEyMzQ1Njc4OWFiY2RlZg==$Q3os0h/jCZv6Foj249mDwZUfUCyemDVq02lvi9RWuBA=\"\nunlock_keys = \"Logo+Alt+u\"\n[magnifier]\ncolour_filter = \"alt+logo+U\"",
            "magnifier.colour_filter", line: 5, "same combination as guided_access.unlock_keys"),
    // [providers]
    Invalid("[providers]\nnetwork = \"yes\"", "providers.network", line: 2, "true or false"),
    Invalid("[providers]\nmedia = 1", "providers.media", line: 2, "true or false, got 1"),
    Invalid("[providers]\nstate_directory = \"run/carrel\"", "providers.state_directory", line: 2, "absolute path", "got \"run/carrel\""),
    Invalid("[providers]\nverify_interval_ms = 5", "providers.verify_interval_ms", line: 2, "from 10 to 3600000, got 5"),
    Invalid("[providers]\nbluetooth = true", "providers.bluetooth", line: 2, "unknown key", "network, media"),
    Invalid("[providers]\nnetwork_exempt_units = [\"ssh\"]", "providers.network_exempt_units", line: 2, "systemd unit names", "got \"ssh\""),
    Invalid("[providers]\nnetwork_exempt_units = [\"../x.service\"]", "providers.network_exempt_units", line: 2, "e.g. \"ssh.service\""),
    Invalid("[providers]\nnetwork_exempt_units = \"ssh.service\"", "providers.network_exempt_units", line: 2, "array of strings"),
    // [preconditions], [audit]
    Invalid("[preconditions]\nwaive = [\"audit_log\"]", "preconditions.waive", line: 2, "\"audit_log\" cannot be waived", "nested, x_server, seat, policy_file, kernel_keys, virtual_input, input_readers"),
    Invalid("[preconditions]\nwaive = [\"nested\", \"vm\"]", "preconditions.waive", line: 2, "\"vm\" cannot be waived"),
    Invalid("[preconditions]\nwaive = \"nested\"", "preconditions.waive", line: 2, "array of strings"),
    Invalid("[preconditions]\nvirtual_machine = \"deny\"", "preconditions.virtual_machine", line: 2, "\"report\"", "\"refuse\"", "got \"deny\""),
    Invalid("[preconditions]\nseat = false", "preconditions.seat", line: 2, "unknown key", "waive, virtual_machine"),
    Invalid("[audit]\npath = \"audit.jsonl\"", "audit.path", line: 2, "absolute path", "got \"audit.jsonl\""),
    Invalid("[audit]\npath = \"/var/log/carrel/\"", "audit.path", line: 2, "no trailing /"),
    Invalid("[audit]\nenabled = false", "audit.enabled", line: 2, "unknown key", "path"),
    // [control]
    Invalid("[control]\nsocket = \"control.sock\"", "control.socket", line: 2, "must be an absolute path", "got \"control.sock\""),
    Invalid("[control]\nsocket = \"/\(String(repeating: "x", count: 107))\"", "control.socket", line: 2, "at most 107 bytes", "got 108"),
    Invalid("[control]\ngroup = \"Exam Admins\"", "control.group", line: 2, "must be a group name", "got \"Exam Admins\""),
    Invalid("[control]\ngroup = \"1admin\"", "control.group", line: 2, "must be a group name"),
    Invalid("[control]\ngroup = 100", "control.group", line: 2, "must be a string", "got 100"),
    // Unknown tables
    Invalid("[bogus]\nx = 1", "bogus", line: 1, "unknown table", "[assessment]", "[control]"),
    Invalid("[Kiosk]\nenabled = true", "Kiosk", line: 1, "unknown table"),
]

@Suite("Policy file: every key, valid and invalid")
struct PolicyFileTests {
    @Test("an invalid value names the file, its line and key, what was wrong and what is allowed", arguments: invalidValues)
    func invalidValue(_ invalid: Invalid) throws {
        let found = problems(invalid.toml, file: "/etc/carrel/policy.toml")
        try #require(found.count == 1, "expected one problem, got \(found)")
        let problem = found[0]
        #expect(problem.file == "/etc/carrel/policy.toml")
        #expect(problem.key == invalid.key)
        #expect(problem.line == invalid.line, "\(problem)")
        for words in invalid.says {
            #expect(problem.message.contains(words), "\(problem.message) does not say \(words)")
        }
        #expect(problem.description == "/etc/carrel/policy.toml:\(invalid.line): \(invalid.key): \(problem.message)")
    }

    @Test("every key with a valid value maps into the Policy types")
    func everyKeyValid() throws {
        let policy = try PolicyFile.parse("""
            [assessment]
            roles = ["app", "participant"]
            default_time_limit_minutes = 90
            maximum_time_limit_minutes = 240

            [participants.calculator]
            command = ["/usr/bin/galculator", "--mode", "basic"]
            network = false

            [participants.web-dict_2]
            command = ["/usr/bin/dict"]
            network = true

            [input_method]
            command = ["/usr/bin/fcitx5"]

            [capture]
            enabled_outside_sessions = true
            roles = ["participant"]

            [emergency]
            binding = "ctrl+ALT+Shift+Escape"

            [outputs]
            allow_hotplug_during_session = true
            curtain_colour = "#1a2B3c"

            [kiosk]
            enabled = true
            maximum_relaunches = 0
            initial_backoff_ms = 100
            maximum_backoff_ms = 100
            stability_window_ms = 5000

            [app_lock]
            allowed_executables = ["/usr/bin/exam-browser", "/opt/quiz/bin/quiz"]
            require_confirmation = true
            banner_seconds = 7

            [guided_access]
            passcode_hash = "\(hash)"
            unlock_keys = "Logo+Shift+U"

            [control]
            socket = "/run/exam/ctl.sock"
            group = "examadmin"

            [providers]
            network = true
            media = true
            state_directory = "/run/exam/providers"
            verify_interval_ms = 250
            network_exempt_units = ["ssh.service", "ifup@*.service"]

            [preconditions]
            waive = ["nested", "seat"]
            virtual_machine = "refuse"

            [audit]
            path = "/srv/exam/audit.jsonl"

            [magnifier]
            zoom_in = "Ctrl+Alt+plus"
            colour_filter = "Logo+Shift+I"
            """, file: "p.toml")
        #expect(policy.session.entitledRoles == [.app, .participant])
        #expect(policy.session.defaultTimeLimit == UInt32(90 * 60), "seconds")
        #expect(policy.session.maximumTimeLimit == UInt32(240 * 60))
        #expect(policy.session.knownParticipants == ["calculator", "web-dict_2"])
        #expect(policy.participants["calculator"] == ParticipantPolicy(command: ["/usr/bin/galculator", "--mode", "basic"]))
        #expect(policy.participants["web-dict_2"] == ParticipantPolicy(command: ["/usr/bin/dict"], network: true))
        #expect(policy.inputMethod == InputMethodPolicy(command: ["/usr/bin/fcitx5"]))
        #expect(policy.capture == CapturePolicy(enabledOutsideSessions: true, roles: [.participant]))
        #expect(policy.emergencyBinding == KeyCombination(modifiers: [.ctrl, .alt, .shift], keyName: "Escape"))
        #expect(policy.outputs == OutputPolicy(allowHotplugDuringSession: true, curtainColour: 0x1A2B3C))
        #expect(policy.kiosk == KioskPolicy(enabled: true, maximumRelaunches: 0, initialBackoff: .milliseconds(100),
                                            maximumBackoff: .milliseconds(100), stabilityWindow: .seconds(5)))
        #expect(policy.appLock == AppLockPolicy(allowedExecutables: ["/usr/bin/exam-browser", "/opt/quiz/bin/quiz"],
                                                requireConfirmation: true, bannerDuration: .seconds(7)))
        #expect(policy.guidedAccess == GuidedAccessPolicy(passcodeHash: hash,
                                                          unlockKeys: KeyCombination(modifiers: [.logo, .shift], keyName: "U")))
        #expect(policy.control == ControlPolicy(socketPath: "/run/exam/ctl.sock", group: "examadmin"))
        #expect(policy.magnifier == MagnifierPolicy(zoomIn: KeyCombination(modifiers: [.ctrl, .alt], keyName: "plus"),
                                                    colourFilter: KeyCombination(modifiers: [.logo, .shift], keyName: "I")))
        var providers = ProvidersPolicy(network: true, media: true, stateDirectory: "/run/exam/providers",
                                        verifyInterval: .milliseconds(250))
        providers.networkExemptUnits = ["ssh.service", "ifup@*.service"]
        #expect(policy.providers == providers)
        #expect(policy.preconditions == PreconditionPolicy(waived: [.nested, .seat], refuseVirtualMachine: true))
        #expect(policy.audit == AuditPolicy(path: "/srv/exam/audit.jsonl"))
    }

    @Test("the edges of every range are allowed")
    func rangeEdges() throws {
        for (minutes, relaunches, initial, maximum, banner) in [(1, 0, 10, 10, 0), (1440, 100, 60_000, 600_000, 30)] {
            let policy = try PolicyFile.parse("""
                [assessment]
                default_time_limit_minutes = \(minutes)
                maximum_time_limit_minutes = \(minutes)
                [kiosk]
                maximum_relaunches = \(relaunches)
                initial_backoff_ms = \(initial)
                maximum_backoff_ms = \(maximum)
                [app_lock]
                banner_seconds = \(banner)
                """, file: "p.toml")
            #expect(policy.session.maximumTimeLimit == UInt32(minutes * 60))
            #expect(policy.kiosk.maximumRelaunches == relaunches)
            #expect(policy.kiosk.maximumBackoff == .milliseconds(maximum))
            #expect(policy.appLock.bannerDuration == .seconds(banner))
        }
    }

    @Test("an empty roles list entitles nobody; a default alone stays under the eight-hour maximum")
    func emptyRolesAndLoneDefault() throws {
        let policy = try PolicyFile.parse("[assessment]\nroles = []\ndefault_time_limit_minutes = 480\n", file: "p.toml")
        #expect(policy.session.entitledRoles.isEmpty)
        #expect(policy.session.defaultTimeLimit == UInt32(480 * 60))
        #expect(policy.session.maximumTimeLimit == nil)
    }

    @Test("a file with no keys is the built-in policy")
    func builtInDefault() throws {
        #expect(try PolicyFile.parse("", file: "p.toml") == Policy.builtIn)
        #expect(try PolicyFile.parse("# nothing decided here\n\n[kiosk]\n[capture]\n", file: "p.toml") == Policy.builtIn)
        let builtIn = Policy.builtIn
        #expect(builtIn.session.entitledRoles == [.app])
        #expect(builtIn.session.knownParticipants.isEmpty && builtIn.participants.isEmpty)
        #expect(builtIn.inputMethod == nil)
        #expect(!builtIn.capture.enabledOutsideSessions && builtIn.capture.roles.isEmpty)
        #expect(builtIn.emergencyBinding == nil)
        #expect(!builtIn.outputs.allowHotplugDuringSession)
        #expect(!builtIn.kiosk.enabled)
        #expect(builtIn.appLock.allowedExecutables.isEmpty && builtIn.appLock.bannerDuration == .zero)
        #expect(builtIn.guidedAccess.passcodeHash == nil && builtIn.guidedAccess.unlockKeys == nil)
        #expect(builtIn.control.group == nil && builtIn.control.socketPath == "/run/carrel/control.sock")
        #expect(builtIn.preconditions.waived.isEmpty && !builtIn.preconditions.refuseVirtualMachine)
        #expect(builtIn.audit.path == "/var/log/carrel/audit.jsonl")
    }

    @Test("every problem is reported at once, in file order, each on its line")
    func multipleProblems() {
        let found = problems("""
            [kiosk]
            maximum_relaunches = "five"
            enable = true

            [assessment]
            roles = ["untrusted"]
            [typo]
            [control]
            socket = "relative"
            """)
        #expect(found.map(\.key) == ["kiosk.maximum_relaunches", "kiosk.enable", "assessment.roles", "typo", "control.socket"])
        #expect(found.map(\.line) == [2, 3, 6, 7, 9])
        let error = PolicyFileError(problems: found)
        #expect(error.description.split(separator: "\n").count == 5, "one problem a line")
    }

    @Test("a bad value leaves nothing half-applied: the whole file is refused")
    func nothingHalfApplied() {
        #expect(throws: PolicyFileError.self) {
            try PolicyFile.parse("[kiosk]\nenabled = true\nmaximum_relaunches = 1000\n", file: "p.toml")
        }
    }

    @Test("a TOML syntax error names file, line and column")
    func syntaxError() throws {
        let found = problems("[kiosk]\nenabled = true\n[outputs\n", file: "site.toml")
        try #require(found.count == 1)
        #expect(found[0].line == 3)
        #expect(found[0].column != nil)
        #expect(found[0].key == "TOML syntax")
        #expect(found[0].description.hasPrefix("site.toml:3:\(found[0].column!): TOML syntax: "))
        let duplicate = problems("[kiosk]\nenabled = true\nenabled = false\n")
        #expect(duplicate.count == 1 && duplicate[0].line == 3, "\(duplicate)")
        let badValue = problems("[kiosk]\nenabled = yes\n")
        #expect(badValue.count == 1 && badValue[0].line == 2, "\(badValue)")
    }

    @Test("a NUL byte is refused, not silently cut off")
    func nulByte() {
        let found = problems("[kiosk]\nenabled = false\0\n[bogus]\n")
        #expect(found.count == 1 && found[0].line == 2 && found[0].message.contains("NUL"), "\(found)")
    }

    @Test("lines are found for dotted, quoted and inline keys, and past multi-line strings")
    func lineLookup() {
        #expect(problems("# top\nkiosk.maximum_relaunches = \"x\"\n").map(\.line) == [2])
        #expect(problems("\"kiosk\" . 'maximum_relaunches' = \"x\"\n").map(\.line) == [1])
        #expect(problems("\n\nkiosk = { enabled = true, maximum_relaunches = 500 }\n").map(\.line) == [3])
        let text = """
            [control]
            socket = \"\"\"
            maximum_relaunches = 1
            [kiosk]
            \"\"\"
            [kiosk]
            maximum_relaunches = 500
            """
        let found = problems(text)
        #expect(found.map(\.key) == ["control.socket", "kiosk.maximum_relaunches"], "\(found)")
        #expect(found.map(\.line) == [2, 7], "\(found)")
        let lines = SourceLines("[a]\nx = [\n  \"y = 1\",\n]\ny = 2\n[b.c]\n")
        #expect(lines.line(of: ["a", "y"]) == 5)
        #expect(lines.line(of: ["b"]) == 6, "a [b.c] header also places b")
        #expect(lines.line(of: ["b", "c", "missing"]) == 6, "an absent key falls back to its table")
        #expect(lines.line(of: ["nowhere"]) == 1)
    }

    @Test("the summary says what the policy decides")
    func summary() throws {
        let summary = Policy.builtIn.summary
        #expect(summary.contains("sessions by app"))
        #expect(summary.contains("480 min at most"))
        #expect(summary.contains("Guided Access off"))
        let nobody = try PolicyFile.parse("[assessment]\nroles = []\n", file: "p.toml").summary
        #expect(nobody.contains("sessions by nobody"))
    }
}

@Suite("[attestation] in the policy")
struct AttestationPolicyFileTests {
    @Test("key names the private key file; no table means no key")
    func key() throws {
        #expect(try PolicyFile.parse("", file: "p.toml").attestation.keyPath == nil)
        let policy = try PolicyFile.parse("[attestation]\nkey = \"/etc/carrel/attestation/attestation.key\"\n", file: "p.toml")
        #expect(policy.attestation.keyPath == "/etc/carrel/attestation/attestation.key")
        #expect(policy.summary.contains("attestation key /etc/carrel/attestation/attestation.key"))
    }

    @Test("a relative path or an unknown key is a problem with its line")
    func problems() {
        for text in ["[attestation]\nkey = \"attestation.key\"\n", "[attestation]\nkey = \"/a/../b\"\n", "[attestation]\npath = \"/k\"\n"] {
            do {
                _ = try PolicyFile.parse(text, file: "p.toml")
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.problems.count == 1 && error.problems[0].key.hasPrefix("attestation."), "\(error.problems)")
            }
        }
    }
}

@Suite("[metrics] in the policy")
struct MetricsPolicyFileTests {
    @Test("textfile_dir names node-exporter's directory; no table means no metrics")
    func directory() throws {
        #expect(try PolicyFile.parse("", file: "p.toml").metrics.textfileDirectory == nil)
        #expect(Policy.builtIn.metrics.textfileDirectory == nil)
        let policy = try PolicyFile.parse("[metrics]\ntextfile_dir = \"/var/lib/prometheus/node-exporter\"\n", file: "p.toml")
        #expect(policy.metrics.textfileDirectory == "/var/lib/prometheus/node-exporter")
        #expect(policy.summary.contains("metrics in /var/lib/prometheus/node-exporter"))
    }

    @Test("a relative path, a trailing slash or an unknown key is a problem with its key, line and an example")
    func problems() {
        let cases = [
            ("[metrics]\ntextfile_dir = \"prom\"\n", "metrics.textfile_dir", "got \"prom\""),
            ("[metrics]\ntextfile_dir = \"/var/lib/prometheus/\"\n", "metrics.textfile_dir", "no trailing /"),
            ("[metrics]\ntextfile_dir = 3\n", "metrics.textfile_dir", "absolute path"),
            ("[metrics]\nlisten = \":9100\"\n", "metrics.listen", "textfile_dir"),
        ]
        for (text, key, says) in cases {
            do {
                _ = try PolicyFile.parse(text, file: "p.toml")
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.problems.count == 1, "\(error.problems)")
                #expect(error.problems.first?.key == key, "\(error.problems)")
                #expect(error.problems.first?.line == 2, "\(error.problems)")
                #expect(error.problems.first.map { "\($0)".contains(says) } == true, "\(error.problems)")
            }
        }
    }
}
