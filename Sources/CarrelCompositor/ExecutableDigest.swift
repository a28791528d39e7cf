import CarrelAudit
import Glibc

/// The SHA-256 of Carrel's own executable, which signed statements name.
/// The file is opened when this is made, at start, so what is hashed is what
/// runs even if the path is replaced later; its hundred megabytes are hashed
/// on a thread of their own, so neither the Wayland socket nor the app's
/// first frame waits for them. Asking for the digest before the thread is
/// done joins it (the event loop waits for the rest of the hashing).
final class ExecutableDigest {
    /// Written by the thread before it ends; read only after joining it.
    private final class Result: @unchecked Sendable {
        let fd: Int32
        var digest = "unreadable"
        init(fd: Int32) { self.fd = fd }
    }

    private let result: Result
    private var thread: pthread_t?

    init(path: String = "/proc/self/exe") {
        result = Result(fd: open(path, O_RDONLY | O_CLOEXEC))
        guard result.fd >= 0 else { return }
        var started = pthread_t()
        let context = Unmanaged.passRetained(result).toOpaque()
        if pthread_create(&started, nil, { context in
            let result = Unmanaged<Result>.fromOpaque(context!).takeRetainedValue()
            result.digest = Digest.sha256Hex(fileDescriptor: result.fd) ?? "unreadable"
            close(result.fd)
            return nil
        }, context) == 0 {
            thread = started
        } else {
            // No thread: hash here rather than name no digest.
            Unmanaged<Result>.fromOpaque(context).release()
            result.digest = Digest.sha256Hex(fileDescriptor: result.fd) ?? "unreadable"
            close(result.fd)
        }
    }

    /// The digest as lower-case hex, or "unreadable"; the first call joins the thread.
    var hex: String {
        if let running = thread {
            pthread_join(running, nil)  // the join orders the thread's write before this read
            thread = nil
        }
        return result.digest
    }
}
