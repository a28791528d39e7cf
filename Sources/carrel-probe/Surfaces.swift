import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// One XRGB8888 wl_buffer of one colour (WaylandClientSupport's shared-memory
/// buffer). Kept until the probe exits: it never redraws into a buffer, so
/// release does not matter.
final class SolidBuffer {
    private let buffer: SharedMemoryBuffer
    var width: Int32 { buffer.width }
    var height: Int32 { buffer.height }

    init(shm: OpaquePointer, width: Int32, height: Int32, color: RGB) throws {
        do {
            buffer = try SharedMemoryBuffer(shm: shm, width: width, height: height)
        } catch {
            throw ProbeError(error.description)
        }
        buffer.pixels.update(repeating: color.xrgb8888, count: buffer.byteCount / 4)
    }

    func attach(to surface: OpaquePointer) {
        buffer.attach(to: surface)
    }
}

/// A surface of the probe with an xdg role (toplevel or popup), filled with
/// one colour, that records what the compositor did with it: configures,
/// states, whether its frame callback was answered (wlroots' scene answers
/// frame callbacks only for surfaces it shows on an output).
final class ProbeSurface {
    enum Kind { case toplevel, popup }

    let kind: Kind
    let surface: OpaquePointer
    private let xdgSurface: OpaquePointer
    private(set) var toplevel: OpaquePointer?
    private(set) var popup: OpaquePointer?
    private unowned let session: Session
    private let color: RGB
    private let defaultSize: (Int32, Int32)

    private var pendingSize: (Int32, Int32) = (0, 0)
    private(set) var pendingStates: [UInt32] = []
    private(set) var states: [UInt32] = []
    private(set) var configures = 0
    private(set) var configuredSize: (Int32, Int32)?
    private(set) var committedAt: Double?
    private(set) var frameDoneAt: Double?
    private(set) var popupDismissed = false
    private(set) var closeRequested = false
    private var frameCallback: OpaquePointer?
    private var buffers: [SolidBuffer] = []

    /// A toplevel with `title`; the first (empty) commit asks for a configure.
    init(toplevelIn session: Session, title: String, color: RGB) {
        kind = .toplevel
        self.session = session
        self.color = color
        defaultSize = (640, 480)
        surface = wl_compositor_create_surface(session.compositor)
        xdgSurface = xdg_wm_base_get_xdg_surface(session.wmBase, surface)
        let toplevel = xdg_surface_get_toplevel(xdgSurface)!
        self.toplevel = toplevel
        let me = Unmanaged.passUnretained(self).toOpaque()
        xdg_surface_add_listener(xdgSurface, xdgSurfaceListener, me)
        xdg_toplevel_add_listener(toplevel, toplevelListener, me)
        xdg_toplevel_set_title(toplevel, title)
        xdg_toplevel_set_app_id(toplevel, "carrel-probe")
        wl_surface_commit(surface)
    }

    /// A popup of `parent`, grabbing with `grabSerial` when given.
    init(popupOf parent: ProbeSurface, in session: Session, color: RGB, grabSerial: UInt32?) {
        kind = .popup
        self.session = session
        self.color = color
        defaultSize = (240, 160)
        surface = wl_compositor_create_surface(session.compositor)
        xdgSurface = xdg_wm_base_get_xdg_surface(session.wmBase, surface)
        let positioner = xdg_wm_base_create_positioner(session.wmBase)
        xdg_positioner_set_size(positioner, defaultSize.0, defaultSize.1)
        xdg_positioner_set_anchor_rect(positioner, 10, 10, 1, 1)
        xdg_positioner_set_anchor(positioner, XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT.rawValue)
        xdg_positioner_set_gravity(positioner, XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT.rawValue)
        let popup = xdg_surface_get_popup(xdgSurface, parent.xdgSurface, positioner)!
        xdg_positioner_destroy(positioner)
        self.popup = popup
        let me = Unmanaged.passUnretained(self).toOpaque()
        xdg_surface_add_listener(xdgSurface, xdgSurfaceListener, me)
        xdg_popup_add_listener(popup, popupListener, me)
        if let grabSerial, let seat = session.seat {
            xdg_popup_grab(popup, seat.seat, grabSerial)
        }
        wl_surface_commit(surface)
    }

    deinit {
        session.seat?.forget(surface)
        if let frameCallback { wl_callback_destroy(frameCallback) }
        if let popup { xdg_popup_destroy(popup) }
        if let toplevel { xdg_toplevel_destroy(toplevel) }
        xdg_surface_destroy(xdgSurface)
        wl_surface_destroy(surface)
    }

    var hasBuffer: Bool { committedAt != nil }

    var stateNames: [String] {
        states.compactMap { state -> String? in
            switch state {
            case XDG_TOPLEVEL_STATE_MAXIMIZED.rawValue: return "maximized"
            case XDG_TOPLEVEL_STATE_FULLSCREEN.rawValue: return "fullscreen"
            case XDG_TOPLEVEL_STATE_RESIZING.rawValue: return "resizing"
            case XDG_TOPLEVEL_STATE_ACTIVATED.rawValue: return "activated"
            default: return nil
            }
        }
    }

    func setFullscreenAndMaximized() {
        guard let toplevel else { return }
        xdg_toplevel_set_maximized(toplevel)
        xdg_toplevel_set_fullscreen(toplevel, nil)
        wl_surface_commit(surface)
    }

    /// The latest configure: "configured 1280x720 [fullscreen,activated]".
    var configurationText: String? {
        guard let size = configuredSize else { return nil }
        return "configured \(size.0)x\(size.1)" + (stateNames.isEmpty ? "" : " [\(stateNames.joined(separator: ","))]")
    }

    /// What happened to this surface, for a verdict's detail.
    func describe(timeout: Double) -> String {
        var parts: [String] = []
        if let configurationText {
            parts.append(configurationText)
        } else {
            parts.append("no configure within \(secondsText(timeout)), so it never had a buffer")
        }
        if let committedAt {
            if let frameDoneAt {
                parts.append("frame callback answered after \(milliseconds(frameDoneAt - committedAt)) (drawn on an output)")
            } else {
                parts.append("frame callback not answered within \(secondsText(timeout)) of its buffer (not drawn on any output)")
            }
        }
        if popupDismissed { parts.append("popup_done (dismissed by the compositor)") }
        return parts.joined(separator: "; ")
    }

    // MARK: Events

    fileprivate func handleToplevelConfigure(width: Int32, height: Int32, states: UnsafeMutablePointer<wl_array>?) {
        pendingSize = (width, height)
        pendingStates = []
        if let array = states?.pointee, let data = array.data {
            let count = array.size / MemoryLayout<UInt32>.size
            pendingStates = Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt32.self), count: count))
        }
    }

    fileprivate func handlePopupConfigure(width: Int32, height: Int32) {
        pendingSize = (width, height)
    }

    fileprivate func handleSurfaceConfigure(serial: UInt32) {
        configures += 1
        states = pendingStates
        xdg_surface_ack_configure(xdgSurface, serial)
        let width = pendingSize.0 > 0 ? pendingSize.0 : defaultSize.0
        let height = pendingSize.1 > 0 ? pendingSize.1 : defaultSize.1
        configuredSize = (width, height)
        if let last = buffers.last, last.width == width, last.height == height {
            wl_surface_commit(surface)
            return
        }
        guard let shm = session.shm else { return }
        do {
            let buffer = try SolidBuffer(shm: shm, width: width, height: height, color: color)
            buffers.append(buffer)
            buffer.attach(to: surface)
            wl_surface_damage(surface, 0, 0, Int32.max, Int32.max)
            if frameCallback == nil && frameDoneAt == nil {
                frameCallback = wl_surface_frame(surface)
                wl_callback_add_listener(frameCallback, frameListener, Unmanaged.passUnretained(self).toOpaque())
            }
            wl_surface_commit(surface)
            if committedAt == nil { committedAt = now() }
        } catch {
            printError("\(error)")
        }
    }

    fileprivate func handleFrameDone() {
        if let frameCallback { wl_callback_destroy(frameCallback) }
        frameCallback = nil
        if frameDoneAt == nil { frameDoneAt = now() }
    }

    fileprivate func handlePopupDone() { popupDismissed = true }
    fileprivate func handleClose() { closeRequested = true }
}

private func probeSurface(_ data: UnsafeMutableRawPointer?) -> ProbeSurface {
    Unmanaged<ProbeSurface>.fromOpaque(data!).takeUnretainedValue()
}

private let xdgSurfaceListener = staticListener(xdg_surface_listener(
    configure: { data, _, serial in probeSurface(data).handleSurfaceConfigure(serial: serial) }
))

private let toplevelListener = staticListener(xdg_toplevel_listener(
    configure: { data, _, width, height, states in
        probeSurface(data).handleToplevelConfigure(width: width, height: height, states: states)
    },
    close: { data, _ in probeSurface(data).handleClose() },
    configure_bounds: { _, _, _, _ in },
    wm_capabilities: { _, _, _ in }
))

private let popupListener = staticListener(xdg_popup_listener(
    configure: { data, _, _, _, width, height in probeSurface(data).handlePopupConfigure(width: width, height: height) },
    popup_done: { data, _ in probeSurface(data).handlePopupDone() },
    repositioned: { _, _, _ in }
))

private let frameListener = staticListener(wl_callback_listener(
    done: { data, _, _ in probeSurface(data).handleFrameDone() }
))
