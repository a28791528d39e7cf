/// Failures while bringing the compositor up; each says what to do.
public enum CompositorError: Error, CustomStringConvertible {
    case backend(String)
    case socket(String)
    case launch(String)
    case configuration(String)
    case control(String)

    public var description: String {
        switch self {
        case .backend(let m): return "cannot start the display backend: \(m)"
        case .socket(let m): return "cannot open a Wayland socket: \(m)"
        case .launch(let m): return "cannot launch the app: \(m)"
        case .configuration(let m): return "invalid configuration: \(m)"
        case .control(let m): return "cannot open the control socket: \(m)"
        }
    }
}
