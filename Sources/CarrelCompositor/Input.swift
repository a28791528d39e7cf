import CarrelCore
import CarrelShim
import Logging

/// The seat: keyboards, the pointer (through wlr_cursor), touch, the cursor
/// image. A headless seat starts with no keyboard at all, so nothing here may
/// assume one exists.
final class Input {
    let seat: UnsafeMutablePointer<wlr_seat>
    let cursor: UnsafeMutablePointer<wlr_cursor>
    private let cursorManager: UnsafeMutablePointer<wlr_xcursor_manager>
    unowned let server: Server
    private var listeners = ListenerBag()
    private var keyboards: [Keyboard] = []
    /// The real keyboard last typed on: the one the input method's grab
    /// reads (never its own virtual keyboard).
    private weak var lastKeyboard: Keyboard?
    private var hasPointer = false
    private var hasTouch = false
    private var cursorThemeLoaded = false

    init(server: Server) {
        self.server = server
        seat = wlr_seat_create(server.display, "seat0")!
        cursor = wlr_cursor_create()!
        wlr_cursor_attach_output_layout(cursor, server.outputLayout)
        // XCURSOR_THEME / XCURSOR_SIZE are honoured through the nil theme. The
        // theme (megabytes of files) is read on first use, not at start-up:
        // a kiosk without a pointer never needs it.
        cursorManager = wlr_xcursor_manager_create(nil, 24)!

        listeners.on(&server.backend.pointee.events.new_input) { [unowned self] data in
            handleNewInput(data!.assumingMemoryBound(to: wlr_input_device.self))
        }
        listeners.on(&cursor.pointee.events.motion) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.PointerMotionEvent.self).pointee
            wlr_cursor_move(cursor, WlrootsVersion.device(event), event.delta_x, event.delta_y)
            pointerMoved(time: event.time_msec)
        }
        listeners.on(&cursor.pointee.events.motion_absolute) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.PointerMotionAbsoluteEvent.self).pointee
            wlr_cursor_warp_absolute(cursor, WlrootsVersion.device(event), event.x, event.y)
            pointerMoved(time: event.time_msec)
        }
        listeners.on(&cursor.pointee.events.button) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.PointerButtonEvent.self).pointee
            endPopupGrabCoreRefuses()
            wlr_seat_pointer_notify_button(seat, event.time_msec, event.button, event.state)
        }
        listeners.on(&cursor.pointee.events.axis) { [unowned self] data in
            endPopupGrabCoreRefuses()
            WlrootsVersion.notifyAxis(seat, data!.assumingMemoryBound(to: WlrootsVersion.PointerAxisEvent.self).pointee)
        }
        listeners.on(&cursor.pointee.events.frame) { [unowned self] _ in
            wlr_seat_pointer_notify_frame(seat)
        }
        listeners.on(&cursor.pointee.events.touch_down) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.TouchDownEvent.self).pointee
            var lx = 0.0, ly = 0.0
            wlr_cursor_absolute_to_layout_coords(cursor, WlrootsVersion.device(event), event.x, event.y, &lx, &ly)
            endPopupGrabCoreRefuses()
            if let hit = server.surface(atLayoutX: lx, y: ly) {
                wlr_seat_touch_notify_down(seat, hit.surface, event.time_msec, event.touch_id, hit.sx, hit.sy)
            }
        }
        listeners.on(&cursor.pointee.events.touch_motion) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.TouchMotionEvent.self).pointee
            var lx = 0.0, ly = 0.0
            wlr_cursor_absolute_to_layout_coords(cursor, WlrootsVersion.device(event), event.x, event.y, &lx, &ly)
            if let hit = server.surface(atLayoutX: lx, y: ly) {
                wlr_seat_touch_notify_motion(seat, event.time_msec, event.touch_id, hit.sx, hit.sy)
            }
        }
        listeners.on(&cursor.pointee.events.touch_up) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.TouchUpEvent.self).pointee
            wlr_seat_touch_notify_up(seat, event.time_msec, event.touch_id)
        }
        listeners.on(&cursor.pointee.events.touch_frame) { [unowned self] _ in
            wlr_seat_touch_notify_frame(seat)
        }
        listeners.on(&seat.pointee.events.request_set_cursor) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: wlr_seat_pointer_request_set_cursor_event.self).pointee
            // Only the client under the pointer may change the cursor image.
            if event.seat_client == seat.pointee.pointer_state.focused_client {
                wlr_cursor_set_surface(cursor, event.surface, event.hotspot_x, event.hotspot_y)
            }
        }
        listeners.on(&seat.pointee.events.request_set_selection) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: wlr_seat_request_set_selection_event.self).pointee
            if selectionAccepted(.clipboard, serial: event.serial) {
                wlr_seat_set_selection(seat, event.source, event.serial)
            } else if let source = event.source {
                wlr_data_source_destroy(source)
            }
        }
        listeners.on(&seat.pointee.events.request_set_primary_selection) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: wlr_seat_request_set_primary_selection_event.self).pointee
            if selectionAccepted(.primary, serial: event.serial) {
                wlr_seat_set_primary_selection(seat, event.source, event.serial)
            } else if let source = event.source {
                wlr_primary_selection_source_destroy(source)
            }
        }
        listeners.on(&seat.pointee.events.request_start_drag) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: wlr_seat_request_start_drag_event.self).pointee
            let origin = event.origin
            let effects = server.drive {
                $0.dragRequested(origin: origin.map { server.clientID(wl_resource_get_client($0.pointee.resource)!) },
                                 grabSerialValid: origin.map { wlr_seat_validate_pointer_grab_serial(seat, $0, event.serial) } ?? false,
                                 requester: server.selectionRequester.map(server.clientID))
            }
            if effects.contains(.acceptSelection(.drag)) {
                wlr_seat_start_pointer_drag(seat, event.drag, event.serial)
            } else {
                WlrootsVersion.destroyRefusedDrag(event.drag)
            }
        }
        updateCapabilities()
    }

    private func handleNewInput(_ device: UnsafeMutablePointer<wlr_input_device>) {
        switch device.pointee.type {
        case WLR_INPUT_DEVICE_KEYBOARD:
            guard let keyboard = Keyboard(device: device, input: self) else { return }
            keyboards.append(keyboard)
            WlrootsVersion.setSeatKeyboard(seat, device)
            server.drive { $0.keyboardAdded() }
        case WLR_INPUT_DEVICE_POINTER:
            wlr_cursor_attach_input_device(cursor, device)
            hasPointer = true
        case WLR_INPUT_DEVICE_TOUCH:
            wlr_cursor_attach_input_device(cursor, device)
            hasTouch = true
        default:
            break
        }
        updateCapabilities()
    }

    /// Whether Core lets a clipboard or primary selection through: during a
    /// session it must carry a serial of input the owner's focused client got.
    private func selectionAccepted(_ kind: SelectionKind, serial: UInt32) -> Bool {
        let focused = seat.pointee.keyboard_state.focused_client
        let effects = server.drive {
            $0.selectionRequested(kind, focusedClient: focused.map { server.clientID($0.pointee.client) },
                                  serialFromFocusedClient: focused.map { wlr_seat_client_validate_event_serial($0, serial) } ?? false,
                                  requester: server.selectionRequester.map(server.clientID))
        }
        return effects.contains(.acceptSelection(kind))
    }

    var physicalKeyboard: UnsafeMutablePointer<wlr_keyboard>? { (lastKeyboard ?? keyboards.last).map { WlrootsVersion.keyboard(of: $0.device) } }
    var physicalKeyboardDevice: UnsafeMutablePointer<wlr_input_device>? { (lastKeyboard ?? keyboards.last)?.device }

    /// Where a key from a keyboard goes, before any client sees it.
    enum KeyDestination { case client, inputMethod, carrel }

    /// Core decides whether a key is Carrel's (prompt, passcode entry, unlock
    /// keys, bindings), the input method's (its grab, while the focus may
    /// compose) or the focused client's — or Core holds it while the input
    /// method is away (`.carrel` here: nothing is sent now; a
    /// `.releaseHeldKeys` effect hands it on later).
    func keyDestination(keyboard: Keyboard, keycode: UInt32, pressed: Bool, time: UInt32) -> KeyDestination {
        lastKeyboard = keyboard
        let effects = keyEffects(keyboard: WlrootsVersion.keyboard(of: keyboard.device), keycode: keycode, pressed: pressed,
                                 time: time)
        for effect in effects {
            switch effect {
            case .deliverKey: return .client
            case .deliverKeyToInputMethod: return .inputMethod
            default: continue
            }
        }
        return .carrel
    }

    private func keyEffects(keyboard: UnsafeMutablePointer<wlr_keyboard>, keycode: UInt32, pressed: Bool,
                            time: UInt32) -> [DeskEffect] {
        let state = keyboard.pointee.xkb_state
        // libinput keycodes are evdev codes; xkbcommon's are offset by 8.
        var buffer = [CChar](repeating: 0, count: 64)
        let count = max(0, Int(xkb_state_key_get_utf8(state, keycode + 8, &buffer, buffer.count)))
        let text = String(decoding: buffer[..<min(count, buffer.count - 1)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let key = KeyPress(pressed: pressed, keysyms: Self.lowercasedKeysyms(keyboard, keycode),
                           keysym: xkb_state_key_get_one_sym(state, keycode + 8),
                           modifiers: Self.modifiers(of: keyboard), text: text,
                           // wlroots updates the modifiers after the key event: these are the ones it was typed under.
                           stroke: KeyStroke(keycode: keycode, pressed: pressed, time: time,
                                             modifiers: KeyStroke.Modifiers(depressed: keyboard.pointee.modifiers.depressed,
                                                                            latched: keyboard.pointee.modifiers.latched,
                                                                            locked: keyboard.pointee.modifiers.locked,
                                                                            group: keyboard.pointee.modifiers.group)))
        return server.drive { $0.key(key, now: AssessmentService.now()) }
    }

    /// The keysyms a key produces, lower-cased, as Core's matchers take them.
    private static func lowercasedKeysyms(_ keyboard: UnsafeMutablePointer<wlr_keyboard>, _ keycode: UInt32) -> [UInt32] {
        var symbols: UnsafePointer<xkb_keysym_t>?
        // libinput keycodes are evdev codes; xkbcommon's are offset by 8.
        let count = xkb_state_key_get_syms(keyboard.pointee.xkb_state, keycode + 8, &symbols)
        return (0..<Int(max(count, 0))).map { xkb_keysym_to_lower(symbols![$0]) }
    }

    private static func modifiers(of keyboard: UnsafeMutablePointer<wlr_keyboard>) -> Set<KeyCombination.Modifier> {
        let mask = wlr_keyboard_get_modifiers(keyboard)
        let table: [(wlr_keyboard_modifier, KeyCombination.Modifier)] =
            [(WLR_MODIFIER_CTRL, .ctrl), (WLR_MODIFIER_ALT, .alt), (WLR_MODIFIER_SHIFT, .shift), (WLR_MODIFIER_LOGO, .logo)]
        return Set(table.filter { mask & $0.0.rawValue != 0 }.map(\.1))
    }

    /// Keys Core held while the input method was away, handed on in order:
    /// to the engine's grab, or to `window` as plain keys. A window that is
    /// not the seat's focus (Core lets them go before focus moves, so this
    /// is rare) is entered for them and the focus put back after.
    func releaseHeldKeys(_ keys: [KeyPress], to destination: HeldKeyDestination) {
        let strokes = keys.compactMap(\.stroke)
        guard let keyboard = physicalKeyboard, let device = physicalKeyboardDevice else {
            server.logger.error("input method: \(strokes.count) held keys, but no keyboard to send them from")
            return
        }
        let window: WindowID
        switch destination {
        case .inputMethod(let target):
            if server.textInput?.sendHeldKeysToGrab(strokes, keyboard: keyboard) == true { return }
            // The grab went between Core's decision and now: the keys still arrive, plain.
            server.logger.warning("input method: the engine's grab went before its held keys were sent; they go to \(target) as plain keys")
            window = target
        case .window(let target):
            window = target
        }
        guard let surface = server.mappedSurface(of: window) else {
            server.logger.warning("input method: \(strokes.count) held keys were typed in \(window), which has gone; no window receives them")
            return
        }
        let previous = seat.pointee.keyboard_state.focused_surface
        if previous != surface { focusKeyboard(on: surface) }
        WlrootsVersion.setSeatKeyboard(seat, device)
        var sent: KeyStroke.Modifiers?
        for stroke in strokes {
            if stroke.modifiers != sent {
                var modifiers = wlr_keyboard_modifiers(stroke.modifiers)
                wlr_seat_keyboard_notify_modifiers(seat, &modifiers)
                sent = stroke.modifiers
            }
            wlr_seat_keyboard_notify_key(seat, stroke.time, stroke.keycode, stroke.waylandState)
        }
        wlr_seat_keyboard_notify_modifiers(seat, &keyboard.pointee.modifiers)
        if previous != surface { focusKeyboard(on: previous) }
    }

    func keyboardDestroyed(_ keyboard: Keyboard) {
        keyboards.removeAll { $0 === keyboard }
        updateCapabilities()
    }

    private func updateCapabilities() {
        var caps: UInt32 = 0
        if hasPointer { caps |= WL_SEAT_CAPABILITY_POINTER.rawValue }
        if !keyboards.isEmpty { caps |= WL_SEAT_CAPABILITY_KEYBOARD.rawValue }
        if hasTouch { caps |= WL_SEAT_CAPABILITY_TOUCH.rawValue }
        wlr_seat_set_capabilities(seat, caps)
    }

    /// Re-evaluates what is under the pointer after windows left or joined
    /// the scene, so no hidden window keeps pointer focus.
    func pointerFocusChanged() {
        let now = carrel_now()
        pointerMoved(time: UInt32(truncatingIfNeeded: Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000))
    }

    private func pointerMoved(time: UInt32) {
        server.magnifierPointerMoved(x: cursor.pointee.x, y: cursor.pointee.y)
        endPopupGrabCoreRefuses()
        if let hit = server.surface(atLayoutX: cursor.pointee.x, y: cursor.pointee.y) {
            wlr_seat_pointer_notify_enter(seat, hit.surface, hit.sx, hit.sy)
            wlr_seat_pointer_notify_motion(seat, time, hit.sx, hit.sy)
        } else {
            if !cursorThemeLoaded {
                cursorThemeLoaded = wlr_xcursor_manager_load(cursorManager, 1)
            }
            WlrootsVersion.setCursorImage(cursorManager, "left_ptr", cursor)
            wlr_seat_pointer_notify_clear_focus(seat)
        }
    }

    /// Ends a popup's grab of the seat that Core does not let stand: one
    /// whose client's window does not have keyboard focus. wlroots starts a
    /// grab on any client's `xdg_popup.grab`, unchecked, and while it lasts
    /// keyboard enters are ignored and the pointer enters only the grabbing
    /// client's surfaces: a participant's menu left open would keep the
    /// keyboard after the student switched back to the exam, and a hidden
    /// client's grab would swallow the exam's clicks. Run before every focus
    /// change and before input reaches the seat.
    func endPopupGrabCoreRefuses() {
        guard let grabber = carrel_popup_grab_client(server.xdgShell, seat) else { return }
        let client = server.clientID(grabber)
        if server.decide({ $0.seatGrabAllowed(for: client) }) { return }
        server.logger.info("ended the popup grab of client \(client): its window does not have keyboard focus")
        server.trace?.event("popup_grab_ended", ["client": .integer(Int64(clamping: client.raw))])
        carrel_popup_grab_end(server.xdgShell, seat)
    }

    /// Gives keyboard focus to `surface`, or takes it away when nil.
    func focusKeyboard(on surface: UnsafeMutablePointer<wlr_surface>?) {
        endPopupGrabCoreRefuses()
        guard let surface else {
            wlr_seat_keyboard_notify_clear_focus(seat)
            return
        }
        if let keyboard = wlr_seat_get_keyboard(seat) {
            wlr_seat_keyboard_notify_enter(seat, surface, &keyboard.pointee.keycodes.0,
                                           keyboard.pointee.num_keycodes, &keyboard.pointee.modifiers)
        } else {
            // No keyboard yet (headless): remember the focus so a keyboard that
            // appears later enters the right surface.
            wlr_seat_keyboard_notify_enter(seat, surface, nil, 0, nil)
        }
    }

    func destroy() {
        for keyboard in keyboards { keyboard.detach() }
        keyboards.removeAll()
        listeners.disconnectAll()
        wlr_xcursor_manager_destroy(cursorManager)
        wlr_cursor_destroy(cursor)
    }
}

/// One keyboard device with its keymap (from XKB_DEFAULT_* through xkbcommon).
final class Keyboard {
    let device: UnsafeMutablePointer<wlr_input_device>
    private unowned let input: Input
    private var listeners = ListenerBag()

    init?(device: UnsafeMutablePointer<wlr_input_device>, input: Input) {
        self.device = device
        self.input = input
        let keyboard = WlrootsVersion.keyboard(of: device)
        guard let context = xkb_context_new(XKB_CONTEXT_NO_FLAGS) else { return nil }
        defer { xkb_context_unref(context) }
        // nil rule names: xkbcommon reads XKB_DEFAULT_RULES/MODEL/LAYOUT/VARIANT/OPTIONS.
        guard let keymap = xkb_keymap_new_from_names(context, nil, XKB_KEYMAP_COMPILE_NO_FLAGS) else { return nil }
        defer { xkb_keymap_unref(keymap) }
        wlr_keyboard_set_keymap(keyboard, keymap)
        wlr_keyboard_set_repeat_info(keyboard, 25, 600)

        listeners.on(&keyboard.pointee.events.modifiers) { [unowned self] _ in
            if input.server.textInput?.modifiersGoToGrab(keyboard: keyboard) == true { return }
            WlrootsVersion.setSeatKeyboard(input.seat, self.device)
            wlr_seat_keyboard_notify_modifiers(input.seat, &keyboard.pointee.modifiers)
        }
        listeners.on(&keyboard.pointee.events.key) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.KeyboardKeyEvent.self).pointee
            switch input.keyDestination(keyboard: self, keycode: event.keycode,
                                        pressed: event.state == WL_KEYBOARD_KEY_STATE_PRESSED, time: event.time_msec) {
            case .carrel:
                return
            case .inputMethod:
                input.server.textInput?.sendKeyToGrab(keyboard: keyboard, time: event.time_msec,
                                                      keycode: event.keycode, state: event.state.rawValue)
                return
            case .client:
                break
            }
            input.endPopupGrabCoreRefuses()
            WlrootsVersion.setSeatKeyboard(input.seat, self.device)
            wlr_seat_keyboard_notify_key(input.seat, event.time_msec, event.keycode, event.state.rawValue)
        }
        listeners.on(&device.pointee.events.destroy) { [unowned self] _ in
            detach()
            input.keyboardDestroyed(self)
        }
    }

    func detach() {
        listeners.disconnectAll()
    }
}
