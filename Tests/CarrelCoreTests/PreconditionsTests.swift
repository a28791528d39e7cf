import CarrelCore
import Testing

@Suite("Preconditions")
struct PreconditionsTests {
    static let safeFile = FileOwnership(path: "/etc/carrel/policy.toml", uid: 0, gid: 0, mode: 0o100644)
    static let safeDir = FileOwnership(path: "/etc/carrel", uid: 0, gid: 0, mode: 0o40755)
    static let clean = EnvironmentObservation(policyFile: safeFile, policyDirectory: safeDir,
                                              virtualMachine: VirtualMachineSignals(signals: [], checked: ["/proc/cpuinfo flags"]))

    @Test("a machine that meets everything passes, and says where it looked for a virtual machine")
    func allMet() {
        let report = Preconditions.evaluate(Self.clean, policy: PreconditionPolicy())
        #expect(report.isMet)
        #expect(report.notes == ["no sign of a virtual machine (checked /proc/cpuinfo flags)"])
    }

    @Test("every unmet precondition is listed, not just the first")
    func everyUnmet() {
        var o = Self.clean
        o.nestedIn = ["an X server (DISPLAY=:99)"]
        o.xServerSockets = ["/tmp/.X11-unix/X99", "@/tmp/.X11-unix/X99"]
        o.seat = .sessions(seat: "seat0", others: ["c2"])
        o.policyFile = FileOwnership(path: "/home/x/policy.toml", uid: 1000, gid: 1000, mode: 0o100666)
        o.auditLogProblem = "cannot write /var/log/carrel/audit.jsonl: No space left on device"
        o.virtualMachine = VirtualMachineSignals(signals: ["the CPU reports the hypervisor flag (/proc/cpuinfo)"], checked: [])
        let report = Preconditions.evaluate(o, policy: PreconditionPolicy(refuseVirtualMachine: true))
        #expect(report.unmetKinds == [.nested, .xServer, .seat, .policyFile, .auditLog, .virtualMachine])
        let message = report.failureMessage
        #expect(message.contains("(6)") && message.contains("DISPLAY=:99") && message.contains("@/tmp/.X11-unix/X99"))
        #expect(message.contains("c2") && message.contains("owned by uid 1000, not root and writable by everyone"))
        #expect(message.contains("No space left") && message.contains("hypervisor flag"))
    }

    @Test("an unreadable seat is unmet (fail closed); waived checks become notes; a VM is only reported by default")
    func seatWaiverAndVM() {
        var o = Self.clean
        o.seat = .unknown("logind is not running")
        o.nestedIn = ["a Wayland compositor (WAYLAND_DISPLAY=wayland-1)"]
        o.virtualMachine = VirtualMachineSignals(signals: ["DMI sys_vendor is \"QEMU\""], checked: ["DMI sys_vendor"])
        #expect(Preconditions.evaluate(o, policy: PreconditionPolicy()).unmetKinds == [.nested, .seat])
        let waived = Preconditions.evaluate(o, policy: PreconditionPolicy(waived: [.nested, .seat]))
        #expect(waived.isMet)
        #expect(waived.notes.count == 3 && waived.notes.contains { $0.hasPrefix("seat waived") })
        #expect(waived.notes.last == "runs in a virtual machine: DMI sys_vendor is \"QEMU\"")
    }

    @Test("the audit log and the VM requirement cannot be waived")
    func notWaivable() {
        var o = Self.clean
        o.auditLogProblem = "read-only file system"
        let all = Set(Precondition.allCases)
        #expect(Preconditions.evaluate(o, policy: PreconditionPolicy(waived: all)).unmetKinds == [.auditLog])
        #expect(!Precondition.waivable.contains(.auditLog) && !Precondition.waivable.contains(.virtualMachine))
    }

    @Test("a privileged helper Carrel was told to use and has not got fails every begin, naming it; not waivable")
    func privilegedHelper() {
        var o = Self.clean
        o.privilegedHelperProblem = "the privileged helper is not reachable at /run/carrel-privileged/privileged.sock (Connection refused)"
        let report = Preconditions.evaluate(o, policy: PreconditionPolicy(waived: Set(Precondition.allCases)))
        #expect(report.unmetKinds == [.privilegedHelper])
        #expect(report.failureMessage.contains("privileged_helper: the privileged helper is not reachable"), "\(report.failureMessage)")
        #expect(!Precondition.waivable.contains(.privilegedHelper))
        #expect(Preconditions.evaluate(Self.clean, policy: PreconditionPolicy()).isMet)
    }

    @Test("policy file: root-owned and not writable by others; group-writable only for root's group; sticky dirs")
    func ownership() {
        #expect(FileOwnership(path: "p", uid: 0, gid: 0, mode: 0o100664).problem == nil)
        #expect(FileOwnership(path: "p", uid: 0, gid: 100, mode: 0o100664).problem?.contains("writable by group 100") == true)
        #expect(FileOwnership(path: "p", uid: 0, gid: 0, mode: 0o100646).problem?.contains("writable by everyone") == true)
        #expect(FileOwnership(path: "/tmp", uid: 0, gid: 0, mode: 0o41777).problem == nil)
        #expect(FileOwnership.unreadable("/etc/carrel/policy.toml", because: "No such file or directory").problem
                == "/etc/carrel/policy.toml cannot be examined: No such file or directory")
        var o = Self.clean
        o.policyDirectory = FileOwnership(path: "/srv/policy", uid: 0, gid: 0, mode: 0o40777)
        let report = Preconditions.evaluate(o, policy: PreconditionPolicy())
        #expect(report.unmetKinds == [.policyFile] && report.failureMessage.contains("/srv/policy is writable by everyone (mode 777)"))
    }

    @Test("virtual machine signals: cpuinfo flag, DMI vendors, /sys/hypervisor; none seen says where it looked")
    func virtualMachine() {
        let cpu = "processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"
        let seen = VirtualMachineSignals.detect(cpuinfo: cpu, dmi: ["sys_vendor": "QEMU\n", "product_name": "Standard PC"], hypervisorType: "xen\n")
        #expect(seen.signals == ["the CPU reports the hypervisor flag (/proc/cpuinfo)", "DMI sys_vendor is \"QEMU\"", "/sys/hypervisor/type is \"xen\""])
        let bare = VirtualMachineSignals.detect(cpuinfo: "flags\t: fpu vme\n", dmi: ["sys_vendor": "Dell Inc."], hypervisorType: nil)
        #expect(bare.signals.isEmpty)
        #expect(bare.summary == "no sign of a virtual machine (checked /proc/cpuinfo flags, DMI sys_vendor)")
        #expect(VirtualMachineSignals.detect(cpuinfo: nil, dmi: [:], hypervisorType: nil).summary.contains("unknown"))
    }

    @Test("X servers: listening path and abstract sockets in /proc/net/unix; connected ones and others ignored")
    func xSockets() {
        let table = """
        Num       RefCount Protocol Flags    Type St Inode Path
        0000000000000000: 00000002 00000000 00010000 0001 01 20001 @/tmp/.X11-unix/X99
        0000000000000000: 00000002 00000000 00010000 0001 01 20002 /tmp/.X11-unix/X99
        0000000000000000: 00000003 00000000 00000000 0001 03 20003 /tmp/.X11-unix/X99
        0000000000000000: 00000002 00000000 00010000 0001 01 20004 /run/user/0/wayland-1
        0000000000000000: 00000002 00000000 00010000 0001 01 20005 /tmp/.X11-unix/Xevil
        0000000000000000: 00000002 00000000 00000000 0002 01 20006
        """
        #expect(Preconditions.xServerSockets(procNetUnix: table) == ["@/tmp/.X11-unix/X99", "/tmp/.X11-unix/X99"])
    }
}
