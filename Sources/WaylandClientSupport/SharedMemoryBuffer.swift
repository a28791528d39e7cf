import CarrelClientShim
#if canImport(Glibc)
import Glibc
#endif

/// One XRGB8888 wl_buffer in its own memfd, mapped for drawing.
///
/// The compositor may read the pixels from attach until it sends
/// wl_buffer.release, so a buffer is `isBusy` in between and must not be
/// drawn into then. Its owner keeps it until released: `deinit` destroys it.
public final class SharedMemoryBuffer {
    public let width: Int32
    public let height: Int32
    public let stride: Int32
    /// The pixels, `stride * height` bytes.
    public let memory: UnsafeMutableRawPointer
    public let byteCount: Int
    public private(set) var isBusy = false
    /// Called after the compositor releases this buffer.
    public var onRelease: () -> Void = {}
    private let buffer: OpaquePointer?

    /// `stride` defaults to four bytes a pixel. Fails with a message when
    /// memory for the buffer cannot be had.
    public init(shm: OpaquePointer, width: Int32, height: Int32, stride: Int32? = nil) throws(SharedMemoryError) {
        let stride = stride ?? width * 4
        let byteCount = Int(stride) * Int(height)
        let fd = carrel_client_shm_create(byteCount)
        guard fd >= 0 else { throw SharedMemoryError("cannot create \(byteCount) bytes of shared memory: \(errnoText())") }
        // The pool and the mapping both keep the memory; the fd is not needed after.
        defer { close(fd) }
        guard let memory = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), memory != MAP_FAILED else {
            throw SharedMemoryError("cannot map \(byteCount) bytes of shared memory: \(errnoText())")
        }
        let pool = wl_shm_create_pool(shm, fd, Int32(byteCount))
        buffer = wl_shm_pool_create_buffer(pool, 0, width, height, stride, WL_SHM_FORMAT_XRGB8888.rawValue)
        // A buffer keeps its pool's memory alive; the pool object itself can go.
        wl_shm_pool_destroy(pool)
        self.width = width
        self.height = height
        self.stride = stride
        self.memory = memory
        self.byteCount = byteCount
        wl_buffer_add_listener(buffer, bufferListener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The pixels as 32-bit XRGB values.
    public var pixels: UnsafeMutablePointer<UInt32> {
        memory.bindMemory(to: UInt32.self, capacity: byteCount / 4)
    }

    /// Marks the buffer as handed to the compositor by the next commit.
    public func attach(to surface: OpaquePointer) {
        isBusy = true
        wl_surface_attach(surface, buffer, 0, 0)
    }

    fileprivate func handleRelease() {
        isBusy = false
        onRelease()
    }

    deinit {
        wl_buffer_destroy(buffer)
        munmap(memory, byteCount)
    }
}

/// Shared memory for a buffer could not be had; the text says why.
public struct SharedMemoryError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

private let bufferListener = staticListener(wl_buffer_listener(
    release: { data, _ in
        Unmanaged<SharedMemoryBuffer>.fromOpaque(data!).takeUnretainedValue().handleRelease()
    }
))
