import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// One connection to the compositor: its registry, and a bounded event pump
/// (WaylandClientSupport's), plus what the probe makes of a failure.
///
/// A connection the compositor ends (a protocol error, or it hangs up) is not
/// a crash for the probe: `failure` says what happened, and every attack
/// reads it as evidence.
final class ProbeConnection: WaylandConnection {
    private var recordedFailure: String?

    /// Connects to $WAYLAND_DISPLAY and reads the registry.
    init() throws {
        ProbeConnection.clearLog()
        do {
            try super.init()
        } catch .cannotConnect(let name, let reason) {
            throw ProbeError("cannot connect to the Wayland display \(name): \(reason). "
                             + "Is a compositor running, and are WAYLAND_DISPLAY and XDG_RUNTIME_DIR set for it?")
        }
        guard listGlobals() else {
            throw ProbeError("the connection failed while listing globals: \(failure ?? "unknown error")")
        }
    }

    /// Waits stop early once `failure` is known (which also fixes its log text).
    override var hasFailed: Bool { failure != nil }

    /// What ended the connection, or nil while it works; with the log text
    /// of the moment it was first asked after the failure.
    var failure: String? {
        if let recordedFailure { return recordedFailure }
        recordedFailure = describeFailure()
        return recordedFailure
    }

    private func describeFailure() -> String? {
        let code = wl_display_get_error(display)
        guard code != 0 else { return nil }
        var interface: UnsafePointer<wl_interface>?
        var id: UInt32 = 0
        let protocolCode = wl_display_get_protocol_error(display, &interface, &id)
        let logged = ProbeConnection.loggedText()
        if code == EPROTO, let interface {
            let name = String(cString: interface.pointee.name)
            let prefix = "\(name)@\(id): error \(protocolCode): "
            if logged.hasPrefix(prefix) { return "protocol error on \(name)@\(id): \(logged.dropFirst(prefix.count))" }
            return "protocol error \(protocolCode) on \(name)@\(id)" + (logged.isEmpty ? "" : " (\(logged))")
        }
        return errnoText(code) + (logged.isEmpty ? "" : " (\(logged))")
    }

    /// True when the compositor sent wl_display.error (rather than the
    /// connection breaking on this side).
    var endedByProtocolError: Bool {
        var interface: UnsafePointer<wl_interface>?
        var id: UInt32 = 0
        guard wl_display_get_error(display) == EPROTO else { return false }
        _ = wl_display_get_protocol_error(display, &interface, &id)
        return interface != nil
    }

    /// The last line libwayland-client logged since `clearLog()` (for a
    /// protocol error: "object@id: error code: message").
    static func loggedText() -> String {
        String(cString: carrel_client_log_text())
            .split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
    }

    static func clearLog() { carrel_client_log_capture() }
}
