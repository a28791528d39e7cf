import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc

/// Reads what the session preconditions need from the machine;
/// Core's `Preconditions` decides. What cannot change while Carrel runs (the
/// backend, virtual-machine signals) is read once; the rest at each begin.
struct EnvironmentProbe {
    /// The displays Carrel draws inside, from the backends wlroots chose.
    let nestedIn: [String]
    let virtualMachine: VirtualMachineSignals
    let policyPath: String?

    init(backend: UnsafeMutablePointer<wlr_backend>, policyPath: String?) {
        nestedIn = Self.nestedBackends(backend)
        virtualMachine = Self.virtualMachineSignals()
        self.policyPath = policyPath
    }

    /// What the machine looks like now.
    /// `inputHolders`: who holds the input devices, read by `inputDeviceHolders()`
    /// or through the privileged helper.
    func observe(auditLogProblem: String?, privilegedHelperProblem: String? = nil,
                 inputHolders: InputHolderReading) -> EnvironmentObservation {
        let unix = BoundedFile.text("/proc/net/unix", limit: 16 << 20)
        var observation = EnvironmentObservation(
            nestedIn: nestedIn,
            xServerSockets: unix.map { Preconditions.xServerSockets(procNetUnix: $0) } ?? [],
            seat: Self.seat(),
            auditLogProblem: auditLogProblem,
            virtualMachine: virtualMachine)
        observation.privilegedHelperProblem = privilegedHelperProblem
        observation.kernelEscapes = Self.kernelEscapes()
        (observation.virtualInputDevices, observation.virtualInputUnreadable) = Self.virtualInputDevices()
        observation.inputDeviceHolders = inputHolders.holders
        observation.inputDeviceHoldersOmitted = inputHolders.omitted
        observation.inputDeviceHoldersUnreadable = inputHolders.unreadable
        observation.carrelPID = getpid()
        if unix == nil {
            // Unreadable: an X server cannot be ruled out (fail closed).
            observation.xServerSockets = ["(unknown: /proc/net/unix could not be read)"]
        }
        if let policyPath {
            // Gone or unreadable since Carrel started: nobody can vouch for it.
            observation.policyFile = Self.ownership(policyPath)
                ?? .unreadable(policyPath, because: SystemError.current)
            let directory = policyPath.lastIndex(of: "/").map { $0 == policyPath.startIndex ? "/" : String(policyPath[..<$0]) } ?? "."
            observation.policyDirectory = Self.ownership(directory)
        }
        return observation
    }

    // MARK: - Readings

    /// Who holds the seat's input devices open, and whether that could be read.
    struct InputHolderReading {
        var holders: [InputDeviceHolder]?
        var omitted: UInt64 = 0
        var unreadable: String?

        static func unreadable(_ why: String) -> InputHolderReading { InputHolderReading(holders: nil, unreadable: why) }
    }

    /// Scans /proc here, as Carrel's own user: complete only as root.
    static func inputDeviceHolders() -> InputHolderReading {
        switch InputDeviceScan.holders() {
        case .success(let found):
            return InputHolderReading(holders: found.map {
                InputDeviceHolder(pid: $0.pid, executable: $0.executable, command: $0.command, devices: $0.devices)
            })
        case .failure(let failure):
            return .unreadable(failure.message)
        }
    }

    /// What the privileged helper answered to `input_readers`.
    static func inputDeviceHolders(from answer: Result<PrivilegedReply, ProviderError>) -> InputHolderReading {
        switch answer {
        case .success(.holders(let holders, let omitted)):
            return InputHolderReading(holders: holders, omitted: omitted)
        case .success:
            return .unreadable("the privileged helper gave no list of holders")
        case .failure(let error):
            return .unreadable("through the privileged helper: \(error.message)")
        }
    }

    /// wlroots' x11 and wayland backends draw in a window of another display.
    /// wlroots-version-specific (the multi-backend walk): re-check at the port.
    private static func nestedBackends(_ backend: UnsafeMutablePointer<wlr_backend>) -> [String] {
        final class Found {
            var kinds: [String] = []
            func visit(_ backend: UnsafeMutablePointer<wlr_backend>?) {
                guard let backend else { return }
                if wlr_backend_is_x11(backend) {
                    kinds.append("an X server (DISPLAY=\(EnvironmentProbe.env("DISPLAY") ?? "unset"))")
                } else if wlr_backend_is_wl(backend) {
                    kinds.append("a Wayland compositor (WAYLAND_DISPLAY=\(EnvironmentProbe.env("WAYLAND_DISPLAY") ?? "wayland-0"))")
                }
            }
        }
        let found = Found()
        if wlr_backend_is_multi(backend) {
            wlr_multi_for_each_backend(backend, { child, data in
                Unmanaged<Found>.fromOpaque(data!).takeUnretainedValue().visit(child)
            }, Unmanaged.passUnretained(found).toOpaque())
        } else {
            found.visit(backend)
        }
        return found.kinds
    }

    /// The seat Carrel runs on and the other logind sessions on it.
    private static func seat() -> SeatObservation {
        let seat = env("XDG_SEAT") ?? "seat0"
        guard sd_booted() > 0 else {
            return .unknown("this machine was not booted with systemd, so logind cannot say which sessions \(seat) has")
        }
        var sessions: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_seat_get_sessions(seat, &sessions, nil, nil)
        guard count >= 0 else {
            return .unknown("logind does not know \(seat): \(SystemError.describe(-count))")
        }
        var names: [String] = []
        if let sessions {
            for i in 0..<Int(count) {
                if let name = sessions[i] { names.append(String(cString: name)); free(name) }
            }
            free(sessions)
        }
        var own: UnsafeMutablePointer<CChar>?
        var mine: String?
        if sd_pid_get_session(getpid(), &own) >= 0, let own {
            mine = String(cString: own)
            free(own)
        }
        return .sessions(seat: seat, others: names.filter { $0 != mine })
    }

    /// SysRq, Ctrl+Alt+Del: what the kernel and init would do with the
    /// student's keys. A setting that exists but cannot be read is reported
    /// unreadable (fail closed); a kernel without SysRq has no file.
    private static func kernelEscapes() -> KernelEscapes {
        var sysrq: Int?
        var sysrqUnreadable: String?
        if access("/proc/sys/kernel/sysrq", F_OK) == 0 {
            if let text = BoundedFile.text("/proc/sys/kernel/sysrq", limit: 64),
               let mask = Int(Self.firstLine(text)) {
                sysrq = mask
            } else {
                sysrqUnreadable = "/proc/sys/kernel/sysrq: \(SystemError.current)"
            }
        }
        let cad = BoundedFile.text("/proc/sys/kernel/ctrl-alt-del", limit: 64).flatMap { Int(Self.firstLine($0)) }
        let masked = ["/etc/systemd/system/ctrl-alt-del.target", "/run/systemd/system/ctrl-alt-del.target"].contains { path in
            var buffer = [CChar](repeating: 0, count: 64)
            let length = readlink(path, &buffer, buffer.count - 1)
            return length > 0 && String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "/dev/null"
        }
        return KernelEscapes(sysrqMask: sysrq, sysrqUnreadable: sysrqUnreadable,
                             kernelCommandLine: BoundedFile.text("/proc/cmdline", limit: 64 << 10),
                             ctrlAltDelHardReboot: cad.map { $0 != 0 }, initIsSystemd: sd_booted() > 0,
                             ctrlAltDelTargetMasked: masked)
    }

    /// The input devices with no hardware behind them: `inputN` entries of
    /// /sys/devices/virtual/input (uinput's; the `mice` multiplexer there is
    /// not a device). No such directory: none exist.
    private static func virtualInputDevices() -> (names: [String]?, unreadable: String?) {
        let root = "/sys/devices/virtual/input"
        guard let directory = opendir(root) else {
            return errno == ENOENT ? ([], nil) : (nil, "\(root): \(SystemError.current)")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix("input"), name.dropFirst(5).allSatisfy(\.isNumber), name.count > 5 else { continue }
            let label = BoundedFile.text("\(root)/\(name)/name", limit: 256).map(Self.firstLine) ?? name
            names.append(label)
        }
        return (names.sorted(), nil)
    }

    /// A /proc or /sys value without its newline.
    private static func firstLine(_ text: String) -> String {
        String(text.prefix { $0 != "\n" })
    }

    private static func virtualMachineSignals() -> VirtualMachineSignals {
        var dmi: [String: String] = [:]
        for field in ["sys_vendor", "product_name", "board_vendor", "bios_vendor"] {
            if let value = BoundedFile.text("/sys/class/dmi/id/\(field)", limit: 4096) { dmi[field] = value }
        }
        return VirtualMachineSignals.detect(cpuinfo: BoundedFile.text("/proc/cpuinfo", limit: 8 << 20), dmi: dmi,
                                            hypervisorType: BoundedFile.text("/sys/hypervisor/type", limit: 4096))
    }

    private static func ownership(_ path: String) -> FileOwnership? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileOwnership(path: path, uid: info.st_uid, gid: info.st_gid, mode: info.st_mode)
    }

    private static func env(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
