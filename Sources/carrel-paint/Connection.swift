import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// The connection to the compositor and the globals carrel-paint binds.
final class Connection: WaylandConnection {
    private(set) var compositor: OpaquePointer?
    private(set) var compositorVersion: UInt32 = 0
    private(set) var shm: OpaquePointer?
    private(set) var wmBase: OpaquePointer?
    /// carrel_assessment_manager_v1, bound only when asked for and offered.
    private(set) var assessmentManager: OpaquePointer?
    /// Every global interface the compositor offered, in announcement order.
    var offeredInterfaces: [String] { globals.map(\.interface) }

    /// Connects to $WAYLAND_DISPLAY and binds the globals a window needs;
    /// `onConnected` runs as soon as the socket is open.
    /// `bindAssessment` also binds carrel_assessment_manager_v1 when offered.
    /// wl_seat, bound only when asked for (`--print-keys`).
    private(set) var seat: OpaquePointer?

    /// `assessmentVersion`: the highest version to bind (3 for signed statements).
    init(bindAssessment: Bool = false, bindSeat: Bool = false, assessmentVersion: UInt32 = 1,
         onConnected: () -> Void = {}) throws {
        do {
            try super.init(onConnected: onConnected)
        } catch .cannotConnect(let name, let reason) {
            throw PaintError(
                "cannot connect to the Wayland display \(name): \(reason). "
                    + "Is a compositor running, and are WAYLAND_DISPLAY and XDG_RUNTIME_DIR set for it?")
        }
        guard listGlobals() else {
            throw PaintError("the connection failed while listing globals: \(errnoText())")
        }
        // Version 4 brings wl_surface.damage_buffer.
        if let (proxy, version) = bind("wl_compositor", maxVersion: 4) {
            compositor = proxy
            compositorVersion = version
        }
        shm = bind("wl_shm", maxVersion: 1)?.proxy
        wmBase = bind("xdg_wm_base", maxVersion: 2)?.proxy
        if let wmBase { xdg_wm_base_add_listener(wmBase, wmBaseListener, nil) }
        if bindSeat { seat = bind("wl_seat", maxVersion: 1)?.proxy }
        if bindAssessment, let manager = bind("carrel_assessment_manager_v1", maxVersion: assessmentVersion)?.proxy {
            assessmentManager = manager
            carrel_assessment_manager_v1_add_listener(manager, managerListener, nil)
        }
        let missing = [("wl_compositor", compositor), ("wl_shm", shm), ("xdg_wm_base", wmBase)]
            .filter { $0.1 == nil }.map(\.0)
        guard missing.isEmpty else {
            throw PaintError(
                "the compositor does not offer \(missing.joined(separator: ", ")), "
                    + "which a window needs; is this client's role allowed to show windows?")
        }
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

    /// Like `dispatch(while:)`, but also calls `tick` every `intervalNanoseconds`
    /// whether or not events arrive (a client that commits on its own clock).
    func dispatch(while running: () -> Bool, every intervalNanoseconds: UInt64, tick: () -> Void) throws {
        func lost() -> PaintError {
            let code = wl_display_get_error(display)
            return PaintError("lost the connection to the compositor: \(String(cString: strerror(code == 0 ? errno : code)))")
        }
        var next = MonotonicClock.nanoseconds() + intervalNanoseconds
        while running() {
            while wl_display_prepare_read(display) != 0 {
                guard wl_display_dispatch_pending(display) >= 0 else { throw lost() }
            }
            // EAGAIN (a full socket) is retried on the next turn.
            if wl_display_flush(display) < 0 && errno != EAGAIN {
                wl_display_cancel_read(display)
                throw lost()
            }
            let now = MonotonicClock.nanoseconds()
            let timeoutMs = next > now ? Int32(clamping: (next - now + 999_999) / 1_000_000) : 0
            var pfd = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, timeoutMs) > 0 {
                guard wl_display_read_events(display) >= 0 else { throw lost() }
            } else {
                wl_display_cancel_read(display)
            }
            guard wl_display_dispatch_pending(display) >= 0 else { throw lost() }
            let after = MonotonicClock.nanoseconds()
            if after >= next {
                tick()
                next += intervalNanoseconds
                if next < after { next = after + intervalNanoseconds }
            }
        }
    }

}

// The manager's announcements (features, lock state) are not needed to begin.
private let managerListener = staticListener(carrel_assessment_manager_v1_listener(
    feature: { _, _, _, _ in },
    lock_state: { _, _, _ in },
    done: { _, _ in }
))

// The compositor considers a client that does not answer pings unresponsive.
private let wmBaseListener = staticListener(xdg_wm_base_listener(
    ping: { _, wmBase, serial in xdg_wm_base_pong(wmBase, serial) }
))
