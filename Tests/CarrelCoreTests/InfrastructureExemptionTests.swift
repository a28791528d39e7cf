import CarrelCore
import Testing

@Suite("The seat's own services keep the network")
struct InfrastructureExemptionTests {
    @Test("unit patterns: services, sockets and scopes, with * for a run of characters; nothing that is a path",
          arguments: [("ssh.service", true), ("ifup@*.service", true), ("systemd-journal-upload.service", true),
                      ("prometheus-node-exporter.service", true), ("sshd.socket", true), ("a\\x2db.service", true),
                      ("ssh", false), ("../ssh.service", false), ("system.slice/ssh.service", false),
                      (".service", false), ("ssh service", false), ("ssh.target", false), ("", false)])
    func patterns(pattern: String, valid: Bool) {
        #expect(InfrastructureExemption.isUnitPattern(pattern) == valid)
    }

    @Test("* matches any run of characters, none included; everything else matches itself")
    func globbing() {
        let m = InfrastructureExemption.matches
        #expect(m("ifup@eth0.service", "ifup@*.service") && m("ifup@.service", "ifup@*.service"))
        #expect(!m("ifup@eth0.socket", "ifup@*.service") && !m("xifup@eth0.service", "ifup@*.service"))
        #expect(m("a-b-c.service", "a*c*.service") && !m("a-b.service", "a*c*.service"))
        #expect(m("ssh.service", "ssh.service") && !m("sshd.service", "ssh.service"))
        #expect(m("ab.service", "*b.service") && m("ab.service", "*") && !m("a.service", "*b.service"))
    }

    @Test("only running units a pattern names are let through, as system.slice cgroups, sorted")
    func cgroups() {
        let present = ["ssh.service", "cron.service", "ifup@eth0.service", "ifup@eth1.service",
                       "carrel-kiosk.service", "prometheus-node-exporter.service", "cgroup.procs"]
        let units = ["ssh.service", "ifup@*.service", "prometheus-node-exporter.service", "systemd-resolved.service"]
        #expect(InfrastructureExemption.cgroups(units: units, present: present) == [
            "system.slice/ifup@eth0.service", "system.slice/ifup@eth1.service",
            "system.slice/prometheus-node-exporter.service", "system.slice/ssh.service"])
        #expect(InfrastructureExemption.cgroups(units: [], present: present).isEmpty)
        #expect(InfrastructureExemption.cgroups(units: ["*"], present: present).isEmpty, "* alone names no unit type")
    }

    @Test("the helper lets through one system.slice unit, never Carrel's own subtree")
    func helperRule() {
        let subtree = "system.slice/carrel-kiosk.service"
        let ok = InfrastructureExemption.isInfrastructureCgroup
        #expect(ok("system.slice/ssh.service", subtree))
        #expect(!ok("system.slice/carrel-kiosk.service", subtree))
        #expect(!ok("system.slice/ssh.service/child", subtree) && !ok("user.slice/ssh.service", subtree))
        #expect(!ok("system.slice/*.service", subtree) && !ok("system.slice/../x.service", subtree))
        #expect(!ok("system.slice", subtree))
    }

    @Test("network_apply takes infrastructure cgroups beside session cgroups, and refuses other paths")
    func privilegedRequest() {
        let subtree = "system.slice/carrel-kiosk.service"
        let good = #"{"request":"network_apply","session":2,"exempt":["system.slice/carrel-kiosk.service/carrel-9","system.slice/ssh.service"]}"#
        guard case .success(.networkApply(2, let exempt)) = PrivilegedRequest.parse(Array(good.utf8), subtree: subtree) else {
            Issue.record("refused \(good)")
            return
        }
        #expect(exempt == ["system.slice/carrel-kiosk.service/carrel-9", "system.slice/ssh.service"])
        for bad in ["system.slice/carrel-kiosk.service", "user.slice", "system.slice/ssh.service/x"] {
            let line = #"{"request":"network_apply","session":2,"exempt":["\#(bad)"]}"#
            guard case .failure(let failure) = PrivilegedRequest.parse(Array(line.utf8), subtree: subtree) else {
                Issue.record("accepted \(bad)")
                continue
            }
            #expect(failure.message.contains("system.slice/UNIT.service"))
        }
    }
}
