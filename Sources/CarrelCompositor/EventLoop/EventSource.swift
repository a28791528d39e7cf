import CarrelCore
import CarrelShim

/// A timer on the Wayland event loop, wrapped like `Listener`: the callback is
/// a Swift closure, the C source is removed in `cancel()` (or `deinit` as a
/// backstop), and arming it takes a `Duration`.
///
/// Every wl_event_loop timer in Carrel goes through this type, so the rules
/// live in one place: a timer fires on the loop's one thread; arming with a
/// zero or negative duration still fires (libwayland treats 0 as "disarm",
/// so it becomes 1 ms); removing a source from inside its own callback is
/// safe in libwayland.
final class EventLoopTimer {
    private var source: OpaquePointer?
    private let fire: () -> Void

    /// Nil when libwayland could not create the source (out of memory or fds).
    init?(loop: OpaquePointer, _ fire: @escaping () -> Void) {
        self.fire = fire
        source = wl_event_loop_add_timer(loop, { data in
            Unmanaged<EventLoopTimer>.fromOpaque(data!).takeUnretainedValue().fire()
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        if source == nil { return nil }
    }

    /// Fires once after `delay` (replacing any earlier arming).
    func arm(after delay: Duration) {
        guard let source else { return }
        wl_event_source_timer_update(source, max(1, Int32(clamping: delay.wholeMilliseconds)))
    }

    /// Stops a pending firing; the timer can be armed again.
    func disarm() {
        guard let source else { return }
        wl_event_source_timer_update(source, 0)
    }

    /// Removes the source from the loop for good.
    func cancel() {
        if let source { wl_event_source_remove(source) }
        source = nil
    }

    deinit { cancel() }
}

/// A readable file descriptor watched by the Wayland event loop. The closure
/// gets the event mask (`WL_EVENT_READABLE`, `WL_EVENT_HANGUP`, ...). The fd
/// itself stays the owner's to close, after `cancel()`.
final class EventLoopFDSource {
    private var source: OpaquePointer?
    private let ready: (UInt32) -> Void

    init?(loop: OpaquePointer, fd: Int32, mask: UInt32 = UInt32(WL_EVENT_READABLE), _ ready: @escaping (UInt32) -> Void) {
        self.ready = ready
        source = wl_event_loop_add_fd(loop, fd, mask, { _, mask, data in
            Unmanaged<EventLoopFDSource>.fromOpaque(data!).takeUnretainedValue().ready(mask)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        if source == nil { return nil }
    }

    /// Changes the events watched (0: none for now, e.g. while paused).
    func watch(_ mask: UInt32) {
        if let source { wl_event_source_fd_update(source, mask) }
    }

    func cancel() {
        if let source { wl_event_source_remove(source) }
        source = nil
    }

    deinit { cancel() }
}

/// A signal delivered through the event loop (libwayland uses signalfd), so
/// its handler runs on the loop's thread like every other event.
final class EventLoopSignal {
    private var source: OpaquePointer?
    private let handle: (Int32) -> Void

    init?(loop: OpaquePointer, signal: Int32, _ handle: @escaping (Int32) -> Void) {
        self.handle = handle
        source = wl_event_loop_add_signal(loop, signal, { number, data in
            Unmanaged<EventLoopSignal>.fromOpaque(data!).takeUnretainedValue().handle(number)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        if source == nil { return nil }
    }

    func cancel() {
        if let source { wl_event_source_remove(source) }
        source = nil
    }

    deinit { cancel() }
}
