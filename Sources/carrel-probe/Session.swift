import CarrelClientShim
import WaylandClientSupport

/// The probe's main connection with the globals an ordinary client binds,
/// and the window, popup and selection the attacks create on it.
final class Session {
    let connection: ProbeConnection
    private(set) var compositor: OpaquePointer?
    private(set) var shm: OpaquePointer?
    private(set) var wmBase: OpaquePointer?
    private(set) var dataDeviceManager: OpaquePointer?
    private(set) var seat: SeatWatcher?
    private(set) var clipboard: ClipboardWatcher?

    var window: ProbeSurface?
    var popup: ProbeSurface?
    var source: ProbeSource?

    init(timeout: Double) throws {
        connection = try ProbeConnection()
        compositor = connection.bind("wl_compositor", maxVersion: 4)?.proxy
        shm = connection.bind("wl_shm", maxVersion: 1)?.proxy
        wmBase = connection.bind("xdg_wm_base", maxVersion: 2)?.proxy
        if let wmBase { xdg_wm_base_add_listener(wmBase, wmBaseListener, nil) }
        dataDeviceManager = connection.bind("wl_data_device_manager", maxVersion: 3)?.proxy
        if let seat = connection.bind("wl_seat", maxVersion: 5)?.proxy {
            self.seat = SeatWatcher(seat: seat)
        }
        // The first roundtrip brings the seat's capabilities (and with them
        // the keyboard and pointer requests), the second their first events.
        _ = connection.roundtrip(timeout: timeout)
        if let manager = dataDeviceManager, let seat {
            clipboard = ClipboardWatcher(manager: manager, seat: seat.seat)
        }
        _ = connection.roundtrip(timeout: timeout)
    }

    deinit {
        // xdg-shell: a popup goes before its parent, role objects before surfaces.
        popup = nil
        window = nil
        source = nil
        clipboard = nil
        seat = nil
        if let dataDeviceManager { wl_data_device_manager_destroy(dataDeviceManager) }
        if let wmBase { xdg_wm_base_destroy(wmBase) }
        if let shm { wl_shm_destroy(shm) }
        if let compositor { wl_compositor_destroy(compositor) }
    }

    /// Why this connection cannot show a window, or nil if it can.
    var cannotMapReason: String? {
        let missing = [("wl_compositor", compositor), ("wl_shm", shm), ("xdg_wm_base", wmBase)]
            .filter { $0.1 == nil }.map(\.0)
        return missing.isEmpty ? nil : "the compositor does not offer \(missing.joined(separator: ", "))"
    }

    /// Every surface of the probe's own.
    var surfaces: [OpaquePointer] {
        [window?.surface, popup?.surface].compactMap { $0 }
    }

    /// True when one of the probe's surfaces holds keyboard focus now.
    var hasKeyboardFocus: Bool {
        guard let focus = seat?.keyboardFocus else { return false }
        return surfaces.contains(focus)
    }

    /// When one of the probe's surfaces first got keyboard focus, if ever.
    var firstKeyboardFocus: Double? {
        surfaces.compactMap { seat?.hadKeyboardFocus(on: $0) }.min()
    }

    /// A sentence on keyboard focus for `surface` since `since`.
    func focusText(surface: OpaquePointer, since: Double, timeout: Double) -> String {
        guard let seat else { return "no wl_seat is offered, so no input focus at all" }
        var text: String
        if let at = seat.hadKeyboardFocus(on: surface) {
            text = "keyboard focus after \(milliseconds(max(0, at - since)))"
            if seat.keyboardFocus != surface { text += " (since lost)" }
        } else if !seat.hasKeyboardCapability {
            text = "no keyboard focus: the seat has no keyboard (capabilities: \(seat.capabilitiesText)), "
                + "so no client can get keyboard focus and this says nothing about focus policy"
        } else {
            text = "no keyboard focus within \(secondsText(timeout))"
        }
        if let at = seat.hadPointer(on: surface) {
            text += "; pointer entered after \(milliseconds(max(0, at - since)))"
        }
        return text
    }
}

// The compositor considers a client that does not answer pings unresponsive.
private let wmBaseListener = staticListener(xdg_wm_base_listener(
    ping: { _, wmBase, serial in xdg_wm_base_pong(wmBase, serial) }
))
