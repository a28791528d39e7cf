import CarrelCore
import Testing

@Suite("Policy reload")
struct PolicyReloadTests {
    @Test("the same file changes nothing")
    func unchanged() {
        let reload = PolicyReload(running: .builtIn, file: .builtIn)
        #expect(reload.policy == .builtIn && reload.applied.isEmpty && reload.needRestart.isEmpty)
        #expect(reload.summary == "nothing changed that applies now")
    }

    @Test("time limits, app lock, Guided Access, the emergency key and preconditions apply; the rest waits for a restart and keeps its running value")
    func split() {
        var file = Policy.builtIn
        file.session.maximumTimeLimit = 120
        file.appLock.allowedExecutables = ["/usr/bin/exam"]
        file.guidedAccess.passcodeHash = "pbkdf2-sha256$600000$x$y"
        file.emergencyBinding = KeyCombination(modifiers: [.ctrl, .alt], keyName: "E")
        file.capture = CapturePolicy(enabledOutsideSessions: true, roles: [.app])
        file.kiosk.enabled = true
        file.control.socketPath = "/run/other.sock"
        file.providers.network = true
        file.outputs.allowHotplugDuringSession = true
        file.preconditions.refuseVirtualMachine = true
        file.audit.path = "/srv/audit.jsonl"
        file.attestation.keyPath = "/srv/attestation.key"
        let reload = PolicyReload(running: .builtIn, file: file)
        #expect(reload.applied == ["app_lock", "assessment", "emergency", "guided_access", "preconditions"])
        #expect(reload.needRestart == ["attestation", "audit", "capture", "control", "kiosk", "outputs", "providers"])
        #expect(reload.policy.attestation.keyPath == nil)
        #expect(reload.policy.preconditions == file.preconditions && reload.policy.audit == Policy.builtIn.audit)
        #expect(reload.policy.session.maximumTimeLimit == 120 && reload.policy.appLock == file.appLock)
        #expect(reload.policy.guidedAccess == file.guidedAccess && reload.policy.emergencyBinding == file.emergencyBinding)
        #expect(reload.policy.capture == Policy.builtIn.capture && reload.policy.kiosk == Policy.builtIn.kiosk)
        #expect(reload.policy.control == Policy.builtIn.control && reload.policy.providers == Policy.builtIn.providers)
        #expect(reload.policy.outputs == Policy.builtIn.outputs)
    }

    @Test("the magnifier's keys apply at once: the Desk takes them with the reloaded policy")
    func magnifierKeys() {
        var file = Policy.builtIn
        file.magnifier.zoomIn = KeyCombination(modifiers: [.ctrl, .alt], keyName: "plus")
        let reload = PolicyReload(running: .builtIn, file: file)
        #expect(reload.applied == ["magnifier"])
        #expect(reload.needRestart.isEmpty)
        #expect(reload.policy.magnifier == file.magnifier)
        var desk = Desk(Desk.Setup(policy: .builtIn))
        let keys = MagnifierKeys([.zoomIn: EmergencyBinding(modifiers: [.ctrl, .alt], keysym: 0x2b)])
        desk.adopt(reload.policy, emergency: nil, unlockKeys: nil, magnifierKeys: keys)
        #expect(desk.magnifierKeys == keys && desk.policy.magnifier == file.magnifier)
    }

    @Test("the input method needs a restart (its globals and engine are set up at start) and keeps its running value")
    func inputMethod() {
        var file = Policy.builtIn
        file.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"], engines: ["hangul"])
        let reload = PolicyReload(running: .builtIn, file: file)
        #expect(reload.needRestart == ["input_method"] && reload.applied.isEmpty)
        #expect(reload.policy.inputMethod == nil)
    }

    @Test("who may begin sessions needs a restart (the global is created at start); the time limits beside it still apply")
    func roles() {
        var file = Policy.builtIn
        file.session.entitledRoles = [.app, .participant]
        file.session.defaultTimeLimit = 600
        let reload = PolicyReload(running: .builtIn, file: file)
        #expect(reload.needRestart == ["assessment.roles"] && reload.applied == ["assessment"])
        #expect(reload.policy.session.entitledRoles == Policy.builtIn.session.entitledRoles)
        #expect(reload.policy.session.defaultTimeLimit == 600)
    }
}

@Suite("Policy reload of [metrics]")
struct MetricsPolicyReloadTests {
    @Test("a new metrics directory waits for a restart and the running one stays")
    func metricsNeedRestart() {
        var file = Policy.builtIn
        file.metrics.textfileDirectory = "/var/lib/prometheus/node-exporter"
        let reload = PolicyReload(running: .builtIn, file: file)
        #expect(reload.needRestart == ["metrics"])
        #expect(reload.policy.metrics.textfileDirectory == nil)
    }
}
