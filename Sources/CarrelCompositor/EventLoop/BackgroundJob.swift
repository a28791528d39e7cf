import CarrelShim
import Glibc

/// Work that must not hold up the event loop (the socket, a frame), run on a
/// thread of its own at the lowest CPU priority (SCHED_IDLE); its result
/// comes back on the loop's thread, through an eventfd the loop watches, like
/// any other event.
///
/// ```swift
/// job = BackgroundJob(loop: loop, work: { slowCheck(fd) }, done: { [unowned self] result in use(result) })
/// ```
///
/// `done` runs once, on the loop; `cancel()` (or deinit) before that drops
/// the result, and the thread finishes on its own. Without a thread (none
/// could be made) the work runs at once, before `init` returns, and `done`
/// runs from the loop as usual.
final class BackgroundJob<Value: Sendable> {
    /// What the thread and the loop share; the eventfd closes with the last of them.
    private final class Shared: @unchecked Sendable {
        let work: @Sendable () -> Value
        let eventFD: Int32
        /// Written by the thread before it signals the eventfd; read on the loop after.
        var value: Value?
        init(work: @escaping @Sendable () -> Value, eventFD: Int32) {
            self.work = work
            self.eventFD = eventFD
        }
        func runAndSignal() {
            value = work()
            var one: UInt64 = 1
            _ = withUnsafeBytes(of: &one) { write(eventFD, $0.baseAddress, $0.count) }
        }
        deinit { close(eventFD) }
    }

    private let shared: Shared
    private var thread: pthread_t?
    private var source: EventLoopFDSource?
    private var done: ((Value) -> Void)?

    /// Nil when no eventfd or loop source could be made (out of fds): the
    /// caller runs the work itself.
    init?(loop: OpaquePointer, work: @escaping @Sendable () -> Value, done: @escaping (Value) -> Void) {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { return nil }
        shared = Shared(work: work, eventFD: fd)
        self.done = done
        source = EventLoopFDSource(loop: loop, fd: fd) { [unowned self] _ in finish() }
        guard source != nil else { return nil }
        var started = pthread_t()
        let shared = shared
        let body = Unmanaged.passRetained(ThreadBody { shared.runAndSignal() }).toOpaque()
        if pthread_create(&started, nil, { context in
            let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
            // Only CPU time nothing else wants: the loop's thread and the
            // exam app come first (SCHED_IDLE; where that is refused, nice 19,
            // which on Linux is the calling thread's own: 0 names it).
            var param = sched_param()
            if pthread_setschedparam(pthread_self(), schedIdle, &param) != 0 {
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            }
            body.run()
            return nil
        }, body) == 0 {
            thread = started
        } else {
            Unmanaged<ThreadBody>.fromOpaque(body).release()
            shared.runAndSignal()
        }
    }

    private func finish() {
        // The libwayland source goes; the object stays until the job does,
        // so nothing is freed while its own callback runs.
        source?.cancel()
        if let running = thread {
            pthread_join(running, nil)  // orders the thread's write of `value` before this read
            thread = nil
        }
        guard let done, let value = shared.value else { return }
        self.done = nil
        done(value)
    }

    /// Drops the result; a running thread ends by itself.
    func cancel() {
        source?.cancel()
        source = nil
        done = nil
        if let running = thread {
            pthread_detach(running)
            thread = nil
        }
    }

    deinit { cancel() }
}

/// What a `BackgroundJob`'s thread runs: not generic, so a C thread entry can name it.
private final class ThreadBody: @unchecked Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// SCHED_IDLE (linux/sched.h): Glibc's module leaves it out, as it is a GNU extension.
private let schedIdle: Int32 = 5
