/// The environment a program started through the privileged helper gets:
/// Carrel's own, less what reaches Carrel or the session some other way
/// (the program's Wayland connection is the descriptor that comes with the
/// request; Carrel's runtime directory, session bus and systemd sockets are
/// not the program's), and within the helper's limits, so the request is
/// never refused for its size.
public enum SpawnEnvironment {
    /// Never passed on.
    public static let withheld: Set<String> = [
        "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "DISPLAY", "NOTIFY_SOCKET", "XDG_RUNTIME_DIR",
        "DBUS_SESSION_BUS_ADDRESS", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
    ]
    /// All variables together take at most this many bytes (a quarter of a
    /// request line: JSON escaping may grow them).
    public static let budget = PrivilegedRequest.maximumLineLength / 4

    /// `variables` (in order; the first of a name wins) as the request carries them.
    public static func from(_ variables: [(key: String, value: String)]) -> [String: String] {
        var environment: [String: String] = [:]
        var size = 0
        for (key, value) in variables where environment[key] == nil && !withheld.contains(key)
            && PrivilegedRequest.isVariableName(key) && PrivilegedRequest.isPlain(value) {
            let cost = key.utf8.count + value.utf8.count + 6
            guard environment.count < PrivilegedRequest.maximumVariables, size + cost <= budget else { break }
            environment[key] = value
            size += cost
        }
        return environment
    }
}
