import CarrelClientShim
#if canImport(Glibc)
import Glibc
#endif

/// One global as the registry advertised it.
public struct Global: Sendable, Equatable {
    public let name: UInt32
    public let interface: String
    public let version: UInt32
}

/// A connection to the compositor named by $WAYLAND_DISPLAY, the globals
/// its registry advertises, and bounded ways to wait for events: the
/// plumbing carrel-paint, carrel-probe and carrel-demo-exam share.
///
/// ```swift
/// let connection = try WaylandConnection()
/// guard connection.listGlobals() else { … }              // one roundtrip
/// let compositor = connection.bind("wl_compositor", maxVersion: 4)?.proxy
/// connection.pump(timeout: 2) { configured }            // never waits longer
/// ```
///
/// Subclasses add the globals they bind; the connection is closed when the
/// object goes, so proxies must be destroyed (or abandoned) before that.
open class WaylandConnection {
    public let display: OpaquePointer
    public private(set) var registry: OpaquePointer?
    /// Every global advertised and not removed, in announcement order.
    public private(set) var globals: [Global] = []

    /// Connects to $WAYLAND_DISPLAY; `onConnected` runs as soon as the
    /// socket is open, before anything is sent. Globals are listed by
    /// `listGlobals()`.
    public init(onConnected: () -> Void = {}) throws(WaylandConnectionError) {
        guard let display = wl_display_connect(nil) else {
            let name = getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "(unset, so wayland-0)"
            throw .cannotConnect(display: name, reason: errnoText())
        }
        self.display = display
        onConnected()
        registry = wl_display_get_registry(display)
        wl_registry_add_listener(registry, registryListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        wl_display_disconnect(display)
    }

    /// One roundtrip, which delivers every global the compositor offers this
    /// client; false when the connection failed.
    public func listGlobals() -> Bool {
        wl_display_roundtrip(display) >= 0
    }

    public func global(_ interface: String) -> Global? {
        globals.first { $0.interface == interface }
    }

    /// Binds the first advertised `interface` (whose protocol this client
    /// carries) at the lower of its version and `maxVersion`.
    public func bind(_ interface: String, maxVersion: UInt32) -> (proxy: OpaquePointer, version: UInt32)? {
        guard let global = global(interface), let description = carrel_client_interface(interface) else {
            return nil
        }
        let version = min(global.version, maxVersion)
        guard let proxy = wl_registry_bind(registry, global.name, description, version) else { return nil }
        return (OpaquePointer(proxy), version)
    }

    /// Sends a wl_registry.bind for `name` whatever the registry said about it.
    public func forceBind(name: UInt32, interface: UnsafePointer<wl_interface>, version: UInt32) {
        _ = wl_registry_bind(registry, name, interface, version)
    }

    /// Whether the connection has failed; waits stop early once it has.
    open var hasFailed: Bool { wl_display_get_error(display) != 0 }

    /// A roundtrip bounded by `timeout` seconds; false if it did not complete.
    public func roundtrip(timeout: Double) -> Bool {
        let flag = Flag()
        let callback = wl_display_sync(display)
        wl_callback_add_listener(callback, syncListener, Unmanaged.passUnretained(flag).toOpaque())
        let finished = pump(timeout: timeout) { flag.value }
        // Destroyed either way, so the callback cannot fire into a freed flag.
        wl_callback_destroy(callback)
        return finished
    }

    /// Dispatches events until `done()` holds or `timeout` seconds pass;
    /// returns done(). `extra` is polled alongside and `onExtra` called when
    /// it is readable (or hung up). Stops early when the connection fails.
    @discardableResult
    public func pump(timeout: Double, extra: Int32 = -1, onExtra: () -> Void = {}, until done: () -> Bool) -> Bool {
        let deadline = MonotonicClock.seconds() + timeout
        let fd = wl_display_get_fd(display)
        while true {
            if wl_display_dispatch_pending(display) < 0 { return done() }
            if done() { return true }
            let left = deadline - MonotonicClock.seconds()
            if left <= 0 || hasFailed { return false }
            while wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { return done() }
            }
            var wantsWrite = false
            if wl_display_flush(display) < 0 {
                if errno == EAGAIN {
                    wantsWrite = true
                } else {
                    wl_display_cancel_read(display)
                    return done()
                }
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0)]
            if extra >= 0 { fds.append(pollfd(fd: extra, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(left * 1000, 1000).rounded(.up)))
            if ready > 0 && fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                if wl_display_read_events(display) < 0 { return done() }
            } else {
                wl_display_cancel_read(display)
            }
            if fds.count > 1 && fds[1].revents != 0 { onExtra() }
        }
    }

    fileprivate func handleGlobal(name: UInt32, interface: String, version: UInt32) {
        globals.append(Global(name: name, interface: interface, version: version))
    }

    fileprivate func handleGlobalRemove(name: UInt32) {
        globals.removeAll { $0.name == name }
    }
}

/// Why a connection could not be made; each client words its own advice.
public enum WaylandConnectionError: Error, Equatable {
    /// wl_display_connect failed for `display` (the $WAYLAND_DISPLAY text).
    case cannotConnect(display: String, reason: String)
}

private let registryListener = staticListener(wl_registry_listener(
    global: { data, _, name, interface, version in
        guard let data, let interface else { return }
        Unmanaged<WaylandConnection>.fromOpaque(data).takeUnretainedValue()
            .handleGlobal(name: name, interface: String(cString: interface), version: version)
    },
    global_remove: { data, _, name in
        guard let data else { return }
        Unmanaged<WaylandConnection>.fromOpaque(data).takeUnretainedValue().handleGlobalRemove(name: name)
    }
))

/// A boolean a C callback can set through its user-data pointer.
public final class Flag {
    public var value = false
    public init() {}
}

private let syncListener = staticListener(wl_callback_listener(
    done: { data, _, _ in
        guard let data else { return }
        Unmanaged<Flag>.fromOpaque(data).takeUnretainedValue().value = true
    }
))
