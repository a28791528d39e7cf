import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// The seat as the probe sees it: which of its surfaces have keyboard and
/// pointer focus, and the latest serial the compositor handed out (what a
/// selection or a popup grab must quote).
final class SeatWatcher {
    let seat: OpaquePointer
    private(set) var capabilities: UInt32?
    private var keyboard: OpaquePointer?
    private var pointer: OpaquePointer?

    /// The surface holding keyboard focus now, if one of ours.
    private(set) var keyboardFocus: OpaquePointer?
    /// Every surface of ours that ever had keyboard focus, with when.
    private(set) var keyboardEntered: [(surface: OpaquePointer, at: Double)] = []
    private(set) var pointerEntered: [(surface: OpaquePointer, at: Double)] = []
    private(set) var latestSerial: UInt32?

    init(seat: OpaquePointer) {
        self.seat = seat
        wl_seat_add_listener(seat, seatListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let keyboard { wl_keyboard_destroy(keyboard) }
        if let pointer { wl_pointer_destroy(pointer) }
        wl_seat_destroy(seat)
    }

    var hasKeyboardCapability: Bool {
        (capabilities ?? 0) & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0
    }

    var capabilitiesText: String {
        guard let capabilities else { return "unknown (no capabilities event)" }
        var names: [String] = []
        if capabilities & WL_SEAT_CAPABILITY_POINTER.rawValue != 0 { names.append("pointer") }
        if capabilities & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0 { names.append("keyboard") }
        if capabilities & WL_SEAT_CAPABILITY_TOUCH.rawValue != 0 { names.append("touch") }
        return names.isEmpty ? "none" : names.joined(separator: "+")
    }

    func hadKeyboardFocus(on surface: OpaquePointer) -> Double? {
        keyboardEntered.first { $0.surface == surface }?.at
    }

    func hadPointer(on surface: OpaquePointer) -> Double? {
        pointerEntered.first { $0.surface == surface }?.at
    }

    fileprivate func handleCapabilities(_ caps: UInt32) {
        capabilities = caps
        // Only asked for when offered: wlroots 0.15 ends the connection of a
        // client that asks for a keyboard on a seat that never had one.
        if caps & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0, keyboard == nil {
            keyboard = wl_seat_get_keyboard(seat)
            wl_keyboard_add_listener(keyboard, keyboardListener, Unmanaged.passUnretained(self).toOpaque())
        }
        if caps & WL_SEAT_CAPABILITY_POINTER.rawValue != 0, pointer == nil {
            pointer = wl_seat_get_pointer(seat)
            wl_pointer_add_listener(pointer, pointerListener, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    fileprivate func handleKeyboardEnter(serial: UInt32, surface: OpaquePointer?) {
        latestSerial = serial
        guard let surface else { return }
        keyboardFocus = surface
        keyboardEntered.append((surface, now()))
    }

    fileprivate func handleKeyboardLeave(serial: UInt32, surface: OpaquePointer?) {
        latestSerial = serial
        if surface == nil || surface == keyboardFocus { keyboardFocus = nil }
    }

    fileprivate func handlePointerEnter(serial: UInt32, surface: OpaquePointer?) {
        latestSerial = serial
        guard let surface else { return }
        pointerEntered.append((surface, now()))
    }

    fileprivate func handleSerial(_ serial: UInt32) {
        latestSerial = serial
    }

    /// Forgets a surface that is being destroyed, so a later surface at the
    /// same address is not taken for it.
    func forget(_ surface: OpaquePointer) {
        if keyboardFocus == surface { keyboardFocus = nil }
        keyboardEntered.removeAll { $0.surface == surface }
        pointerEntered.removeAll { $0.surface == surface }
    }
}

private func watcher(_ data: UnsafeMutableRawPointer?) -> SeatWatcher {
    Unmanaged<SeatWatcher>.fromOpaque(data!).takeUnretainedValue()
}

private let seatListener = staticListener(wl_seat_listener(
    capabilities: { data, _, caps in watcher(data).handleCapabilities(caps) },
    name: { _, _, _ in }
))

private let keyboardListener = staticListener(wl_keyboard_listener(
    keymap: { _, _, _, fd, _ in close(fd) },
    enter: { data, _, serial, surface, _ in watcher(data).handleKeyboardEnter(serial: serial, surface: surface) },
    leave: { data, _, serial, surface in watcher(data).handleKeyboardLeave(serial: serial, surface: surface) },
    key: { data, _, serial, _, _, _ in watcher(data).handleSerial(serial) },
    modifiers: { data, _, serial, _, _, _, _ in watcher(data).handleSerial(serial) },
    repeat_info: { _, _, _, _ in }
))

// Field by field over a listener that ignores everything: the struct's
// fields differ between libwayland versions (see the client shim).
private let pointerListener: UnsafePointer<wl_pointer_listener> = {
    var listener = carrel_pointer_listener_ignoring_all()
    listener.enter = { data, _, serial, surface, _, _ in watcher(data).handlePointerEnter(serial: serial, surface: surface) }
    listener.leave = { data, _, serial, _ in watcher(data).handleSerial(serial) }
    listener.button = { data, _, serial, _, _, _ in watcher(data).handleSerial(serial) }
    return staticListener(listener)
}()
