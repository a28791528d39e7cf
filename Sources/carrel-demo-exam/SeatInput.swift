import CarrelClientShim
import WaylandClientSupport
import DemoExamLogic
#if canImport(Glibc)
import Glibc
#endif

/// Keyboard and pointer of the seat, turned into ``ExamInput`` values. Keys
/// are read through the keymap the compositor sends (xkbcommon), so a key
/// types what the layout and modifiers say: "a", "A", "é". Without a
/// usable keymap, a fixed table of evdev keycodes still covers the shortcuts.
final class SeatInput {
    var onInput: (ExamInput) -> Void = { _ in }

    private let seat: OpaquePointer
    private var keyboard: OpaquePointer?
    private var pointer: OpaquePointer?
    private var pointerPosition = (x: 0.0, y: 0.0)
    private let xkbContext = xkb_context_new(XKB_CONTEXT_NO_FLAGS)
    private var keymap: OpaquePointer?
    private var keyState: OpaquePointer?

    init(seat: OpaquePointer) {
        self.seat = seat
        wl_seat_add_listener(seat, seatListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let keyboard { wl_keyboard_release(keyboard) }
        if let pointer { wl_pointer_release(pointer) }
        wl_seat_release(seat)
        xkb_state_unref(keyState)
        xkb_keymap_unref(keymap)
        xkb_context_unref(xkbContext)
    }

    /// Keys that edit or move rather than type, by keysym (xkbcommon-keysyms.h).
    private static let namedKeysyms: [UInt32: String] = [
        0xff0d: "enter", 0xff8d: "enter", 0xff1b: "escape", 0xff08: "backspace", 0xffff: "delete",
        0xff51: "left", 0xff53: "right", 0xff50: "home", 0xff57: "end", 0xff09: "tab",
    ]

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

    /// wl_keyboard.keymap: compiles an XKB keymap; any other format keeps the evdev table.
    fileprivate func handleKeymap(format: UInt32, fd: Int32, size: UInt32) {
        defer { close(fd) }
        xkb_state_unref(keyState)
        xkb_keymap_unref(keymap)
        keyState = nil
        keymap = nil
        guard format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue, size > 1,
              let text = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, fd, 0), text != MAP_FAILED else {
            printError("no XKB keymap from the compositor (format \(format)); typing is limited to the shortcut keys")
            return
        }
        defer { munmap(text, Int(size)) }
        // The keymap text ends with a NUL byte, which is not part of it.
        keymap = xkb_keymap_new_from_buffer(xkbContext, text.assumingMemoryBound(to: CChar.self), Int(size) - 1,
                                            XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS)
        keyState = keymap.flatMap { xkb_state_new($0) }
        if keyState == nil {
            printError("the compositor's keymap does not compile; typing is limited to the shortcut keys")
        }
    }

    fileprivate func handleModifiers(depressed: UInt32, latched: UInt32, locked: UInt32, group: UInt32) {
        guard let keyState else { return }
        xkb_state_update_mask(keyState, depressed, latched, locked, 0, 0, group)
    }

    fileprivate func handleKey(_ key: UInt32, state: UInt32) {
        guard state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue else { return }
        guard let keyState else {
            if let name = Self.keyNames[key] { onInput(.key(name)) }
            return
        }
        // XKB keycodes are evdev codes plus 8.
        let code = key + 8
        let keysym = xkb_state_key_get_one_sym(keyState, code)
        if let name = Self.namedKeysyms[keysym] {
            onInput(.key(name))
            return
        }
        // With Control or Alt held a key is a command, not text.
        for modifier in ["Control", "Mod1"]
            where xkb_state_mod_name_is_active(keyState, modifier, XKB_STATE_MODS_EFFECTIVE) > 0 { return }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = xkb_state_key_get_utf8(keyState, code, &buffer, buffer.count)
        guard length > 0, length < buffer.count else {
            // A key that types nothing here, e.g. keypad 1 with Num Lock off, still answers.
            if let name = Self.keyNames[key] { onInput(.key(name)) }
            return
        }
        let text = String(cString: buffer)
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return }
        onInput(.key(text))
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
    keymap: { data, _, format, fd, size in input(data).handleKeymap(format: format, fd: fd, size: size) },
    enter: { _, _, _, _, _ in },
    leave: { _, _, _, _ in },
    key: { data, _, _, _, key, state in input(data).handleKey(key, state: state) },
    modifiers: { data, _, _, depressed, latched, locked, group in
        input(data).handleModifiers(depressed: depressed, latched: latched, locked: locked, group: group)
    },
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
