/// What the environment must be before a session may begin. The
/// compositor observes the machine (`EnvironmentObservation`); Core decides,
/// from the policy's `[preconditions]`, which requirements are unmet, and the
/// session fails with `unsupported_configuration` listing every one of them.
public enum Precondition: String, Sendable, CaseIterable, Hashable, Comparable {
    /// Carrel draws on a display of its own, not in a window of another
    /// compositor or X server (whose other clients it cannot hide or stop).
    case nested
    /// No X server listens where the app could connect to it (outside
    /// Carrel's control: its windows, its clipboard, its input injection).
    case xServer = "x_server"
    /// The seat has no session besides this one (nothing to switch to).
    case seat
    /// The policy file is owned by root and no one else may change it (nor
    /// replace it through its directory).
    case policyFile = "policy_file"
    /// The audit log can be written (evidence of what happens is kept).
    case auditLog = "audit_log"
    /// Not in a virtual machine; informational unless the policy requires it.
    case virtualMachine = "virtual_machine"
    /// With `--privileged-helper`: the helper is connected (nothing that
    /// needs it, the network table or a participant's start, can be done
    /// without it). Cannot be waived.
    case privilegedHelper = "privileged_helper"
    /// The kernel and init leave the student's keyboard no way out of the
    /// seat: no Alt+SysRq escape, no Ctrl+Alt+Del reboot (`KernelEscapes`).
    case kernelKeys = "kernel_keys"
    /// No input device a program made (uinput) exists: nobody types for the student.
    case virtualInput = "virtual_input"
    /// No process besides Carrel and the seat manager holds an input device
    /// open: nobody reads the student's keys past the compositor (`InputReaders`).
    case inputReaders = "input_readers"

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// The ones a policy may waive, for testing and demonstrations only.
    public static let waivable: [Precondition] = [.nested, .xServer, .seat, .policyFile, .kernelKeys, .virtualInput,
                                                      .inputReaders]
}

/// `[preconditions]` in the policy.
public struct PreconditionPolicy: Sendable, Equatable {
    /// Requirements not checked (testing only); never `audit_log` or `virtual_machine`.
    public var waived: Set<Precondition>
    /// Whether running in a virtual machine fails a begin (else it is reported only).
    public var refuseVirtualMachine: Bool

    public init(waived: Set<Precondition> = [], refuseVirtualMachine: Bool = false) {
        self.waived = waived
        self.refuseVirtualMachine = refuseVirtualMachine
    }
}

/// What the compositor saw of the machine when a session was asked for.
public struct EnvironmentObservation: Sendable, Equatable {
    /// Each display Carrel draws on inside another one, described
    /// ("an X server (DISPLAY=:99)"); empty when it has the display to itself.
    public var nestedIn: [String]
    /// Listening X server sockets the app could connect to.
    public var xServerSockets: [String]
    public var seat: SeatObservation
    /// The policy file, or nil when Carrel runs under the built-in policy.
    public var policyFile: FileOwnership?
    /// Its directory (replacing the file needs only a writable directory).
    public var policyDirectory: FileOwnership?
    /// Why the audit log cannot be written, if it cannot.
    public var auditLogProblem: String?
    public var virtualMachine: VirtualMachineSignals
    /// Why the privileged helper Carrel was told to use is not connected;
    /// nil when it is, or when there is none.
    public var privilegedHelperProblem: String?
    /// The kernel's and init's own ways out; nil: not examined (fails closed).
    public var kernelEscapes: KernelEscapes? = .closed
    /// Names of the virtual (uinput) input devices present; nil: could not be listed.
    public var virtualInputDevices: [String]? = []
    /// Why the input devices could not be listed, when they could not.
    public var virtualInputUnreadable: String?
    /// The processes holding input devices open; nil: not all could be
    /// examined (fails closed), `inputDeviceHoldersUnreadable` says why.
    public var inputDeviceHolders: [InputDeviceHolder]? = []
    /// Holders found beyond the ones listed (the privileged helper's answer is bounded).
    public var inputDeviceHoldersOmitted: UInt64 = 0
    public var inputDeviceHoldersUnreadable: String?
    /// Carrel's own pid, which holds the devices the seat manager gave it.
    public var carrelPID: Int32 = 0

    public init(nestedIn: [String] = [], xServerSockets: [String] = [], seat: SeatObservation = .sessions(seat: "seat0", others: []),
                policyFile: FileOwnership? = nil, policyDirectory: FileOwnership? = nil, auditLogProblem: String? = nil,
                virtualMachine: VirtualMachineSignals = VirtualMachineSignals(signals: [], checked: [])) {
        self.nestedIn = nestedIn
        self.xServerSockets = xServerSockets
        self.seat = seat
        self.policyFile = policyFile
        self.policyDirectory = policyDirectory
        self.auditLogProblem = auditLogProblem
        self.virtualMachine = virtualMachine
    }
}

public enum SeatObservation: Sendable, Equatable {
    /// The seat and the sessions on it other than Carrel's own.
    case sessions(seat: String, others: [String])
    /// The sessions could not be read (no logind, for one): why.
    case unknown(String)
}

/// Owner, group and permission bits of a file or directory (from stat).
public struct FileOwnership: Sendable, Equatable {
    public var path: String
    public var uid: UInt32
    public var gid: UInt32
    public var mode: UInt32
    /// Why it could not be examined (gone, no permission), if so.
    public var unreadable: String?

    public init(path: String, uid: UInt32, gid: UInt32, mode: UInt32) {
        self.path = path
        self.uid = uid
        self.gid = gid
        self.mode = mode
    }

    /// A file that could not be examined: nobody can vouch for it.
    public static func unreadable(_ path: String, because reason: String) -> FileOwnership {
        var file = FileOwnership(path: path, uid: .max, gid: .max, mode: 0)
        file.unreadable = reason
        return file
    }

    /// Why someone besides root could change it, or nil: owned by root, not
    /// writable by others, writable by its group only when that is root's.
    /// A sticky directory (such as /tmp) still lets anyone add a file, but not
    /// replace root's: that counts as safe for the file it holds.
    public var problem: String? {
        if let unreadable { return "\(path) cannot be examined: \(unreadable)" }
        var problems: [String] = []
        if uid != 0 { problems.append("owned by uid \(uid), not root") }
        if mode & 0o002 != 0 && mode & 0o1000 == 0 { problems.append("writable by everyone") }
        if mode & 0o020 != 0 && gid != 0 && mode & 0o1000 == 0 { problems.append("writable by group \(gid)") }
        guard !problems.isEmpty else { return nil }
        return "\(path) is \(problems.joined(separator: " and ")) (mode \(String(mode & 0o7777, radix: 8)))"
    }
}

/// Signs of a virtual machine and where Carrel looked.
public struct VirtualMachineSignals: Sendable, Equatable {
    /// What was seen, e.g. "the CPU's hypervisor flag (/proc/cpuinfo)".
    public var signals: [String]
    /// Where Carrel looked, named in the report when nothing was seen.
    public var checked: [String]

    public init(signals: [String], checked: [String]) {
        self.signals = signals
        self.checked = checked
    }

    static let whitespace = " \t\n\r"

    /// Vendors and products DMI reports for common hypervisors.
    static let dmiMarkers = ["qemu", "kvm", "vmware", "virtualbox", "innotek", "xen", "bochs", "parallels",
                             "microsoft corporation virtual", "hyper-v", "openstack", "google compute engine",
                             "amazon ec2", "bhyve", "cloud hypervisor", "apple virtualization"]

    /// Reads the signals from the texts the compositor gathered: the flags
    /// line of /proc/cpuinfo, DMI fields by name (sys_vendor, product_name,
    /// ...), and /sys/hypervisor/type. A nil source could not be read.
    public static func detect(cpuinfo: String?, dmi: [String: String], hypervisorType: String?) -> VirtualMachineSignals {
        var signals: [String] = []
        var checked: [String] = []
        if let cpuinfo {
            checked.append("/proc/cpuinfo flags")
            let flagLines = cpuinfo.split(separator: "\n").filter { $0.hasPrefix("flags") }
            if flagLines.contains(where: { $0.split(separator: " ").contains("hypervisor") }) {
                signals.append("the CPU reports the hypervisor flag (/proc/cpuinfo)")
            }
        }
        for (field, value) in dmi.sorted(by: { $0.key < $1.key }) {
            checked.append("DMI \(field)")
            let text = Substring(value).trimmingCharacters(in: Self.whitespace)
            let lower = text.lowercased()
            if dmiMarkers.contains(where: { lower.contains($0) }) {
                signals.append("DMI \(field) is \"\(text)\"")
            }
        }
        if let hypervisorType {
            checked.append("/sys/hypervisor/type")
            let text = Substring(hypervisorType).trimmingCharacters(in: Self.whitespace)
            if !text.isEmpty { signals.append("/sys/hypervisor/type is \"\(text)\"") }
        }
        return VirtualMachineSignals(signals: signals, checked: checked)
    }

    /// One sentence for the log and the audit record: never a silent guess.
    public var summary: String {
        if !signals.isEmpty { return "runs in a virtual machine: \(signals.joined(separator: "; "))" }
        if checked.isEmpty { return "whether this is a virtual machine is unknown: nothing could be read" }
        return "no sign of a virtual machine (checked \(checked.joined(separator: ", ")))"
    }
}

/// One requirement the machine does not meet, and why.
public struct UnmetPrecondition: Sendable, Equatable {
    public var kind: Precondition
    public var message: String
    public init(_ kind: Precondition, _ message: String) { self.kind = kind; self.message = message }
}

/// The outcome of checking: every unmet requirement, and what is only reported.
public struct PreconditionReport: Sendable, Equatable {
    public var unmet: [UnmetPrecondition]
    /// Informational lines (the virtual-machine finding, waived checks).
    public var notes: [String]

    public var isMet: Bool { unmet.isEmpty }
    public var unmetKinds: [Precondition] { unmet.map(\.kind) }

    /// The `failed(unsupported_configuration)` message: every unmet one.
    public var failureMessage: String {
        let items = unmet.map { "\($0.kind.rawValue): \($0.message)" }
        return "the machine does not meet the policy's preconditions (\(items.count)): " + items.joined(separator: "; ")
    }
}

public enum Preconditions {
    /// Checks `observation` against `policy`; lists every unmet requirement.
    public static func evaluate(_ observation: EnvironmentObservation, policy: PreconditionPolicy) -> PreconditionReport {
        var unmet: [UnmetPrecondition] = []
        var notes: [String] = []
        func check(_ kind: Precondition, _ problem: String?) {
            guard let problem else { return }
            if policy.waived.contains(kind) {
                notes.append("\(kind.rawValue) waived by the policy (testing only): \(problem)")
            } else {
                unmet.append(UnmetPrecondition(kind, problem))
            }
        }
        check(.nested, observation.nestedIn.isEmpty ? nil
              : "Carrel draws in a window of \(observation.nestedIn.joined(separator: " and ")), whose other clients it cannot hide; run it on the machine's own display (DRM backend)")
        check(.xServer, observation.xServerSockets.isEmpty ? nil
              : "an X server listens at \(observation.xServerSockets.joined(separator: ", ")), which the app could connect to; stop it or run it in another network namespace")
        switch observation.seat {
        case .sessions(let seat, let others):
            check(.seat, others.isEmpty ? nil
                  : "\(seat) has \(others.count) other session(s) (\(others.joined(separator: ", "))) the machine could switch to; end them first")
        case .unknown(let why):
            check(.seat, "cannot tell which sessions the seat has: \(why)")
        }
        let fileProblems = [observation.policyFile?.problem, observation.policyDirectory?.problem].compactMap { $0 }
        check(.policyFile, fileProblems.isEmpty ? nil
              : "the policy file could be changed by someone besides root: \(fileProblems.joined(separator: "; ")); chown root and chmod go-w")
        if let problem = observation.auditLogProblem {
            unmet.append(UnmetPrecondition(.auditLog, problem))
        }
        if let problem = observation.privilegedHelperProblem {
            unmet.append(UnmetPrecondition(.privilegedHelper, problem))
        }
        if let escapes = observation.kernelEscapes {
            let problems = escapes.problems
            check(.kernelKeys, problems.isEmpty ? nil : problems.joined(separator: "; "))
        } else {
            check(.kernelKeys, "the kernel's SysRq and Ctrl+Alt+Del settings were not examined")
        }
        check(.virtualInput, VirtualInput.problem(devices: observation.virtualInputDevices,
                                                  unreadable: observation.virtualInputUnreadable))
        check(.inputReaders, InputReaders.problem(holders: observation.inputDeviceHolders,
                                                  omitted: observation.inputDeviceHoldersOmitted,
                                                  unreadable: observation.inputDeviceHoldersUnreadable,
                                                  carrelPID: observation.carrelPID))
        let vm = observation.virtualMachine
        if policy.refuseVirtualMachine && !vm.signals.isEmpty {
            unmet.append(UnmetPrecondition(.virtualMachine, vm.summary + "; the policy refuses virtual machines"))
        } else {
            notes.append(vm.summary)
        }
        return PreconditionReport(unmet: unmet, notes: notes)
    }

    /// The listening X server sockets in the text of /proc/net/unix: path
    /// (`/tmp/.X11-unix/X0`) and abstract (`@/tmp/.X11-unix/X0`) ones.
    /// A listening socket has the SO_ACCEPTCON flag (00010000).
    public static func xServerSockets(procNetUnix: String) -> [String] {
        var found: [String] = []
        for line in procNetUnix.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // Num RefCount Protocol Flags Type St Inode Path
            guard fields.count >= 8, let flags = UInt32(fields[3], radix: 16), flags & 0x10000 != 0 else { continue }
            let path = String(fields[7])
            let bare = path.hasPrefix("@") ? String(path.dropFirst()) : path
            guard bare.hasPrefix("/tmp/.X11-unix/X"), bare.dropFirst("/tmp/.X11-unix/X".count).allSatisfy(\.isNumber),
                  bare.count > "/tmp/.X11-unix/X".count else { continue }
            if !found.contains(path) { found.append(path) }
        }
        return found
    }
}
