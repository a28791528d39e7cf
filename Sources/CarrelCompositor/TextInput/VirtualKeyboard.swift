import CarrelShim

/// A virtual keyboard: the input method's (fcitx5 passes on the keys it does
/// not consume through one) or the on-screen keyboard's. Its keymap is the
/// client's own; its keys reach only the window Core decides for its role.
final class VirtualKeyboard {
    let keyboard: UnsafeMutablePointer<wlr_virtual_keyboard_v1>
    let client: OpaquePointer
    private var listeners = ListenerBag()

    init(_ keyboard: UnsafeMutablePointer<wlr_virtual_keyboard_v1>, host: VirtualKeyboardHost) {
        self.keyboard = keyboard
        client = wl_resource_get_client(keyboard.pointee.resource)
        let wlrKeyboard = WlrootsVersion.keyboard(of: WlrootsVersion.device(of: keyboard))
        listeners.on(&wlrKeyboard.pointee.events.key) { [unowned self, unowned host] data in
            let event = data!.assumingMemoryBound(to: WlrootsVersion.KeyboardKeyEvent.self).pointee
            host.key(from: self, time: event.time_msec, keycode: event.keycode, state: event.state.rawValue)
        }
        listeners.on(&wlrKeyboard.pointee.events.modifiers) { [unowned self, unowned host] _ in
            host.modifiers(from: self)
        }
        listeners.on(WlrootsVersion.destroySignal(of: keyboard)) { [unowned self, unowned host] _ in
            listeners.disconnectAll()
            WlrootsVersion.releaseVirtualKeyboard(keyboard, loop: wl_display_get_event_loop(wl_client_get_display(client)))
            host.destroyed(self)
        }
    }

    /// The keyboard's input device, embedded in the wlroots object.
    var device: UnsafeMutablePointer<wlr_input_device> { WlrootsVersion.device(of: keyboard) }

    func detach() { listeners.disconnectAll() }
}
