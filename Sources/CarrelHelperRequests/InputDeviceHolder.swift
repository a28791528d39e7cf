/// A process with the seat's input devices open, as /proc shows it: what the
/// `input_readers` precondition decides on (Core's `InputReaders`), and what
/// the privileged helper reports when Carrel, not being root, cannot see
/// other users' open files itself.
public struct InputDeviceHolder: Sendable, Hashable {
    public var pid: Int32
    /// Where /proc/PID/exe points: the program running, which the process
    /// cannot rename (its command name it can). Empty when it cannot be read.
    public var executable: String
    /// /proc/PID/comm, for the message.
    public var command: String
    /// The input devices it holds (/dev/input/event3), each once.
    public var devices: [String]

    public init(pid: Int32, executable: String, command: String, devices: [String]) {
        self.pid = pid
        self.executable = executable
        self.command = command
        self.devices = devices
    }

    /// The most holders one helper answer lists, the most devices one entry
    /// does, and the longest field: the answer must fit a reply line, and
    /// beyond Carrel and its seat manager any holder already fails the check.
    public static let maximumListed = 8
    public static let maximumDevicesListed = 8
    static let maximumFieldLength = 200

    /// One entry of the helper's answer: pid, executable, command and the
    /// devices, separated by tabs (a tab or control character in a field is
    /// shown as "?": these are for reading, and a changed executable matches
    /// no seat manager, which fails closed).
    public var line: String {
        ([String(pid), executable, command] + devices.prefix(Self.maximumDevicesListed)).map(Self.field).joined(separator: "\t")
    }

    public static func parse(_ line: String) -> InputDeviceHolder? {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 4, let pid = Int32(fields[0]), pid > 0 else { return nil }
        return InputDeviceHolder(pid: pid, executable: fields[1], command: fields[2], devices: Array(fields[3...]))
    }

    private static func field(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(maximumFieldLength).map {
            $0.properties.generalCategory == .control || $0 == "\"" || $0 == "\\" ? "?" : $0
        }))
    }
}
