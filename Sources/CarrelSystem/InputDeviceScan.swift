import Glibc

/// Which processes hold one of the machine's input devices open, read from
/// /proc/*/fd: whoever reads an evdev device sees every key the student
/// types, whatever the compositor shows. Only root can read every
/// process's descriptors, so Carrel running as its own user asks the
/// privileged helper, which runs this same scan. Local reads only (proc and
/// devtmpfs), fast enough for a begin; nothing here follows a path outside /dev.
public enum InputDeviceScan {
    public struct Holder: Sendable, Equatable {
        public let pid: Int32
        public let executable: String
        public let command: String
        public let devices: [String]
    }

    /// The input subsystem's character major (evdev's eventN, mice, mouseN, jsN).
    static let inputMajor: UInt32 = 13

    /// Every process with an input device open, by pid; or why the table
    /// could not be read completely (then a reader cannot be ruled out).
    public static func holders() -> Result<[Holder], ScanFailure> {
        guard let proc = opendir("/proc") else { return .failure(ScanFailure("/proc cannot be read: \(SystemError.current)")) }
        defer { closedir(proc) }
        var found: [Holder] = []
        while let entry = readdir(proc) {
            let name = entryName(entry)
            guard let pid = Int32(name), pid > 0 else { continue }
            switch devices(of: pid) {
            case .success(let devices):
                guard !devices.isEmpty else { continue }
                let executable = link("/proc/\(pid)/exe") ?? ""
                let command = BoundedFile.text("/proc/\(pid)/comm", limit: 64).map { String($0.prefix { $0 != "\n" }) } ?? ""
                found.append(Holder(pid: pid, executable: executable, command: command, devices: devices))
            case .failure(let failure):
                return .failure(failure)
            }
        }
        return .success(found.sorted { $0.pid < $1.pid })
    }

    /// The input devices `pid` holds; a process gone meanwhile holds none.
    private static func devices(of pid: Int32) -> Result<[String], ScanFailure> {
        let path = "/proc/\(pid)/fd"
        guard let directory = opendir(path) else {
            if errno == ENOENT || errno == ESRCH { return .success([]) }
            let why = SystemError.current
            if errno == EACCES || errno == EPERM {
                return .failure(ScanFailure("\(path) cannot be read (\(why)): reading every process's open files needs root with CAP_SYS_PTRACE"))
            }
            return .failure(ScanFailure("\(path) cannot be read: \(why)"))
        }
        defer { closedir(directory) }
        var devices: [String] = []
        while let entry = readdir(directory) {
            let name = entryName(entry)
            guard Int32(name) != nil else { continue }
            // The directory lists for root by its mode, but each link is
            // read only past ptrace's check: a process holding capabilities
            // the reader lacks hides its descriptors (EACCES). Only a
            // descriptor closed meanwhile is not there to see.
            guard let target = link("\(path)/\(name)") else {
                if errno == ENOENT { continue }
                let why = SystemError.current
                return .failure(ScanFailure("\(path)/\(name) cannot be read (\(why)): reading every process's open files needs root with CAP_SYS_PTRACE"))
            }
            if isInputDevice(target) && !devices.contains(target) { devices.append(target) }
        }
        return .success(devices)
    }

    /// Whether a descriptor's target is an input device: anything under
    /// /dev/input (only root makes nodes there; one deleted or not visible
    /// to the reader while held open still counts), else a character device
    /// of the input major elsewhere in /dev. Only paths in /dev are examined
    /// (a stat elsewhere could wait on a network or FUSE file system).
    static func isInputDevice(_ target: String) -> Bool {
        if target.hasPrefix("/dev/input/") { return true }
        guard target.hasPrefix("/dev/") else { return false }
        var info = stat()
        guard stat(target, &info) == 0, info.st_mode & S_IFMT == S_IFCHR else { return false }
        return major(UInt64(info.st_rdev)) == inputMajor
    }

    /// glibc's gnu_dev_major, which Swift does not import (a macro).
    static func major(_ device: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff))
    }

    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Why the scan could not be completed.
    public struct ScanFailure: Error, Sendable, Equatable {
        public let message: String
        public init(_ message: String) { self.message = message }
    }
}
