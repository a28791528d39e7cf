/// Who may hold the seat's input devices open while a session begins:
/// Carrel itself and the seat manager that opened them for it. Anyone else
/// reading an evdev device (a keylogger, a remote-help tool) sees every key
/// the student types, and nothing the compositor does can stop that.
public enum InputReaders {
    /// The seat managers' programs, by where /proc/PID/exe points (a process
    /// can rename its command, not its executable). Both spellings of the
    /// system directories: /lib is /usr/lib on a merged-/usr system.
    public static let seatManagers: Set<String> = [
        "/usr/lib/systemd/systemd-logind", "/lib/systemd/systemd-logind",
        "/usr/bin/seatd", "/usr/sbin/seatd", "/bin/seatd", "/sbin/seatd", "/usr/local/bin/seatd",
    ]

    /// Whether `holder` may hold input devices: Carrel (`carrelPID`) or a
    /// seat manager. A seat manager whose binary was replaced by an upgrade
    /// since it started shows " (deleted)" after its path and is still it.
    public static func isAllowed(_ holder: InputDeviceHolder, carrelPID: Int32) -> Bool {
        if holder.pid == carrelPID { return true }
        let deleted = " (deleted)"
        let executable = holder.executable.hasSuffix(deleted) ? String(holder.executable.dropLast(deleted.count)) : holder.executable
        return seatManagers.contains(executable)
    }

    /// The problem, or nil when only Carrel and a seat manager hold input
    /// devices. nil `holders`: the processes could not all be examined
    /// (`unreadable` says why), so a reader cannot be ruled out. `omitted`:
    /// holders the privileged helper found beyond the ones it listed, never
    /// all of them allowed (at most Carrel and one seat manager are).
    public static func problem(holders: [InputDeviceHolder]?, omitted: UInt64 = 0, unreadable: String? = nil,
                               carrelPID: Int32) -> String? {
        guard let holders else {
            return "which processes hold the seat's input devices cannot be read (\(unreadable ?? "unknown reason")), so one reading the student's keys cannot be ruled out; run Carrel as root or with --privileged-helper"
        }
        let readers = holders.filter { !isAllowed($0, carrelPID: carrelPID) }
        guard !readers.isEmpty || omitted > 0 else { return nil }
        var items = readers.map(describe)
        if omitted > 0 { items.append("\(omitted) more process(es) not listed") }
        let count = readers.count + Int(omitted)
        return "\(count) process(es) besides Carrel and the seat manager read the seat's input devices, and so every key the student types: \(items.joined(separator: "; ")); stop them"
    }

    /// "pid 812 (cat, /usr/bin/cat) has /dev/input/event2 open".
    static func describe(_ holder: InputDeviceHolder) -> String {
        let command = holder.command.isEmpty ? "?" : holder.command
        let executable = holder.executable.isEmpty ? "executable unknown" : holder.executable
        let devices = holder.devices.isEmpty ? "an input device" : holder.devices.joined(separator: ", ")
        return "pid \(holder.pid) (\(command), \(executable)) has \(devices) open"
    }
}
