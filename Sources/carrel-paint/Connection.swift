import CarrelClientShim
#if canImport(Glibc)
import Glibc
#endif

/// The connection to the compositor and the globals carrel-paint binds.
final class Connection {
    let display: OpaquePointer
    private var registry: OpaquePointer?
    private(set) var compositor: OpaquePointer?
    private(set) var compositorVersion: UInt32 = 0
    private(set) var shm: OpaquePointer?
    private(set) var wmBase: OpaquePointer?

    /// Connects to $WAYLAND_DISPLAY and binds the globals a window needs;
    /// `onConnected` runs as soon as the socket is open.
    init(onConnected: () -> Void = {}) throws {
        guard let display = wl_display_connect(nil) else {
            let name = getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "(unset, so wayland-0)"
            throw PaintError(
                "cannot connect to the Wayland display \(name): \(errnoText()). "
                    + "Is a compositor running, and are WAYLAND_DISPLAY and XDG_RUNTIME_DIR set for it?")
        }
        self.display = display
        onConnected()
        registry = wl_display_get_registry(display)
        wl_registry_add_listener(registry, registryListener, Unmanaged.passUnretained(self).toOpaque())
        // One roundtrip delivers every global the compositor offers us.
        guard wl_display_roundtrip(display) >= 0 else {
            throw PaintError("the connection failed while listing globals: \(errnoText())")
        }
        let missing = [("wl_compositor", compositor), ("wl_shm", shm), ("xdg_wm_base", wmBase)]
            .filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty else {
            throw PaintError(
                "the compositor does not offer \(missing.joined(separator: ", ")), "
                    + "which a window needs; is this client's role allowed to show windows?")
        }
    }

    fileprivate func handleGlobal(name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "wl_compositor":
            // Version 4 brings wl_surface.damage_buffer.
            compositorVersion = min(version, 4)
            compositor = bind(name: name, interface: interface, version: compositorVersion)
        case "wl_shm":
            shm = bind(name: name, interface: interface, version: 1)
        case "xdg_wm_base":
            wmBase = bind(name: name, interface: interface, version: min(version, 2))
            xdg_wm_base_add_listener(wmBase, wmBaseListener, nil)
        default:
            break
        }
    }

    private func bind(name: UInt32, interface: String, version: UInt32) -> OpaquePointer? {
        guard let description = carrel_client_interface(interface) else { return nil }
        return OpaquePointer(wl_registry_bind(registry, name, description, version))
    }

    /// Dispatches events while `running()` holds, which handlers can end;
    /// throws when the connection fails.
    func dispatch(while running: () -> Bool) throws {
        while running() {
            if wl_display_dispatch(display) < 0 {
                let code = wl_display_get_error(display)
                throw PaintError("lost the connection to the compositor: \(String(cString: strerror(code)))")
            }
        }
    }

    deinit {
        wl_display_disconnect(display)
    }
}

private let registryListener = staticListener(wl_registry_listener(
    global: { data, _, name, interface, version in
        guard let data, let interface else { return }
        Unmanaged<Connection>.fromOpaque(data).takeUnretainedValue()
            .handleGlobal(name: name, interface: String(cString: interface), version: version)
    },
    global_remove: { _, _, _ in }
))

// The compositor considers a client that does not answer pings unresponsive.
private let wmBaseListener = staticListener(xdg_wm_base_listener(
    ping: { _, wmBase, serial in xdg_wm_base_pong(wmBase, serial) }
))
