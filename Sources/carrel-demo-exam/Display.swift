import CarrelClientShim
#if canImport(Glibc)
import Glibc
#endif

/// The connection to the compositor and the desktop globals the exam window
/// needs (the assessment global is AssessmentKit's business).
final class Display {
    let display: OpaquePointer
    private var registry: OpaquePointer?
    private(set) var compositor: OpaquePointer?
    private(set) var compositorVersion: UInt32 = 0
    private(set) var shm: OpaquePointer?
    private(set) var wmBase: OpaquePointer?
    private(set) var seat: OpaquePointer?
    private(set) var seatVersion: UInt32 = 0

    /// Connects to $WAYLAND_DISPLAY and binds what a window needs.
    init() throws {
        guard let display = wl_display_connect(nil) else {
            let name = getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "(unset, so wayland-0)"
            throw DemoError("cannot connect to the Wayland display \(name): \(errnoText()). "
                + "Run the demo inside Carrel: carrel -- carrel-demo-exam")
        }
        self.display = display
        registry = wl_display_get_registry(display)
        wl_registry_add_listener(registry, registryListener, Unmanaged.passUnretained(self).toOpaque())
        // One roundtrip delivers every global the compositor offers us.
        guard wl_display_roundtrip(display) >= 0 else {
            throw DemoError("the connection failed while listing globals: \(errnoText(wl_display_get_error(display)))")
        }
        let missing = [("wl_compositor", compositor), ("wl_shm", shm), ("xdg_wm_base", wmBase)]
            .filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty else {
            throw DemoError("the compositor does not offer \(missing.joined(separator: ", ")), which a window needs")
        }
    }

    fileprivate func handleGlobal(name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "wl_compositor":
            // Version 4 brings wl_surface.damage_buffer.
            compositorVersion = min(version, 4)
            compositor = bind(name, interface, compositorVersion)
        case "wl_shm":
            shm = bind(name, interface, 1)
        case "xdg_wm_base":
            wmBase = bind(name, interface, 1)
            xdg_wm_base_add_listener(wmBase, wmBaseListener, nil)
        case "wl_seat" where seat == nil:
            // Version 5 is what our listeners are written against.
            seatVersion = min(version, 5)
            seat = bind(name, interface, seatVersion)
        default:
            break
        }
    }

    private func bind(_ name: UInt32, _ interface: String, _ version: UInt32) -> OpaquePointer? {
        guard let description = carrel_client_interface(interface) else { return nil }
        return OpaquePointer(wl_registry_bind(registry, name, description, version))
    }
}

private let registryListener = permanentListener(wl_registry_listener(
    global: { data, _, name, interface, version in
        guard let data, let interface else { return }
        Unmanaged<Display>.fromOpaque(data).takeUnretainedValue()
            .handleGlobal(name: name, interface: String(cString: interface), version: version)
    },
    global_remove: { _, _, _ in }
))

// A client that does not answer pings is considered unresponsive.
private let wmBaseListener = permanentListener(xdg_wm_base_listener(
    ping: { _, wmBase, serial in xdg_wm_base_pong(wmBase, serial) }
))
