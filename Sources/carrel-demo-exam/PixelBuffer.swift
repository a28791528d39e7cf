import CCairoLib
import WaylandClientSupport

/// One XRGB8888 wl_buffer (WaylandClientSupport's shared-memory buffer) with
/// a cairo surface over the same memory. The compositor may read it from
/// attach until release, so it is `busy` in between and must not be drawn into.
final class PixelBuffer {
    let cairoSurface: OpaquePointer
    private let buffer: SharedMemoryBuffer
    var width: Int32 { buffer.width }
    var height: Int32 { buffer.height }
    var isBusy: Bool { buffer.isBusy }
    var onRelease: () -> Void = {}

    init(shm: OpaquePointer, width: Int32, height: Int32) throws {
        // cairo's RGB24 is XRGB8888 in native (little-endian) order, 4 bytes a pixel.
        let stride = cairo_format_stride_for_width(CAIRO_FORMAT_RGB24, width)
        do {
            buffer = try SharedMemoryBuffer(shm: shm, width: width, height: height, stride: stride)
        } catch {
            throw DemoError(error.description)
        }
        cairoSurface = cairo_image_surface_create_for_data(
            buffer.memory.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24, width, height, stride)
        buffer.onRelease = { [weak self] in self?.onRelease() }
    }

    /// Hands the pixels to the compositor with the next commit.
    func attach(to surface: OpaquePointer) {
        cairo_surface_flush(cairoSurface)
        buffer.attach(to: surface)
    }

    deinit {
        cairo_surface_destroy(cairoSurface)
    }
}
