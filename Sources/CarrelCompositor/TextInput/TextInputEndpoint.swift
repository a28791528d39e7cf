import CarrelShim

/// One client's text-input-v3 object: where composed text arrives. The
/// relay decides when it enters a surface and what it is sent.
final class TextInputEndpoint {
    let textInput: UnsafeMutablePointer<wlr_text_input_v3>
    let client: OpaquePointer
    private var listeners = ListenerBag()

    init(_ textInput: UnsafeMutablePointer<wlr_text_input_v3>, relay: TextInputRelay) {
        self.textInput = textInput
        client = wl_resource_get_client(textInput.pointee.resource)
        listeners.on(&textInput.pointee.events.enable) { [unowned self, unowned relay] _ in relay.enabled(self) }
        listeners.on(&textInput.pointee.events.commit) { [unowned self, unowned relay] _ in relay.committed(self) }
        listeners.on(&textInput.pointee.events.disable) { [unowned self, unowned relay] _ in relay.disabled(self) }
        listeners.on(&textInput.pointee.events.destroy) { [unowned self, unowned relay] _ in
            listeners.disconnectAll()
            relay.destroyed(self)
        }
    }

    var focusedSurface: UnsafeMutablePointer<wlr_surface>? { textInput.pointee.focused_surface }
    var isEnabled: Bool { textInput.pointee.current_enabled }

    /// Enters `surface` (leaving any other first), or leaves when nil.
    func focus(_ surface: UnsafeMutablePointer<wlr_surface>?) {
        guard focusedSurface != surface else { return }
        if focusedSurface != nil { wlr_text_input_v3_send_leave(textInput) }
        if let surface { wlr_text_input_v3_send_enter(textInput, surface) }
    }

    /// The client's surrounding text, cursor and anchor (bounded).
    var surrounding: (text: String, cursor: UInt32, anchor: UInt32)? {
        let state = textInput.pointee.current
        guard state.features & WLR_TEXT_INPUT_V3_FEATURE_SURROUNDING_TEXT.rawValue != 0 || state.surrounding.text != nil else { return nil }
        let text = state.surrounding.text.map { String(cString: $0) } ?? ""
        return (text, state.surrounding.cursor, state.surrounding.anchor)
    }

    var contentType: (hint: UInt32, purpose: UInt32) {
        (textInput.pointee.current.content_type.hint, textInput.pointee.current.content_type.purpose)
    }

    var textChangeCause: UInt32 { textInput.pointee.current.text_change_cause }

    /// The text cursor in surface coordinates.
    var cursorRectangle: wlr_box { textInput.pointee.current.cursor_rectangle }
    /// Whether the client reported where its text cursor is (the magnifier follows it).
    var reportsCursorRectangle: Bool {
        isEnabled && textInput.pointee.current.features & WLR_TEXT_INPUT_V3_FEATURE_CURSOR_RECTANGLE.rawValue != 0
    }

    func detach() { listeners.disconnectAll() }
}
