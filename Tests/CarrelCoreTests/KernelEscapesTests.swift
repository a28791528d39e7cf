import CarrelCore
import Testing

@Suite("Kernel escapes and virtual input")
struct KernelEscapesTests {
    static let closed = KernelEscapes.closed

    @Test("the shipped settings leave no way out, and the precondition is met")
    func closedIsMet() {
        #expect(Self.closed.problems.isEmpty)
        var o = PreconditionsTests.clean
        o.kernelEscapes = Self.closed
        #expect(Preconditions.evaluate(o, policy: PreconditionPolicy()).isMet)
    }

    @Test("each escaping SysRq bit alone is a way out; the harmless ones are not",
          arguments: [1, 2, 4, 8, 16, 32, 64, 128, 256])
    func eachSysRqBit(bit: Int) {
        var escapes = Self.closed
        escapes.sysrqMask = bit
        let escaping = [1, 4, 8, 32, 64, 128].contains(bit)
        #expect(escapes.problems.isEmpty == !escaping)
        if escaping { #expect(escapes.problems[0].contains("kernel.sysrq is \(bit)")) }
    }

    @Test("Debian's default mask (438) names keyboard control and reboot")
    func debianDefault() {
        var escapes = Self.closed
        escapes.sysrqMask = 438
        let problem = escapes.problems.joined()
        #expect(problem.contains("keyboard control") && problem.contains("reboot") && problem.contains("remounting"))
        #expect(!problem.contains("every function"))
        #expect(problem.contains("set kernel.sysrq = 0"))
    }

    @Test("sysrq_always_enabled on the command line overrides a closed mask; without SysRq it does not matter")
    func alwaysEnabled() {
        var escapes = Self.closed
        escapes.kernelCommandLine = "BOOT_IMAGE=/vmlinuz root=/dev/vda sysrq_always_enabled quiet"
        #expect(escapes.problems.count == 1 && escapes.problems[0].contains("sysrq_always_enabled"))
        escapes.kernelCommandLine = "root=/dev/vda sysrq_always_enabled=1\n"
        #expect(escapes.problems.count == 1)
        escapes.kernelCommandLine = "root=/dev/vda no_sysrq_always_enabled_here=1"
        #expect(escapes.problems.isEmpty)
        escapes.kernelCommandLine = nil
        #expect(escapes.problems.count == 1 && escapes.problems[0].contains("cannot be read"))
        escapes.sysrqMask = nil  // a kernel without SysRq: nothing to override
        #expect(escapes.problems.isEmpty)
    }

    @Test("an unreadable setting fails closed")
    func unreadable() {
        var escapes = Self.closed
        escapes.sysrqMask = nil
        escapes.sysrqUnreadable = "/proc/sys/kernel/sysrq: Permission denied"
        #expect(escapes.problems.count == 1 && escapes.problems[0].contains("Permission denied"))
        escapes = Self.closed
        escapes.ctrlAltDelHardReboot = nil
        #expect(escapes.problems.count == 1 && escapes.problems[0].contains("kernel.ctrl-alt-del cannot be read"))
    }

    @Test("Ctrl+Alt+Del: the kernel's hard reboot, an unmasked target and an init that is not systemd are each a way out")
    func ctrlAltDel() {
        var escapes = Self.closed
        escapes.ctrlAltDelHardReboot = true
        #expect(escapes.problems.count == 1 && escapes.problems[0].contains("reboots the machine at once"))
        escapes = Self.closed
        escapes.ctrlAltDelTargetMasked = false
        #expect(escapes.problems.count == 1 && escapes.problems[0].contains("systemctl mask ctrl-alt-del.target"))
        escapes = Self.closed
        escapes.initIsSystemd = false
        #expect(escapes.problems.count == 1 && escapes.problems[0].contains("not systemd"))
    }

    @Test("every way out is listed under kernel_keys, which a test machine may waive")
    func listedAndWaivable() {
        var o = PreconditionsTests.clean
        o.kernelEscapes = KernelEscapes(sysrqMask: 438, kernelCommandLine: "", ctrlAltDelHardReboot: true,
                                        initIsSystemd: true, ctrlAltDelTargetMasked: false)
        let report = Preconditions.evaluate(o, policy: PreconditionPolicy())
        #expect(report.unmetKinds == [.kernelKeys])
        #expect(report.failureMessage.contains("kernel.sysrq is 438") && report.failureMessage.contains("systemctl mask"))
        let waived = Preconditions.evaluate(o, policy: PreconditionPolicy(waived: [.kernelKeys]))
        #expect(waived.isMet && waived.notes.contains { $0.hasPrefix("kernel_keys waived") })
        o.kernelEscapes = nil
        #expect(Preconditions.evaluate(o, policy: PreconditionPolicy()).unmetKinds == [.kernelKeys])
    }

    @Test("a virtual input device fails the begin naming it; none is met; an unlistable set fails closed")
    func virtualInput() {
        var o = PreconditionsTests.clean
        o.virtualInputDevices = ["ydotoold virtual device"]
        let report = Preconditions.evaluate(o, policy: PreconditionPolicy())
        #expect(report.unmetKinds == [.virtualInput])
        #expect(report.failureMessage.contains("\"ydotoold virtual device\"") && report.failureMessage.contains("uinput"))
        o.virtualInputDevices = []
        #expect(Preconditions.evaluate(o, policy: PreconditionPolicy()).isMet)
        o.virtualInputDevices = nil
        o.virtualInputUnreadable = "/sys/devices/virtual/input: Permission denied"
        let unreadable = Preconditions.evaluate(o, policy: PreconditionPolicy())
        #expect(unreadable.unmetKinds == [.virtualInput] && unreadable.failureMessage.contains("Permission denied"))
    }
}
