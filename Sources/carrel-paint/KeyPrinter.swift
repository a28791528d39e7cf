import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// `--print-keys`: prints `key CODE pressed|released` (evdev key codes) for
/// every key the compositor delivers to the window, so a test can tell a key
/// that reached the app from one the compositor kept.
final class KeyPrinter {
    private let seat: OpaquePointer
    private var keyboard: OpaquePointer?

    init(seat: OpaquePointer) {
        self.seat = seat
        wl_seat_add_listener(seat, seatListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let keyboard { wl_keyboard_destroy(keyboard) }
        wl_seat_destroy(seat)
    }

    fileprivate func capabilities(_ caps: UInt32) {
        guard caps & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0, keyboard == nil else { return }
        keyboard = wl_seat_get_keyboard(seat)
        wl_keyboard_add_listener(keyboard, keyboardListener, nil)
    }
}

private let seatListener = staticListener(wl_seat_listener(
    capabilities: { data, _, caps in Unmanaged<KeyPrinter>.fromOpaque(data!).takeUnretainedValue().capabilities(caps) },
    name: { _, _, _ in }
))

private let keyboardListener = staticListener(wl_keyboard_listener(
    keymap: { _, _, _, fd, _ in close(fd) },
    enter: { _, _, _, _, _ in },
    leave: { _, _, _, _ in },
    key: { _, _, _, _, key, state in
        print("key \(key) \(state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue ? "pressed" : "released")")
        fflush(stdout)
    },
    modifiers: { _, _, _, _, _, _, _ in },
    repeat_info: { _, _, _, _ in }
))
