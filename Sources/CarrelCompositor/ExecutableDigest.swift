import CarrelAudit
import Glibc

/// The SHA-256 of Carrel's own executable, which signed statements name.
/// The file is opened when this is made, at start, so what is hashed is what
/// runs even if the path is replaced later; its hundred megabytes are hashed
/// on a thread of their own at the lowest CPU priority, so neither the
/// Wayland socket nor the app's first frame waits for them. Asking for the
/// digest before the thread is done waits for it.
final class ExecutableDigest: @unchecked Sendable {
    private var lock = pthread_mutex_t()
    private var finished = pthread_cond_t()
    /// Guarded by `lock`; nil until the thread is done.
    private var digest: String?

    init(path: String = "/proc/self/exe") {
        pthread_mutex_init(&lock, nil)
        pthread_cond_init(&finished, nil)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            digest = "unreadable"
            return
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Job(owner: self, fd: fd)).toOpaque()
        let started = pthread_create(&thread, nil, { context in
            let job = Unmanaged<Job>.fromOpaque(context!).takeRetainedValue()
            // Nice 19 for this thread only: on Linux `PRIO_PROCESS, 0` is the calling thread.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            let value = Digest.sha256Hex(fileDescriptor: job.fd) ?? "unreadable"
            close(job.fd)
            job.owner.finish(value)
            return nil
        }, context)
        if started == 0 {
            pthread_detach(thread)
        } else {
            // No thread: hash here rather than name no digest.
            let job = Unmanaged<Job>.fromOpaque(context).takeRetainedValue()
            digest = Digest.sha256Hex(fileDescriptor: job.fd) ?? "unreadable"
            close(job.fd)
        }
    }

    /// The digest as lower-case hex, or "unreadable"; waits for the thread.
    var hex: String {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        while digest == nil { pthread_cond_wait(&finished, &lock) }
        return digest!
    }

    private func finish(_ value: String) {
        pthread_mutex_lock(&lock)
        digest = value
        pthread_cond_broadcast(&finished)
        pthread_mutex_unlock(&lock)
    }

    /// What the thread needs: the open file and where to put the result.
    private final class Job {
        let owner: ExecutableDigest
        let fd: Int32
        init(owner: ExecutableDigest, fd: Int32) {
            self.owner = owner
            self.fd = fd
        }
    }
}
