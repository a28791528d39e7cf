import CarrelCore
import CarrelShim
import Logging

/// The virtual-keyboard global and every virtual keyboard bound through it:
/// the input method's (keys it does not consume) and the on-screen
/// keyboard's. The role table shows the global to those two roles only;
/// each key goes where Core's Desk says for the keyboard's role, or nowhere.
final class VirtualKeyboardHost {
    private unowned let server: Server
    private let seat: UnsafeMutablePointer<wlr_seat>
    private var listeners = ListenerBag()
    private var keyboards: [VirtualKeyboard] = []
    /// Keys each virtual keyboard pressed into a window and has not released.
    private var down: [ObjectIdentifier: Set<UInt32>] = [:]

    init(server: Server, seat: UnsafeMutablePointer<wlr_seat>) {
        self.server = server
        self.seat = seat
        let manager = wlr_virtual_keyboard_manager_v1_create(server.display)!
        listeners.on(&manager.pointee.events.new_virtual_keyboard) { [unowned self] data in
            keyboards.append(VirtualKeyboard(data!.assumingMemoryBound(to: wlr_virtual_keyboard_v1.self), host: self))
        }
    }

    private func delivers(_ keyboard: VirtualKeyboard) -> Bool {
        let effects = server.decide {
            $0.virtualKeyboardKey(from: server.clientID(keyboard.client), role: server.role(of: keyboard.client))
        }
        return effects.contains { if case .deliverKey = $0 { return true } else { return false } }
    }

    func key(from keyboard: VirtualKeyboard, time: UInt32, keycode: UInt32, state: UInt32) {
        // The engine passing a key on answers one it was sent (Core counts them for its death).
        server.decide {
            $0.inputMethodAnswered(by: server.clientID(keyboard.client), press: state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue,
                                   now: AssessmentService.now())
        }
        let kind = state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue ? "press" : "release"
        guard delivers(keyboard) else {
            server.logger.debug("input method: a virtual keyboard's \(kind) reaches no window")
            return
        }
        server.logger.debug("input method: a virtual keyboard passed on a \(kind)")
        WlrootsVersion.setSeatKeyboard(seat, keyboard.device)
        wlr_seat_keyboard_notify_key(seat, time, keycode, state)
        if state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue {
            down[ObjectIdentifier(keyboard), default: []].insert(keycode)
        } else {
            down[ObjectIdentifier(keyboard)]?.remove(keycode)
        }
    }

    func modifiers(from keyboard: VirtualKeyboard) {
        guard delivers(keyboard) else { return }
        WlrootsVersion.setSeatKeyboard(seat, keyboard.device)
        wlr_seat_keyboard_notify_modifiers(seat, &WlrootsVersion.keyboard(of: keyboard.device).pointee.modifiers)
    }

    func destroyed(_ keyboard: VirtualKeyboard) {
        keyboards.removeAll { $0 === keyboard }
        // The seat must not keep pointing at a keyboard that is going away.
        if let physical = server.input.physicalKeyboardDevice { WlrootsVersion.setSeatKeyboard(seat, physical) }
        // A keyboard killed between a press and its release (an engine's
        // kill -9) would leave the key down in the window, repeating: the
        // window gets the releases it is owed.
        if let stuck = down.removeValue(forKey: ObjectIdentifier(keyboard)), !stuck.isEmpty {
            let now = carrel_now()
            let time = UInt32(truncatingIfNeeded: Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000)
            for keycode in stuck.sorted() {
                wlr_seat_keyboard_notify_key(seat, time, keycode, WL_KEYBOARD_KEY_STATE_RELEASED.rawValue)
            }
            server.logger.notice("input method: a virtual keyboard went with \(stuck.count) keys down; released them in the window")
        }
    }

    func destroy() {
        for keyboard in keyboards { keyboard.detach() }
        keyboards.removeAll()
        listeners.disconnectAll()
    }
}
