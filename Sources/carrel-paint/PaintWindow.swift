import CarrelClientShim
import WaylandClientSupport

/// One xdg_toplevel filled with a solid colour, drawn once or on every frame.
final class PaintWindow {
    /// How the window looks and how big it wants to be.
    struct Look {
        var title: String
        var color: RGB
        /// Drawn when the compositor configures 0x0, leaving the size to us.
        var defaultSize: PixelSize
        /// Drawn whatever the compositor configures.
        var fixedSize: PixelSize?
        /// `--checker`: the cell size of a checkerboard of `color` and white.
        var checker: Int? = nil
    }

    /// When to ask the compositor for wl_surface.frame callbacks.
    enum FrameRequests {
        /// Never: a still window that nobody times.
        case never
        /// With the first commit only, so its presentation can be timed.
        case firstOnly
        /// After every frame; an idle window re-commits just the request.
        case every
        /// After every frame, with a redraw in a slightly different colour.
        case everyAnimated
    }

    var onClose: () -> Void = {}
    var onFirstCommit: () -> Void = {}
    /// Called with the number of frame callbacks done so far.
    var onFrameDone: (Int) -> Void = { _ in }

    let toplevel: OpaquePointer
    /// Held so the display outlives this window's proxies.
    private let connection: Connection
    private let look: Look
    private let frameRequests: FrameRequests
    private let milestones: MilestoneLog?
    let surface: OpaquePointer
    private let xdgSurface: OpaquePointer

    /// The size from the latest xdg_toplevel.configure; 0x0 leaves it to us.
    private var configuredSize = PixelSize(width: 0, height: 0)
    private var hasConfigured = false
    /// The size of the buffer last committed; nil before the first.
    private var drawnSize: PixelSize?
    private var commits = 0
    private var framesDone = 0
    private var frameCallback: OpaquePointer?
    /// Two let the compositor read one while we fill the other; a third
    /// covers a compositor that holds a buffer one frame longer.
    private var buffers: [ShmBuffer] = []
    private let maxBuffers = 3
    private var waitingForBuffer = false
    /// Whether the last `toggleFullscreen` asked for fullscreen.
    private var askedFullscreen = false

    /// Creates the toplevel and sends the initial commit that asks for the
    /// first configure. `milestones` is given for the window benchmarks time.
    init(connection: Connection, look: Look, frameRequests: FrameRequests,
         parent: PaintWindow? = nil, milestones: MilestoneLog? = nil) {
        self.connection = connection
        self.look = look
        self.frameRequests = frameRequests
        self.milestones = milestones
        surface = wl_compositor_create_surface(connection.compositor)
        xdgSurface = xdg_wm_base_get_xdg_surface(connection.wmBase, surface)
        toplevel = xdg_surface_get_toplevel(xdgSurface)

        let data = Unmanaged.passUnretained(self).toOpaque()
        xdg_surface_add_listener(xdgSurface, xdgSurfaceListener, data)
        xdg_toplevel_add_listener(toplevel, toplevelListener, data)
        xdg_toplevel_set_title(toplevel, look.title)
        xdg_toplevel_set_app_id(toplevel, "carrel-paint")
        if let parent {
            xdg_toplevel_set_parent(toplevel, parent.toplevel)
        }
        // xdg-shell: the first commit carries no buffer; it asks for a configure.
        wl_surface_commit(surface)
    }

    deinit {
        if let frameCallback { wl_callback_destroy(frameCallback) }
        // xdg-shell requires the role object to go before the xdg_surface,
        // and the xdg_surface before the wl_surface.
        xdg_toplevel_destroy(toplevel)
        xdg_surface_destroy(xdgSurface)
        wl_surface_destroy(surface)
    }

    /// The size the next frame is drawn at.
    private var drawSize: PixelSize {
        look.fixedSize ?? (configuredSize.isZero ? look.defaultSize : configuredSize)
    }

    // MARK: Events

    fileprivate func handleToplevelConfigure(width: Int32, height: Int32) {
        configuredSize = PixelSize(width: width, height: height)
    }

    fileprivate func handleSurfaceConfigure(serial: UInt32) {
        if !hasConfigured {
            hasConfigured = true
            milestones?.reach(.firstConfigure)
        }
        xdg_surface_ack_configure(xdgSurface, serial)
        // An animated window already has a frame on its way; that frame
        // picks up the new size and carries the ack. Otherwise commit now.
        if frameRequests == .everyAnimated && frameCallback != nil { return }
        if frameRequests != .everyAnimated && drawnSize == drawSize {
            // Only states changed (activated, ...): the pixels stay, the
            // commit is needed to apply the ack.
            wl_surface_commit(surface)
            return
        }
        draw()
    }

    fileprivate func handleClose() {
        onClose()
    }

    fileprivate func handleFrameDone() {
        if let frameCallback { wl_callback_destroy(frameCallback) }
        frameCallback = nil
        framesDone += 1
        if framesDone == 1 { milestones?.reach(.firstFrameDone) }
        onFrameDone(framesDone)

        switch frameRequests {
        case .everyAnimated:
            draw()
        case .every:
            requestFrame()
            wl_surface_commit(surface)
        case .never, .firstOnly:
            break
        }
    }

    private func handleBufferRelease() {
        dropBuffersOfOtherSizes()
        if waitingForBuffer {
            waitingForBuffer = false
            draw()
        }
    }

    // MARK: Drawing on the client's own clock

    /// Draws and commits a new frame now, whatever the frame callbacks say
    /// (a client that ignores throttling); skipped before the first
    /// configure and while every buffer is with the compositor.
    func commitUnthrottledFrame() {
        guard hasConfigured, freeBufferAvailable else { return }
        draw(varying: true)
    }

    /// Asks to be fullscreen, then not, by turns: a client trying to get on top.
    func toggleFullscreen() {
        askedFullscreen.toggle()
        if askedFullscreen {
            xdg_toplevel_set_fullscreen(toplevel, nil)
        } else {
            xdg_toplevel_unset_fullscreen(toplevel)
        }
    }

    private var freeBufferAvailable: Bool {
        buffers.contains { $0.size == drawSize && !$0.isBusy } || buffers.count < maxBuffers
    }

    // MARK: Drawing

    private func draw(varying: Bool = false) {
        guard let buffer = freeBuffer() else {
            // Every buffer is still with the compositor; draw on the next release.
            waitingForBuffer = true
            return
        }
        let color = frameRequests == .everyAnimated || varying ? look.color.varied(by: UInt32(truncatingIfNeeded: commits)) : look.color
        if let cell = look.checker {
            buffer.fillChecker(color, cell: cell)
        } else {
            buffer.fill(color)
        }
        buffer.attach(to: surface)
        drawnSize = buffer.size
        if connection.compositorVersion >= 4 {
            wl_surface_damage_buffer(surface, 0, 0, Int32.max, Int32.max)
        } else {
            wl_surface_damage(surface, 0, 0, Int32.max, Int32.max)
        }
        if frameRequests != .never && (commits == 0 || frameRequests != .firstOnly) {
            requestFrame()
        }
        wl_surface_commit(surface)
        commits += 1
        if commits == 1 {
            milestones?.reach(.firstCommit)
            onFirstCommit()
        }
    }

    private func requestFrame() {
        guard frameCallback == nil else { return }
        frameCallback = wl_surface_frame(surface)
        wl_callback_add_listener(frameCallback, frameListener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A buffer of the current size the compositor is not reading, made if
    /// there is none and the pool has room; nil when all are in use.
    private func freeBuffer() -> ShmBuffer? {
        dropBuffersOfOtherSizes()
        let size = drawSize
        if let free = buffers.first(where: { $0.size == size && !$0.isBusy }) {
            return free
        }
        guard buffers.count < maxBuffers, let shm = connection.shm else { return nil }
        do {
            let buffer = try ShmBuffer(connection: connection, shm: shm, size: size)
            buffer.onRelease = { [unowned self] in self.handleBufferRelease() }
            buffers.append(buffer)
            return buffer
        } catch {
            printError("\(error)")
            return nil
        }
    }

    /// Frees buffers left over from an earlier size, once the compositor has
    /// released them; busy ones go on their release.
    private func dropBuffersOfOtherSizes() {
        let size = drawSize
        buffers.removeAll { $0.size != size && !$0.isBusy }
    }
}

private func window(_ data: UnsafeMutableRawPointer?) -> PaintWindow {
    Unmanaged<PaintWindow>.fromOpaque(data!).takeUnretainedValue()
}

private let xdgSurfaceListener = staticListener(xdg_surface_listener(
    configure: { data, _, serial in window(data).handleSurfaceConfigure(serial: serial) }
))

private let toplevelListener = staticListener(xdg_toplevel_listener(
    configure: { data, _, width, height, _ in
        window(data).handleToplevelConfigure(width: width, height: height)
    },
    close: { data, _ in window(data).handleClose() },
    configure_bounds: { _, _, _, _ in },
    wm_capabilities: { _, _, _ in }
))

private let frameListener = staticListener(wl_callback_listener(
    done: { data, _, _ in window(data).handleFrameDone() }
))
