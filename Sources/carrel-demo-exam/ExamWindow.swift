import CarrelClientShim
import WaylandClientSupport
import CCairoLib

/// The exam's xdg_toplevel. It redraws as soon as it is told its content
/// changed and a buffer is free: there is no frame pacing, because changes
/// are rare and hiding the exam on interruption must not wait for anything.
final class ExamWindow {
    /// Paints the whole window: (cairo context, width, height).
    var paint: (OpaquePointer, Double, Double) -> Void = { _, _, _ in }
    var onClose: () -> Void = {}
    var onResize: (Double, Double) -> Void = { _, _ in }

    let surface: OpaquePointer
    /// Held so the display outlives this window's proxies.
    private let display: Display
    private let xdgSurface: OpaquePointer
    private let toplevel: OpaquePointer
    private let defaultSize: (width: Int32, height: Int32) = (1024, 640)
    private var configuredSize: (width: Int32, height: Int32) = (0, 0)
    private var hasConfigured = false
    private var needsDisplay = true
    /// Two let the compositor read one while we fill the other; a third
    /// covers a compositor that holds a buffer one frame longer.
    private var buffers: [PixelBuffer] = []
    private let maxBuffers = 3
    /// Whether a buffer has been committed, i.e. the toplevel is mapped
    /// (assessment sessions can begin only then).
    private(set) var isMapped = false

    init(display: Display, title: String) {
        self.display = display
        surface = wl_compositor_create_surface(display.compositor)
        xdgSurface = xdg_wm_base_get_xdg_surface(display.wmBase, surface)
        toplevel = xdg_surface_get_toplevel(xdgSurface)
        let data = Unmanaged.passUnretained(self).toOpaque()
        xdg_surface_add_listener(xdgSurface, xdgSurfaceListener, data)
        xdg_toplevel_add_listener(toplevel, toplevelListener, data)
        xdg_toplevel_set_title(toplevel, title)
        xdg_toplevel_set_app_id(toplevel, "carrel-demo-exam")
        // xdg-shell: the first commit carries no buffer; it asks for a configure.
        wl_surface_commit(surface)
    }

    deinit {
        // xdg-shell: the role object goes before the xdg_surface, that before the wl_surface.
        xdg_toplevel_destroy(toplevel)
        xdg_surface_destroy(xdgSurface)
        wl_surface_destroy(surface)
    }

    var size: (width: Int32, height: Int32) {
        configuredSize.width > 0 && configuredSize.height > 0 ? configuredSize : defaultSize
    }

    /// Redraws now if possible, else as soon as a buffer is released.
    func setNeedsDisplay() {
        needsDisplay = true
        drawIfPossible()
    }

    private func drawIfPossible() {
        guard needsDisplay, hasConfigured, let buffer = freeBuffer() else { return }
        needsDisplay = false
        let cairo = cairo_create(buffer.cairoSurface)!
        paint(cairo, Double(buffer.width), Double(buffer.height))
        cairo_destroy(cairo)
        buffer.attach(to: surface)
        if display.compositorVersion >= 4 {
            wl_surface_damage_buffer(surface, 0, 0, Int32.max, Int32.max)
        } else {
            wl_surface_damage(surface, 0, 0, Int32.max, Int32.max)
        }
        wl_surface_commit(surface)
        isMapped = true
    }

    /// A buffer of the current size the compositor is not reading, made if
    /// the pool has room; nil when all are in use.
    private func freeBuffer() -> PixelBuffer? {
        let (width, height) = size
        // Buffers of an earlier size go once released; busy ones on release.
        buffers.removeAll { ($0.width != width || $0.height != height) && !$0.isBusy }
        if let free = buffers.first(where: { $0.width == width && $0.height == height && !$0.isBusy }) {
            return free
        }
        guard buffers.count < maxBuffers, let shm = display.shm else { return nil }
        do {
            let buffer = try PixelBuffer(shm: shm, width: width, height: height)
            buffer.onRelease = { [unowned self] in self.drawIfPossible() }
            buffers.append(buffer)
            return buffer
        } catch {
            printError("\(error)")
            return nil
        }
    }

    fileprivate func handleToplevelConfigure(width: Int32, height: Int32) {
        configuredSize = (width, height)
    }

    fileprivate func handleSurfaceConfigure(serial: UInt32) {
        hasConfigured = true
        xdg_surface_ack_configure(xdgSurface, serial)
        let (width, height) = size
        onResize(Double(width), Double(height))
        // The commit that follows carries the ack; redraw for the new size.
        needsDisplay = true
        drawIfPossible()
        if needsDisplay {
            // No buffer free: commit the ack alone; the redraw follows a release.
            wl_surface_commit(surface)
        }
    }

    fileprivate func handleClose() { onClose() }
}

private func window(_ data: UnsafeMutableRawPointer?) -> ExamWindow {
    Unmanaged<ExamWindow>.fromOpaque(data!).takeUnretainedValue()
}

private let xdgSurfaceListener = staticListener(xdg_surface_listener(
    configure: { data, _, serial in window(data).handleSurfaceConfigure(serial: serial) }
))

private let toplevelListener = staticListener(xdg_toplevel_listener(
    configure: { data, _, width, height, _ in window(data).handleToplevelConfigure(width: width, height: height) },
    close: { data, _ in window(data).handleClose() },
    configure_bounds: { _, _, _, _ in },
    wm_capabilities: { _, _, _ in }
))
