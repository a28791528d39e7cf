import CarrelClientShim
import WaylandClientSupport
import DemoExamLogic
#if canImport(Glibc)
import Glibc
#endif

/// Keyboard and pointer of the seat, turned into ``ExamInput`` values. Keys
/// are read as evdev keycodes (a fixed layout is enough for B, E, Q, 1-4 and
/// Enter), so no keymap is compiled.
final class SeatInput {
    var onInput: (ExamInput) -> Void = { _ in }

    private let seat: OpaquePointer
    private var keyboard: OpaquePointer?
    private var pointer: OpaquePointer?
    private var pointerPosition = (x: 0.0, y: 0.0)

    init(seat: OpaquePointer) {
        self.seat = seat
        wl_seat_add_listener(seat, seatListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let keyboard { wl_keyboard_release(keyboard) }
        if let pointer { wl_pointer_release(pointer) }
        wl_seat_release(seat)
    }

    /// Keys by evdev code (linux/input-event-codes.h).
    private static let keyNames: [UInt32: String] = [
        2: "1", 3: "2", 4: "3", 5: "4",              // KEY_1 … KEY_4
        79: "1", 80: "2", 81: "3", 75: "4",          // KEY_KP1 … KEY_KP4
        28: "enter", 96: "enter",                    // KEY_ENTER, KEY_KPENTER
        48: "b", 18: "e", 49: "n", 25: "p", 16: "q", // KEY_B, KEY_E, KEY_N, KEY_P, KEY_Q
        1: "escape", 105: "left", 106: "right",
    ]
    private static let leftButton: UInt32 = 0x110  // BTN_LEFT

    fileprivate func handleCapabilities(_ capabilities: UInt32) {
        let hasKeyboard = capabilities & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0
        let hasPointer = capabilities & WL_SEAT_CAPABILITY_POINTER.rawValue != 0
        let data = Unmanaged.passUnretained(self).toOpaque()
        if hasKeyboard, keyboard == nil {
            keyboard = wl_seat_get_keyboard(seat)
            wl_keyboard_add_listener(keyboard, keyboardListener, data)
        } else if !hasKeyboard, let current = keyboard {
            wl_keyboard_release(current)
            keyboard = nil
        }
        if hasPointer, pointer == nil {
            pointer = wl_seat_get_pointer(seat)
            wl_pointer_add_listener(pointer, pointerListener, data)
        } else if !hasPointer, let current = pointer {
            wl_pointer_release(current)
            pointer = nil
        }
    }

    fileprivate func handleKey(_ key: UInt32, state: UInt32) {
        guard state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue, let name = Self.keyNames[key] else { return }
        onInput(.key(name))
    }

    fileprivate func handlePointerMotion(x: wl_fixed_t, y: wl_fixed_t) {
        pointerPosition = (Double(x) / 256, Double(y) / 256)
    }

    fileprivate func handleButton(_ button: UInt32, state: UInt32) {
        guard button == Self.leftButton, state == WL_POINTER_BUTTON_STATE_PRESSED.rawValue else { return }
        onInput(.click(x: pointerPosition.x, y: pointerPosition.y))
    }
}

private func input(_ data: UnsafeMutableRawPointer?) -> SeatInput {
    Unmanaged<SeatInput>.fromOpaque(data!).takeUnretainedValue()
}

private let seatListener = staticListener(wl_seat_listener(
    capabilities: { data, _, capabilities in input(data).handleCapabilities(capabilities) },
    name: { _, _, _ in }
))

private let keyboardListener = staticListener(wl_keyboard_listener(
    // The keymap is not needed (keys are read as evdev codes); its fd is ours to close.
    keymap: { _, _, _, fd, _ in close(fd) },
    enter: { _, _, _, _, _ in },
    leave: { _, _, _, _ in },
    key: { data, _, _, _, key, state in input(data).handleKey(key, state: state) },
    modifiers: { _, _, _, _, _, _, _ in },
    repeat_info: { _, _, _, _ in }
))

// Field by field over a listener that ignores everything: the struct's
// fields differ between libwayland versions (see the client shim).
private let pointerListener: UnsafePointer<wl_pointer_listener> = {
    var listener = carrel_pointer_listener_ignoring_all()
    listener.enter = { data, _, _, _, x, y in input(data).handlePointerMotion(x: x, y: y) }
    listener.motion = { data, _, _, x, y in input(data).handlePointerMotion(x: x, y: y) }
    listener.button = { data, _, _, _, button, state in input(data).handleButton(button, state: state) }
    return staticListener(listener)
}()
