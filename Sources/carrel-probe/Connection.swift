import CarrelClientShim
#if canImport(Glibc)
import Glibc
#endif

/// One global as the registry advertised it.
struct Global {
    let name: UInt32
    let interface: String
    let version: UInt32
}

/// One connection to the compositor: its registry, and a bounded event pump.
///
/// A connection the compositor ends (a protocol error, or it hangs up) is not
/// a crash for the probe: `failure` says what happened, and every attack
/// reads it as evidence.
final class ProbeConnection {
    let display: OpaquePointer
    private(set) var registry: OpaquePointer?
    private(set) var globals: [Global] = []

    private var recordedFailure: String?

    /// Connects to $WAYLAND_DISPLAY and reads the registry.
    init() throws {
        ProbeConnection.clearLog()
        guard let display = wl_display_connect(nil) else {
            let name = getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "(unset, so wayland-0)"
            throw ProbeError("cannot connect to the Wayland display \(name): \(errnoText()). "
                             + "Is a compositor running, and are WAYLAND_DISPLAY and XDG_RUNTIME_DIR set for it?")
        }
        self.display = display
        registry = wl_display_get_registry(display)
        wl_registry_add_listener(registry, registryListener, Unmanaged.passUnretained(self).toOpaque())
        guard wl_display_roundtrip(display) >= 0 else {
            throw ProbeError("the connection failed while listing globals: \(failure ?? "unknown error")")
        }
    }

    deinit {
        wl_display_disconnect(display)
    }

    fileprivate func handleGlobal(name: UInt32, interface: String, version: UInt32) {
        globals.append(Global(name: name, interface: interface, version: version))
    }

    fileprivate func handleGlobalRemove(name: UInt32) {
        globals.removeAll { $0.name == name }
    }

    func global(_ interface: String) -> Global? {
        globals.first { $0.interface == interface }
    }

    /// Binds an advertised global this client carries the protocol of.
    func bind(_ interface: String, maxVersion: UInt32) -> (proxy: OpaquePointer, version: UInt32)? {
        guard let global = global(interface), let description = carrel_client_interface(interface) else {
            return nil
        }
        let version = min(global.version, maxVersion)
        guard let proxy = wl_registry_bind(registry, global.name, description, version) else { return nil }
        return (OpaquePointer(proxy), version)
    }

    /// Sends a wl_registry.bind for `name` whatever the registry said about it.
    func forceBind(name: UInt32, interface: UnsafePointer<wl_interface>, version: UInt32) {
        _ = wl_registry_bind(registry, name, interface, version)
    }

    /// What ended the connection, or nil while it works; with the log text
    /// of the moment it was first asked after the failure.
    var failure: String? {
        if let recordedFailure { return recordedFailure }
        recordedFailure = describeFailure()
        return recordedFailure
    }

    private func describeFailure() -> String? {
        let code = wl_display_get_error(display)
        guard code != 0 else { return nil }
        var interface: UnsafePointer<wl_interface>?
        var id: UInt32 = 0
        let protocolCode = wl_display_get_protocol_error(display, &interface, &id)
        let logged = ProbeConnection.loggedText()
        if code == EPROTO, let interface {
            let name = String(cString: interface.pointee.name)
            let prefix = "\(name)@\(id): error \(protocolCode): "
            if logged.hasPrefix(prefix) { return "protocol error on \(name)@\(id): \(logged.dropFirst(prefix.count))" }
            return "protocol error \(protocolCode) on \(name)@\(id)" + (logged.isEmpty ? "" : " (\(logged))")
        }
        return errnoText(code) + (logged.isEmpty ? "" : " (\(logged))")
    }

    /// True when the compositor sent wl_display.error (rather than the
    /// connection breaking on this side).
    var endedByProtocolError: Bool {
        var interface: UnsafePointer<wl_interface>?
        var id: UInt32 = 0
        guard wl_display_get_error(display) == EPROTO else { return false }
        _ = wl_display_get_protocol_error(display, &interface, &id)
        return interface != nil
    }

    /// The last line libwayland-client logged since `clearLog()` (for a
    /// protocol error: "object@id: error code: message").
    static func loggedText() -> String {
        String(cString: carrel_client_log_text())
            .split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
    }

    static func clearLog() { carrel_client_log_capture() }

    /// A roundtrip bounded by `timeout`; false if it did not complete.
    func roundtrip(timeout: Double) -> Bool {
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
    func pump(timeout: Double, extra: Int32 = -1, onExtra: () -> Void = {}, until done: () -> Bool) -> Bool {
        let deadline = now() + timeout
        let fd = wl_display_get_fd(display)
        while true {
            if wl_display_dispatch_pending(display) < 0 { return done() }
            if done() { return true }
            let left = deadline - now()
            if left <= 0 || failure != nil { return false }
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
}

private let registryListener = staticListener(wl_registry_listener(
    global: { data, _, name, interface, version in
        guard let data, let interface else { return }
        Unmanaged<ProbeConnection>.fromOpaque(data).takeUnretainedValue()
            .handleGlobal(name: name, interface: String(cString: interface), version: version)
    },
    global_remove: { data, _, name in
        guard let data else { return }
        Unmanaged<ProbeConnection>.fromOpaque(data).takeUnretainedValue().handleGlobalRemove(name: name)
    }
))

/// A boolean a C callback can set through its user-data pointer.
final class Flag {
    var value = false
}

private let syncListener = staticListener(wl_callback_listener(
    done: { data, _, _ in
        guard let data else { return }
        Unmanaged<Flag>.fromOpaque(data).takeUnretainedValue().value = true
    }
))
