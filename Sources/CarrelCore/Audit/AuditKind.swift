/// The kinds of blocked attempt the audit log records (its `kind` field).
public enum AuditKind {
    /// A client bound a global it was not shown (a guessed name).
    public static let hiddenGlobal = "hidden_global"
    /// Screen capture: binding a capture global, or asking for a frame, while refused.
    public static let capture = "capture"
    /// Typing or pointing on someone else's behalf (virtual keyboard, pointer, input method).
    public static let virtualInput = "virtual_input"
    /// A window of a client outside the session mapped while the session ran.
    public static let foreignWindow = "foreign_window"
    /// A client outside the session asked to be fullscreen or maximized (to get on top or take focus).
    public static let focusSteal = "focus_steal"
    /// Setting the clipboard, the primary selection, or starting a drag, refused.
    public static let clipboard = "clipboard"

    static let virtualInputInterfaces: Set<String> = [
        "zwp_virtual_keyboard_manager_v1", "zwp_virtual_keyboard_v1", "zwlr_virtual_pointer_manager_v1",
        "zwp_input_method_manager_v2",
    ]
    static let captureInterfaces: Set<String> = [
        "zwlr_screencopy_manager_v1", "zwlr_export_dmabuf_manager_v1", "ext_image_copy_capture_manager_v1",
        "ext_output_image_capture_source_manager_v1",
    ]

    /// The kind of a refused bind of `interface`: capture and virtual input
    /// by name, any other hidden global as such.
    public static func forRefusedBind(interface: String) -> String {
        if virtualInputInterfaces.contains(interface) { return virtualInput }
        if captureInterfaces.contains(interface) { return capture }
        return hiddenGlobal
    }
}
