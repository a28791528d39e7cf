import WaylandClientSupport

/// One of carrel-paint's XRGB8888 buffers, `size` large, filled with one
/// colour at a time (WaylandClientSupport's shared-memory buffer).
///
/// The compositor may read the pixels from attach until it sends
/// wl_buffer.release, so a buffer is `busy` in between and must not be
/// drawn into then. Its owner keeps it until released, as destroying it
/// is what `deinit` does.
final class ShmBuffer {
    let size: PixelSize
    private let buffer: SharedMemoryBuffer
    /// Held so the display outlives this proxy: destroying a proxy after
    /// wl_display_disconnect touches freed memory.
    private let connection: Connection
    /// Called after the compositor releases this buffer.
    var onRelease: (() -> Void)?

    var isBusy: Bool { buffer.isBusy }

    /// Fails with a message when memory for the buffer cannot be had.
    init(connection: Connection, shm: OpaquePointer, size: PixelSize) throws {
        do {
            buffer = try SharedMemoryBuffer(shm: shm, width: size.width, height: size.height)
        } catch {
            throw PaintError(error.description)
        }
        self.connection = connection
        self.size = size
        buffer.onRelease = { [weak self] in self?.onRelease?() }
    }

    /// Fills every pixel with `color`.
    func fill(_ color: RGB) {
        precondition(!isBusy, "drawing into a buffer the compositor may be reading")
        buffer.pixels.update(repeating: color.xrgb8888, count: buffer.byteCount / 4)
    }

    /// Fills it with `cell`×`cell` squares, `color` at the top-left corner,
    /// alternating with white.
    func fillChecker(_ color: RGB, cell: Int) {
        precondition(!isBusy, "drawing into a buffer the compositor may be reading")
        let width = Int(buffer.stride) / 4, white = RGB(0xffffff).xrgb8888
        for y in 0..<Int(size.height) {
            for x in 0..<width {
                buffer.pixels[y * width + x] = (x / cell + y / cell) % 2 == 0 ? color.xrgb8888 : white
            }
        }
    }

    /// Marks the buffer as handed to the compositor by the next commit.
    func attach(to surface: OpaquePointer) {
        buffer.attach(to: surface)
    }
}
