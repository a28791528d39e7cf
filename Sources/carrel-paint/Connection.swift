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
    /// carrel_assessment_manager_v1, bound only when asked for and offered.
    private(set) var assessmentManager: OpaquePointer?
    /// Every global interface the compositor offered, in announcement order.
    private(set) var offeredInterfaces: [String] = []
    private let bindAssessment: Bool

    /// Connects to $WAYLAND_DISPLAY and binds the globals a window needs;
    /// `onConnected` runs as soon as the socket is open.
    /// `bindAssessment` also binds carrel_assessment_manager_v1 when offered.
    init(bindAssessment: Bool = false, onConnected: () -> Void = {}) throws {
        self.bindAssessment = bindAssessment
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
        offeredInterfaces.append(interface)
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
        case "carrel_assessment_manager_v1" where bindAssessment:
            assessmentManager = bind(name: name, interface: interface, version: 1)
            carrel_assessment_manager_v1_add_listener(assessmentManager, managerListener, nil)
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

    /// Like `dispatch(while:)`, but also calls `tick` every `intervalNanoseconds`
    /// whether or not events arrive (a client that commits on its own clock).
    func dispatch(while running: () -> Bool, every intervalNanoseconds: UInt64, tick: () -> Void) throws {
        func lost() -> PaintError {
            let code = wl_display_get_error(display)
            return PaintError("lost the connection to the compositor: \(String(cString: strerror(code == 0 ? errno : code)))")
        }
        var next = MilestoneLog.monotonicNanoseconds() + intervalNanoseconds
        while running() {
            while wl_display_prepare_read(display) != 0 {
                guard wl_display_dispatch_pending(display) >= 0 else { throw lost() }
            }
            // EAGAIN (a full socket) is retried on the next turn.
            if wl_display_flush(display) < 0 && errno != EAGAIN {
                wl_display_cancel_read(display)
                throw lost()
            }
            let now = MilestoneLog.monotonicNanoseconds()
            let timeoutMs = next > now ? Int32(clamping: (next - now + 999_999) / 1_000_000) : 0
            var pfd = pollfd(fd: wl_display_get_fd(display), events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, timeoutMs) > 0 {
                guard wl_display_read_events(display) >= 0 else { throw lost() }
            } else {
                wl_display_cancel_read(display)
            }
            guard wl_display_dispatch_pending(display) >= 0 else { throw lost() }
            let after = MilestoneLog.monotonicNanoseconds()
            if after >= next {
                tick()
                next += intervalNanoseconds
                if next < after { next = after + intervalNanoseconds }
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
