/// The ways out of a seat that the kernel and init give the student's own
/// keyboard, past any compositor: Magic SysRq (Alt+SysRq+R hands the keyboard
/// back to the console, +K kills every process on it, +B reboots, …) and
/// Ctrl+Alt+Del. Carrel reads the settings; `problems` decides whether they
/// leave a way out. The shipped files close them (kernel.sysrq = 0, the
/// ctrl-alt-del target masked); this is what refuses a session where they
/// were opened again.
public struct KernelEscapes: Sendable, Equatable {
    /// `/proc/sys/kernel/sysrq`: nil when the kernel has no Magic SysRq.
    public var sysrqMask: Int?
    /// Why the SysRq setting could not be read, if it exists but cannot be.
    public var sysrqUnreadable: String?
    /// `/proc/cmdline` (`sysrq_always_enabled` overrides the mask); nil: unreadable.
    public var kernelCommandLine: String?
    /// `/proc/sys/kernel/ctrl-alt-del`: non-zero makes the kernel reboot at
    /// once on Ctrl+Alt+Del without asking init. nil: unreadable.
    public var ctrlAltDelHardReboot: Bool?
    /// Whether init is systemd (which turns Ctrl+Alt+Del into ctrl-alt-del.target).
    public var initIsSystemd: Bool
    /// Whether ctrl-alt-del.target is masked (a link to /dev/null in /etc or /run).
    public var ctrlAltDelTargetMasked: Bool

    public init(sysrqMask: Int?, sysrqUnreadable: String? = nil, kernelCommandLine: String?,
                ctrlAltDelHardReboot: Bool?, initIsSystemd: Bool, ctrlAltDelTargetMasked: Bool) {
        self.sysrqMask = sysrqMask
        self.sysrqUnreadable = sysrqUnreadable
        self.kernelCommandLine = kernelCommandLine
        self.ctrlAltDelHardReboot = ctrlAltDelHardReboot
        self.initIsSystemd = initIsSystemd
        self.ctrlAltDelTargetMasked = ctrlAltDelTargetMasked
    }

    /// A machine set up as the shipped files set it: no way out.
    public static let closed = KernelEscapes(sysrqMask: 0, kernelCommandLine: "", ctrlAltDelHardReboot: false,
                                             initIsSystemd: true, ctrlAltDelTargetMasked: true)

    /// SysRq functions that are a way out, by their bit in the mask (the
    /// kernel's admin-guide/sysrq): 1 enables every function. What stays
    /// allowed (2 log level, 16 sync, 256 nice real-time tasks) changes
    /// nothing the student sees.
    public static let escapingSysRqBits: [(bit: Int, what: String)] = [
        (1, "every function"),
        (4, "keyboard control (R hands the keyboard back to the console, K kills everything on it)"),
        (8, "debugging dumps (C crashes the kernel)"),
        (32, "remounting read-only (U: no more audit records)"),
        (64, "signalling processes (E, I kill every process, Carrel too)"),
        (128, "reboot and power off (B, O)"),
    ]

    /// The mask `kernel.sysrq` must not overlap.
    public static var escapingSysRqMask: Int { escapingSysRqBits.reduce(0) { $0 | $1.bit } }

    /// Every way out left open, each with what closes it; empty when none.
    public var problems: [String] {
        var found: [String] = []
        if let sysrqUnreadable {
            found.append("the Magic SysRq setting cannot be read (\(sysrqUnreadable)), so Alt+SysRq may leave the seat")
        } else if let mask = sysrqMask {
            let open = Self.escapingSysRqBits.filter { mask & $0.bit != 0 }.map(\.what)
            if !open.isEmpty {
                found.append("kernel.sysrq is \(mask), which lets Alt+SysRq do \(open.joined(separator: "; ")); set kernel.sysrq = 0 (Carrel's sysctl.d file does)")
            }
        }
        if sysrqMask != nil {
            switch kernelCommandLine {
            case nil:
                found.append("/proc/cmdline cannot be read, so sysrq_always_enabled cannot be ruled out")
            case let line?:
                if line.split(whereSeparator: { $0 == " " || $0 == "\n" }).contains(where: { $0 == "sysrq_always_enabled" || $0.hasPrefix("sysrq_always_enabled=") }) {
                    found.append("the kernel was booted with sysrq_always_enabled, which ignores kernel.sysrq; remove it from the boot loader's command line")
                }
            }
        }
        switch ctrlAltDelHardReboot {
        case nil:
            found.append("kernel.ctrl-alt-del cannot be read, so Ctrl+Alt+Del may reboot the machine")
        case true?:
            found.append("kernel.ctrl-alt-del is set, so Ctrl+Alt+Del reboots the machine at once; set it to 0")
        case false?:
            break
        }
        if !initIsSystemd {
            found.append("init is not systemd, so what Ctrl+Alt+Del does cannot be checked")
        } else if !ctrlAltDelTargetMasked {
            found.append("ctrl-alt-del.target is not masked, so Ctrl+Alt+Del reboots the machine; run `systemctl mask ctrl-alt-del.target`")
        }
        return found
    }
}

/// Input devices made by a program rather than hardware (uinput): whoever
/// holds one types and clicks as the student would.
public enum VirtualInput {
    /// The problem with `devices` (the names of the virtual input devices
    /// present), or nil when there are none. nil `devices`: unreadable.
    public static func problem(devices: [String]?, unreadable: String? = nil) -> String? {
        guard let devices else {
            return "the machine's input devices cannot be listed (\(unreadable ?? "unknown reason")), so a virtual one cannot be ruled out"
        }
        guard !devices.isEmpty else { return nil }
        let names = devices.map { $0.debugDescription }.joined(separator: ", ")
        return "\(devices.count) virtual input device(s) made by a program (uinput) exist: \(names); whoever made them can type and click as the student; stop that program"
    }
}
