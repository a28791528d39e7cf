import CarrelCore
import Testing

/// The privileged helper's request vocabulary: what parses, what is refused
/// and with which message, and the replies both ways.
@Suite("Privileged requests")
struct PrivilegedRequestTests {
    let subtree = "system.slice/carrel-kiosk.service"

    func parse(_ text: String) -> Result<PrivilegedRequest, PrivilegedFailure> {
        PrivilegedRequest.parse(Array(text.utf8), subtree: subtree)
    }

    func refusal(_ text: String) -> String? {
        if case .failure(let failure) = parse(text) { return failure.message }
        return nil
    }

    @Test("well-formed requests parse, and each request's line parses back to itself")
    func roundTrip() throws {
        #expect(try parse(#"{"request":"recover"}"#).get() == .recover)
        #expect(try parse(#"{"request":"network_revert"}"#).get() == .networkRevert)
        #expect(try parse(#"{"request":"network_verify"}"#).get() == .networkVerify)
        #expect(try parse(#"{"request":"signal","id":4,"signal":"KILL"}"#).get() == .signal(id: 4, signal: .kill))
        #expect(try parse(#"{"request":"network_apply","session":3,"exempt":["system.slice/carrel-kiosk.service/carrel-812"]}"#).get()
            == .networkApply(session: 3, exempt: ["system.slice/carrel-kiosk.service/carrel-812"]))
        let all: [PrivilegedRequest] = [
            .recover, .networkRevert, .networkVerify, .signal(id: 9, signal: .term),
            .networkApply(session: 1, exempt: ["\(subtree)/carrel-1", "\(subtree)/carrel-1-owner", "\(subtree)/carrel-1-participant-calc_2"]),
            .networkApply(session: 2, exempt: []),
            .spawn(role: .app, argv: ["/usr/bin/carrel-demo-exam", "--title", "a \"quoted\" word"], environment: ["LANG": "C.UTF-8", "X_1": ""],
                   cgroup: "\(subtree)/carrel-77"),
            .spawn(role: .participant, argv: ["calc"], environment: [:], cgroup: "\(subtree)/carrel-77-participant-calc"),
            .spawn(role: .inputMethod, argv: ["/usr/bin/fcitx5"], environment: [:], cgroup: "\(subtree)/carrel-77-input-method",
                   files: [".config/fcitx5/profile": "[Groups/0]\nName=Default\n", ".config/fcitx5/conf/pinyin.conf": "Prediction=False\n"]),
            .spawn(role: .onScreenKeyboard, argv: ["/usr/bin/wvkbd-mobintl"], environment: [:], cgroup: "\(subtree)/carrel-77-keyboard"),
        ]
        for request in all {
            #expect(try parse(request.line).get() == request, "\(request.line)")
        }
    }

    @Test("refused requests say what was wrong", arguments: [
        ("", "not one JSON object"),
        ("[1]", "not one JSON object"),
        (#"{"request":"network_apply","session":1,"exempt":[],"ruleset":"flush ruleset"}"#, "network_apply: unknown key \"ruleset\""),
        (#"{"request":"nft","argv":["flush","ruleset"]}"#, "unknown request \"nft\"; known: network_apply"),
        (#"{"session":1}"#, "no string \"request\""),
        (#"{"request":"network_apply","session":-1,"exempt":[]}"#, "not one JSON object"),
        (#"{"request":"network_apply","session":"1","exempt":[]}"#, "network_apply: \"session\" must be a whole number"),
        (#"{"request":"network_apply","session":1}"#, "network_apply: \"exempt\" must be a list of strings"),
        (#"{"request":"network_apply","session":1,"exempt":["user.slice"]}"#, "\"user.slice\" is neither a session cgroup under system.slice/carrel-kiosk.service"),
        (#"{"request":"network_apply","session":1,"exempt":["system.slice/carrel-kiosk.service/carrel-1/../../x"]}"#, "is neither a session cgroup"),
        (#"{"request":"network_apply","session":1,"exempt":["system.slice/carrel-kiosk.service/carrel-x"]}"#, "is neither a session cgroup"),
        (#"{"request":"network_apply","session":1,"exempt":["system.slice/carrel-kiosk.service/carrel-1-participant-a b"]}"#, "is neither a session cgroup"),
        (#"{"request":"spawn","role":"root","argv":["sh"],"env":{}}"#, "spawn: \"role\" is \"root\"; expected one of app, participant, input_method, on_screen_keyboard"),
        (#"{"request":"spawn","role":"app","argv":["a"],"env":{},"cgroup":"system.slice/carrel-kiosk.service/carrel-1","files":{"x":"y"}}"#, "\"files\" is only for a role with a private home"),
        (#"{"request":"spawn","role":"input_method","argv":["a"],"env":{},"cgroup":"system.slice/carrel-kiosk.service/carrel-1-input-method","files":{"../x":"y"}}"#, "\"../x\" is not a path inside the home"),
        (#"{"request":"spawn","role":"input_method","argv":["a"],"env":{},"cgroup":"system.slice/carrel-kiosk.service/carrel-1-input-method","files":{"/etc/passwd":"y"}}"#, "is not a path inside the home"),
        (#"{"request":"spawn","role":"input_method","argv":["a"],"env":{},"cgroup":"system.slice/carrel-kiosk.service/carrel-1-input-method","files":{"a//b":"y"}}"#, "is not a path inside the home"),
        (#"{"request":"spawn","role":"input_method","argv":["a"],"env":{},"cgroup":"system.slice/carrel-kiosk.service/carrel-1-input-method","files":["a"]}"#, "\"files\" must be an object"),
        (#"{"request":"network_apply","session":1,"exempt":["system.slice/carrel-kiosk.service/carrel-1-input-method"]}"#, "never keeps the network"),
        (#"{"request":"network_apply","session":1,"exempt":["system.slice/carrel-kiosk.service/carrel-1-keyboard"]}"#, "never keeps the network"),
        (#"{"request":"spawn","role":"app","argv":[],"env":{}}"#, "spawn: \"argv\" is empty"),
        (#"{"request":"spawn","role":"app","argv":["a"]}"#, "spawn: \"env\" must be an object of strings"),
        (#"{"request":"spawn","role":"app","argv":["a"],"env":{"LD PRELOAD":"x"}}"#, "is not a variable name"),
        (#"{"request":"spawn","role":"app","argv":["a"],"env":{"1X":"x"}}"#, "is not a variable name"),
        (#"{"request":"spawn","role":"app","argv":["a\u0000b"],"env":{}}"#, "holds a NUL"),
        (#"{"request":"spawn","role":"app","argv":["a"],"env":{},"cgroup":"carrel-1"}"#, "spawn: \"carrel-1\" is not a session cgroup"),
        (#"{"request":"spawn","role":"app","argv":["a"],"env":{}}"#, "spawn: \"cgroup\" is missing"),
        (#"{"request":"spawn","role":"app","argv":["LD_PRELOAD=/tmp/x.so","sh"],"env":{},"cgroup":"system.slice/carrel-kiosk.service/carrel-1"}"#, "holds '='"),
        (#"{"request":"signal","id":1,"signal":"HUP"}"#, "signal: \"signal\" is \"HUP\"; expected one of TERM, KILL"),
        (#"{"request":"signal","signal":"TERM"}"#, "signal: \"id\" must be a whole number"),
        (#"{"request":"recover","force":"yes"}"#, "recover: unknown key \"force\""),
    ])
    func refused(line: String, says: String) {
        let message = refusal(line)
        #expect(message?.contains(says) == true, "\(line) → \(message ?? "accepted")")
    }

    @Test("a line over the limit is refused before it is decoded")
    func tooLong() {
        let line = #"{"request":"recover","x":""# + String(repeating: "a", count: PrivilegedRequest.maximumLineLength) + #""}"#
        #expect(refusal(line) == "request is \(line.utf8.count) bytes; the limit is \(PrivilegedRequest.maximumLineLength)")
    }

    @Test("session cgroup names: the five forms under the subtree, nothing else; the input method's and keyboard's never keep the network")
    func cgroupNames() {
        #expect(SessionCgroupName.isSessionCgroup("a/b/carrel-12", under: "a/b"))
        #expect(SessionCgroupName.isSessionCgroup("carrel-12-owner", under: ""))
        #expect(SessionCgroupName.isSessionCgroup("a/carrel-12-participant-x-1", under: "a"))
        #expect(!SessionCgroupName.isSessionCgroup("a/carrel-12", under: "a/b"))
        #expect(!SessionCgroupName.isSessionCgroup("a/b/carrel-12/x", under: "a/b"))
        #expect(!SessionCgroupName.isSessionCgroup("a/b/carrel-", under: "a/b"))
        #expect(!SessionCgroupName.isSessionCgroup("a/b/carrel-12-other", under: "a/b"))
        #expect(!SessionCgroupName.isSessionCgroup("a/b/carrel-12-participant-", under: "a/b"))
        #expect(SessionCgroupName.isSessionCgroup("a/carrel-12-input-method", under: "a"))
        #expect(SessionCgroupName.isSessionCgroup("a/carrel-12-keyboard", under: "a"))
        #expect(SessionCgroupName.isNetworkless("a/carrel-12-input-method", under: "a"))
        #expect(SessionCgroupName.isNetworkless("a/carrel-12-keyboard", under: "a"))
        #expect(!SessionCgroupName.isNetworkless("a/carrel-12-participant-x-keyboard", under: "a"))
        #expect(!SessionCgroupName.isNetworkless("a/carrel-12", under: "a"))
        #expect(!SessionCgroupName.isSessionCgroup("a/carrel-12-keyboard-2", under: "a"))
        #expect(SessionCgroupName.isSubtree("system.slice/carrel-kiosk.service"))
        #expect(SessionCgroupName.isSubtree(""))
        #expect(!SessionCgroupName.isSubtree("/system.slice"))
        #expect(!SessionCgroupName.isSubtree("a/../b"))
        #expect(!SessionCgroupName.isSubtree("a//b"))
        #expect(!SessionCgroupName.isSubtree("a b"))
    }

    @Test("replies: each form round-trips; anything else is not a reply")
    func replies() {
        let all: [PrivilegedReply] = [.ok(id: nil), .ok(id: 3), .error("nft could not load the ruleset: \"x\""), .exited(id: 3, waitStatus: 256)]
        for reply in all {
            #expect(PrivilegedReply.parse(Array(reply.line.utf8)) == reply, "\(reply.line)")
        }
        #expect(PrivilegedReply.ok(id: 2).line == #"{"id":2,"ok":"yes"}"#)
        #expect(PrivilegedReply.exited(id: 1, waitStatus: 9).line == #"{"event":"exited","id":1,"wait_status":9}"#)
        #expect(PrivilegedReply.exited(id: 1, waitStatus: 9).isAnswer == false)
        for line in [#"{"ok":"no"}"#, #"{"ok":"yes","extra":"x"}"#, #"{"error":"x","ok":"yes"}"#, #"{"event":"exited","id":1}"#, "ok", ""] {
            #expect(PrivilegedReply.parse(Array(line.utf8)) == nil, "\(line)")
        }
    }

    @Test("a spawned program's environment: Carrel's less its sockets and runtime directory, within the limits, and it parses")
    func spawnEnvironment() throws {
        let carrel: [(key: String, value: String)] = [
            ("PATH", "/usr/bin:/bin"), ("LANG", "C.UTF-8"), ("WAYLAND_DISPLAY", "wayland-0"), ("XDG_RUNTIME_DIR", "/run/carrel"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/x"), ("NOTIFY_SOCKET", "/run/systemd/notify"),
            ("BASH_FUNC_f%%", "() { :; }"), ("NUL", "a\u{0}b"), ("LANG", "later"),
        ]
        let environment = SpawnEnvironment.from(carrel)
        #expect(environment == ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
        let many = (0..<1000).map { (key: "V\($0)", value: String(repeating: "x", count: 500)) }
        let bounded = SpawnEnvironment.from(many)
        #expect(bounded.count < 1000 && !bounded.isEmpty)
        #expect(bounded.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } <= SpawnEnvironment.budget)
        let request = PrivilegedRequest.spawn(role: .app, argv: ["/usr/bin/exam"], environment: bounded, cgroup: "system.slice/carrel-kiosk.service/carrel-5")
        #expect(try parse(request.line).get() == request)
    }
}
