import CarrelShim
import Glibc

/// A test hook for headless runs: with `CARREL_TEST_OUTPUT_HOTPLUG=1` in
/// Carrel's environment, SIGUSR1 plugs in a new headless output and SIGUSR2
/// unplugs the newest one — what a monitor cable does on a real seat. Off by
/// default; it can only add or remove displays, which during a session
/// interrupts it unless the policy's `[outputs]` tolerates it.
final class OutputHotplugHook {
    private let backend: UnsafeMutablePointer<wlr_backend>
    private var signals: [EventLoopSignal] = []
    private var added: [UnsafeMutablePointer<wlr_output>] = []
    private var destroyListeners: [UnsafeMutablePointer<wlr_output>: Listener] = [:]

    static var isEnabled: Bool {
        guard let value = getenv("CARREL_TEST_OUTPUT_HOTPLUG") else { return false }
        return String(cString: value) == "1"
    }

    init?(display: OpaquePointer, backend: UnsafeMutablePointer<wlr_backend>) {
        guard let headless = Self.headlessBackend(in: backend) else { return nil }
        self.backend = headless
        let loop: OpaquePointer = wl_display_get_event_loop(display)
        signals = [SIGUSR1, SIGUSR2].compactMap { signal in
            EventLoopSignal(loop: loop, signal: signal) { [unowned self] number in
                if number == SIGUSR1 { plug() } else { unplug() }
            }
        }
    }

    private static func headlessBackend(in backend: UnsafeMutablePointer<wlr_backend>) -> UnsafeMutablePointer<wlr_backend>? {
        if wlr_backend_is_headless(backend) { return backend }
        guard wlr_backend_is_multi(backend) else { return nil }
        var found: UnsafeMutablePointer<wlr_backend>?
        withUnsafeMutablePointer(to: &found) { pointer in
            wlr_multi_for_each_backend(backend, { sub, data in
                let slot = data!.assumingMemoryBound(to: Optional<UnsafeMutablePointer<wlr_backend>>.self)
                if slot.pointee == nil, let sub, wlr_backend_is_headless(sub) { slot.pointee = sub }
            }, pointer)
        }
        return found
    }

    private func plug() {
        guard let output = wlr_headless_add_output(backend, 1280, 720) else { return }
        added.append(output)
        destroyListeners[output] = Listener(&output.pointee.events.destroy) { [weak self] _ in
            self?.added.removeAll { $0 == output }
            // No listener may outlive the output's signals (wlroots 0.19+ assert it).
            // (Kept until remove(): it is running now.)
            self?.destroyListeners[output]?.disconnect()
        }
    }

    private func unplug() {
        guard let output = added.popLast() else { return }
        wlr_output_destroy(output)
    }

    func remove() {
        for signal in signals { signal.cancel() }
        signals.removeAll()
        for listener in destroyListeners.values { listener.disconnect() }
        destroyListeners.removeAll()
    }
}
