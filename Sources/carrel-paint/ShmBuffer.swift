import CarrelClientShim
#if canImport(Glibc)
import Glibc
#endif

/// One XRGB8888 wl_buffer in its own memfd, mapped for drawing.
///
/// The compositor may read the pixels from attach until it sends
/// wl_buffer.release, so a buffer is `busy` in between and must not be
/// drawn into then. Its owner keeps it until released, as destroying it
/// is what `deinit` does.
final class ShmBuffer {
    let size: PixelSize
    private let buffer: OpaquePointer?
    private let pixels: UnsafeMutablePointer<UInt32>
    private let byteCount: Int
    private(set) var isBusy = false
    /// Held so the display outlives this proxy: destroying a proxy after
    /// wl_display_disconnect touches freed memory.
    private let connection: Connection
    /// Called after the compositor releases this buffer.
    var onRelease: (() -> Void)?

    /// Fails with a message when memory for the buffer cannot be had.
    init(connection: Connection, shm: OpaquePointer, size: PixelSize) throws {
        let stride = Int(size.width) * 4
        let byteCount = stride * Int(size.height)
        let fd = carrel_client_shm_create(byteCount)
        guard fd >= 0 else {
            throw PaintError("could not create \(byteCount) bytes of shared memory: \(errnoText())")
        }
        // The pool and the mapping both keep the memory; the fd is not needed after.
        defer { close(fd) }
        let mapped = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        guard let mapped, mapped != MAP_FAILED else {
            throw PaintError("could not map \(byteCount) bytes of shared memory: \(errnoText())")
        }
        let pool = wl_shm_create_pool(shm, fd, Int32(byteCount))
        let buffer = wl_shm_pool_create_buffer(
            pool, 0, size.width, size.height, Int32(stride), WL_SHM_FORMAT_XRGB8888.rawValue)
        // A buffer keeps its pool's memory alive; the pool object itself can go.
        wl_shm_pool_destroy(pool)

        self.connection = connection
        self.size = size
        self.buffer = buffer
        self.byteCount = byteCount
        self.pixels = mapped.bindMemory(to: UInt32.self, capacity: byteCount / 4)
        wl_buffer_add_listener(buffer, bufferListener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Fills every pixel with `color`.
    func fill(_ color: RGB) {
        precondition(!isBusy, "drawing into a buffer the compositor may be reading")
        pixels.update(repeating: color.xrgb8888, count: byteCount / 4)
    }

    /// Marks the buffer as handed to the compositor by the next commit.
    func attach(to surface: OpaquePointer) {
        isBusy = true
        wl_surface_attach(surface, buffer, 0, 0)
    }

    fileprivate func handleRelease() {
        isBusy = false
        onRelease?()
    }

    deinit {
        wl_buffer_destroy(buffer)
        munmap(pixels, byteCount)
    }
}

private let bufferListener = staticListener(wl_buffer_listener(
    release: { data, _ in
        Unmanaged<ShmBuffer>.fromOpaque(data!).takeUnretainedValue().handleRelease()
    }
))
