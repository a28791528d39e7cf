import CarrelShim

/// A virtual keyboard of the input method (fcitx5 passes on the keys it does
/// not consume through one). Its keymap is the engine's own; its keys reach
/// only the window that may compose now, as Core decides.
final class VirtualKeyboard {
    let keyboard: UnsafeMutablePointer<wlr_virtual_keyboard_v1>
    let client: OpaquePointer
    private var listeners = ListenerBag()

    init(_ keyboard: UnsafeMutablePointer<wlr_virtual_keyboard_v1>, relay: TextInputRelay) {
        self.keyboard = keyboard
        client = wl_resource_get_client(keyboard.pointee.resource)
        let wlrKeyboard = WlrootsVersion.keyboard(of: WlrootsVersion.device(of: keyboard))
        listeners.on(&wlrKeyboard.pointee.events.key) { [unowned self, unowned relay] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.KeyboardKeyEvent.self).pointee
            relay.virtualKey(from: self, time: event.time_msec, keycode: event.keycode, state: event.state.rawValue)
        }
        listeners.on(&wlrKeyboard.pointee.events.modifiers) { [unowned self, unowned relay] _ in
            relay.virtualModifiers(from: self)
        }
        listeners.on(WlrootsVersion.destroySignal(of: keyboard)) { [unowned self, unowned relay] _ in
            listeners.disconnectAll()
            WlrootsVersion.releaseVirtualKeyboard(keyboard, loop: wl_display_get_event_loop(wl_client_get_display(client)))
            relay.virtualKeyboardDestroyed(self)
        }
    }

    /// The keyboard's input device, embedded in the wlroots object.
    var device: UnsafeMutablePointer<wlr_input_device> { WlrootsVersion.device(of: keyboard) }

    func detach() { listeners.disconnectAll() }
}
