/// The kinds of blocked attempt the audit log records (its `kind` field).
public enum AuditKind {
    /// A client bound a global it was not shown (a guessed name).
    public static let hiddenGlobal = "hidden_global"
    /// Screen capture: binding a capture global it was not shown, or a frame failed during a session.
    public static let capture = "capture"
    /// Typing or pointing on someone else's behalf (virtual keyboard, pointer, input method).
    public static let virtualInput = "virtual_input"
    /// A window of a client outside the session mapped while the session ran.
    public static let foreignWindow = "foreign_window"
    /// A client outside the session asked to be fullscreen or maximized (to get on top or take focus).
    public static let focusSteal = "focus_steal"
    /// Setting the clipboard, the primary selection, or starting a drag, refused.
    public static let clipboard = "clipboard"

    /// Every kind above, for reports that list each one.
    public static let all = [hiddenGlobal, capture, virtualInput, foreignWindow, focusSteal, clipboard]

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

/// A request the compositor's watch picked out: whether it is a
/// blocked attempt is decided here, from the restrictions in force.
public enum WatchedRequest: Sendable, Equatable {
    /// wl_registry.bind of `interface`; `visible`: the client was shown it.
    case bind(interface: String, visible: Bool)
    /// xdg_toplevel.set_fullscreen or set_maximized (`request`).
    case raise(request: String)
    /// wl_data_device.set_selection / start_drag, primary set_selection.
    case selection(request: String)
}

/// One blocked attempt as the audit log records it.
public struct BlockedAttempt: Sendable, Equatable {
    public var kind: String
    public var detail: String
    public init(kind: String, detail: String) { self.kind = kind; self.detail = detail }

    /// The attempt `request` from `client` is, or nil when it is allowed.
    /// During a session only its owner may raise its windows or touch the
    /// clipboard (any other client's request is refused, by wlroots or by
    /// Carrel, so it is recorded when it arrives). (Capture frames are
    /// recorded where Carrel fails them, one record a frame.)
    public static func of(_ request: WatchedRequest, from client: ClientID, restrictions: RestrictionSet?) -> BlockedAttempt? {
        switch request {
        case .bind(let interface, let visible):
            guard !visible else { return nil }
            return BlockedAttempt(kind: AuditKind.forRefusedBind(interface: interface),
                                  detail: "bound \(interface), a global it was not shown (the client is disconnected with a protocol error)")
        case .raise(let name):
            guard let restrictions, client != restrictions.owner else { return nil }
            return BlockedAttempt(kind: AuditKind.focusSteal, detail: "xdg_toplevel.\(name) during a session; ignored, its windows stay hidden")
        case .selection(let name):
            guard let restrictions, restrictions.isolateClipboard, client != restrictions.owner else { return nil }
            return BlockedAttempt(kind: AuditKind.clipboard, detail: "\(name) during a session, from outside it; refused")
        }
    }
}
