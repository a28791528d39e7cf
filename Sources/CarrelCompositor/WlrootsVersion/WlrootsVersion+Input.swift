import CarrelShim

/// Input's differences: 0.17+ renamed the event structs (wlr_event_pointer_*
/// became wlr_pointer_*_event), their device became the typed device, the seat
/// takes a wlr_keyboard, and 0.18 added the scroll's relative direction.
extension WlrootsVersion {
    #if CARREL_WLROOTS_SINCE_0_17
    typealias PointerMotionEvent = wlr_pointer_motion_event
    typealias PointerMotionAbsoluteEvent = wlr_pointer_motion_absolute_event
    typealias PointerButtonEvent = wlr_pointer_button_event
    typealias PointerAxisEvent = wlr_pointer_axis_event
    typealias TouchDownEvent = wlr_touch_down_event
    typealias TouchMotionEvent = wlr_touch_motion_event
    typealias TouchUpEvent = wlr_touch_up_event
    typealias KeyboardKeyEvent = wlr_keyboard_key_event

    static func device(_ e: PointerMotionEvent) -> UnsafeMutablePointer<wlr_input_device> { base(of: e.pointer) }
    static func device(_ e: PointerMotionAbsoluteEvent) -> UnsafeMutablePointer<wlr_input_device> { base(of: e.pointer) }
    static func device(_ e: TouchDownEvent) -> UnsafeMutablePointer<wlr_input_device> { base(of: e.touch) }
    static func device(_ e: TouchMotionEvent) -> UnsafeMutablePointer<wlr_input_device> { base(of: e.touch) }

    private static func base(of pointer: UnsafeMutablePointer<wlr_pointer>) -> UnsafeMutablePointer<wlr_input_device> {
        (UnsafeMutableRawPointer(pointer) + MemoryLayout<wlr_pointer>.offset(of: \wlr_pointer.base)!)
            .assumingMemoryBound(to: wlr_input_device.self)
    }

    private static func base(of touch: UnsafeMutablePointer<wlr_touch>) -> UnsafeMutablePointer<wlr_input_device> {
        (UnsafeMutableRawPointer(touch) + MemoryLayout<wlr_touch>.offset(of: \wlr_touch.base)!)
            .assumingMemoryBound(to: wlr_input_device.self)
    }
    #else
    typealias PointerMotionEvent = wlr_event_pointer_motion
    typealias PointerMotionAbsoluteEvent = wlr_event_pointer_motion_absolute
    typealias PointerButtonEvent = wlr_event_pointer_button
    typealias PointerAxisEvent = wlr_event_pointer_axis
    typealias TouchDownEvent = wlr_event_touch_down
    typealias TouchMotionEvent = wlr_event_touch_motion
    typealias TouchUpEvent = wlr_event_touch_up
    typealias KeyboardKeyEvent = wlr_event_keyboard_key

    static func device(_ e: PointerMotionEvent) -> UnsafeMutablePointer<wlr_input_device> { e.device }
    static func device(_ e: PointerMotionAbsoluteEvent) -> UnsafeMutablePointer<wlr_input_device> { e.device }
    static func device(_ e: TouchDownEvent) -> UnsafeMutablePointer<wlr_input_device> { e.device }
    static func device(_ e: TouchMotionEvent) -> UnsafeMutablePointer<wlr_input_device> { e.device }
    #endif

    /// Passes a scroll to the focused client.
    static func notifyAxis(_ seat: UnsafeMutablePointer<wlr_seat>, _ e: PointerAxisEvent) {
        #if CARREL_WLROOTS_SINCE_0_18
        wlr_seat_pointer_notify_axis(seat, e.time_msec, e.orientation, e.delta, e.delta_discrete, e.source,
                                     e.relative_direction)
        #else
        wlr_seat_pointer_notify_axis(seat, e.time_msec, e.orientation, e.delta, e.delta_discrete, e.source)
        #endif
    }

    /// The keyboard of a keyboard input device.
    static func keyboard(of device: UnsafeMutablePointer<wlr_input_device>) -> UnsafeMutablePointer<wlr_keyboard> {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_keyboard_from_input_device(device)
        #else
        device.pointee.keyboard
        #endif
    }

    /// Makes a keyboard device the seat's keyboard.
    static func setSeatKeyboard(_ seat: UnsafeMutablePointer<wlr_seat>, _ device: UnsafeMutablePointer<wlr_input_device>) {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_seat_set_keyboard(seat, wlr_keyboard_from_input_device(device))
        #else
        wlr_seat_set_keyboard(seat, device)
        #endif
    }

    /// Shows the theme's cursor `name` on `cursor`.
    static func setCursorImage(_ manager: UnsafeMutablePointer<wlr_xcursor_manager>, _ name: String, _ cursor: UnsafeMutablePointer<wlr_cursor>) {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_cursor_set_xcursor(cursor, manager, name)
        #else
        wlr_xcursor_manager_set_cursor_image(manager, name, cursor)
        #endif
    }
}
