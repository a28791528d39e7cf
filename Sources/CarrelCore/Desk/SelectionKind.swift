/// What a client asked to put across the session boundary: the clipboard,
/// the primary selection, or a drag-and-drop.
public enum SelectionKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case clipboard
    case primary
    case drag

    public var description: String { rawValue }

    /// The blocked attempt's detail in the audit log when Carrel refuses it.
    var refusalDetail: String {
        switch self {
        case .clipboard: return "wl_data_device.set_selection without a serial of the focused session window's input"
        case .primary: return "primary selection set without a serial of the focused session window's input"
        case .drag: return "drag-and-drop refused (not from the session's windows, or without a pointer grab)"
        }
    }

    /// The log line when Carrel refuses it.
    var refusalLog: String {
        switch self {
        case .clipboard: return "refused a clipboard selection from a client outside the session"
        case .primary: return "refused a primary selection from a client outside the session"
        case .drag: return "refused a drag-and-drop"
        }
    }
}
