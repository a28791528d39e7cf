import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// The connection to the compositor and the desktop globals the exam window
/// needs (the assessment global is AssessmentKit's business).
final class Display: WaylandConnection {
    private(set) var compositor: OpaquePointer?
    private(set) var compositorVersion: UInt32 = 0
    private(set) var shm: OpaquePointer?
    private(set) var wmBase: OpaquePointer?
    private(set) var seat: OpaquePointer?
    private(set) var seatVersion: UInt32 = 0
    /// text-input-v3, for the free-text question's input method; nil when not offered.
    private(set) var textInputManager: OpaquePointer?

    /// Connects to $WAYLAND_DISPLAY and binds what a window needs.
    init() throws {
        do {
            try super.init()
        } catch .cannotConnect(let name, let reason) {
            throw DemoError("cannot connect to the Wayland display \(name): \(reason). "
                + "Run the demo inside Carrel: carrel -- carrel-demo-exam")
        }
        guard listGlobals() else {
            throw DemoError("the connection failed while listing globals: \(errnoText(wl_display_get_error(display)))")
        }
        // Version 4 brings wl_surface.damage_buffer.
        if let (proxy, version) = bind("wl_compositor", maxVersion: 4) {
            compositor = proxy
            compositorVersion = version
        }
        shm = bind("wl_shm", maxVersion: 1)?.proxy
        wmBase = bind("xdg_wm_base", maxVersion: 1)?.proxy
        if let wmBase { xdg_wm_base_add_listener(wmBase, wmBaseListener, nil) }
        // Version 5 is what our listeners are written against.
        if let (proxy, version) = bind("wl_seat", maxVersion: 5) {
            seat = proxy
            seatVersion = version
        }
        textInputManager = bind("zwp_text_input_manager_v3", maxVersion: 1)?.proxy
        let missing = [("wl_compositor", compositor), ("wl_shm", shm), ("xdg_wm_base", wmBase)]
            .filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty else {
            throw DemoError("the compositor does not offer \(missing.joined(separator: ", ")), which a window needs")
        }
    }
}

// A client that does not answer pings is considered unresponsive.
private let wmBaseListener = staticListener(xdg_wm_base_listener(
    ping: { _, wmBase, serial in xdg_wm_base_pong(wmBase, serial) }
))
