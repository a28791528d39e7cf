import CarrelClientShim
import CCairoLib
#if canImport(Glibc)
import Glibc
#endif

/// One XRGB8888 wl_buffer in its own memfd, with a cairo surface over the
/// same memory. The compositor may read it from attach until release, so it
/// is `busy` in between and must not be drawn into.
final class PixelBuffer {
    let width: Int32
    let height: Int32
    let cairoSurface: OpaquePointer
    private let buffer: OpaquePointer
    private let memory: UnsafeMutableRawPointer
    private let byteCount: Int
    private(set) var isBusy = false
    var onRelease: () -> Void = {}

    init(shm: OpaquePointer, width: Int32, height: Int32) throws {
        // cairo's RGB24 is XRGB8888 in native (little-endian) order, 4 bytes a pixel.
        let stride = cairo_format_stride_for_width(CAIRO_FORMAT_RGB24, width)
        let byteCount = Int(stride) * Int(height)
        let fd = carrel_client_shm_create(byteCount)
        guard fd >= 0 else { throw DemoError("cannot create \(byteCount) bytes of shared memory: \(errnoText())") }
        // The pool and the mapping keep the memory; the fd is not needed after.
        defer { close(fd) }
        guard let memory = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), memory != MAP_FAILED else {
            throw DemoError("cannot map \(byteCount) bytes of shared memory: \(errnoText())")
        }
        let pool = wl_shm_create_pool(shm, fd, Int32(byteCount))
        buffer = wl_shm_pool_create_buffer(pool, 0, width, height, stride, WL_SHM_FORMAT_XRGB8888.rawValue)
        // A buffer keeps its pool's memory alive; the pool object can go.
        wl_shm_pool_destroy(pool)
        cairoSurface = cairo_image_surface_create_for_data(
            memory.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24, width, height, stride)
        self.memory = memory
        self.byteCount = byteCount
        self.width = width
        self.height = height
        wl_buffer_add_listener(buffer, bufferListener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Hands the pixels to the compositor with the next commit.
    func attach(to surface: OpaquePointer) {
        cairo_surface_flush(cairoSurface)
        isBusy = true
        wl_surface_attach(surface, buffer, 0, 0)
    }

    fileprivate func handleRelease() {
        isBusy = false
        onRelease()
    }

    deinit {
        cairo_surface_destroy(cairoSurface)
        wl_buffer_destroy(buffer)
        munmap(memory, byteCount)
    }
}

private let bufferListener = permanentListener(wl_buffer_listener(
    release: { data, _ in Unmanaged<PixelBuffer>.fromOpaque(data!).takeUnretainedValue().handleRelease() }
))
