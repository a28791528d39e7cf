import CarrelCore
import CarrelShim
import Logging

/// Holds every client to Core's `ShmPoolLimit`: the shim counts each client's
/// `wl_shm_pool` objects, this asks Core about each new one and, when Core
/// refuses, posts `wl_display.no_memory` with Core's message, which
/// disconnects that client. Other clients and Carrel carry on.
final class ShmPoolGuard {
    private let limit: ShmPoolLimit
    private let logger: Logger

    /// Installs the accounting on `display`; call before any client connects.
    /// The guard lives as long as the display (the process).
    @discardableResult
    static func install(on display: OpaquePointer, limit: ShmPoolLimit, logger: Logger) -> ShmPoolGuard {
        let guardObject = ShmPoolGuard(limit: limit, logger: logger)
        carrel_install_shm_pool_accounting(display, { context, client, pools in
            Unmanaged<ShmPoolGuard>.fromOpaque(context!).takeUnretainedValue()
                .admit(client: client!, poolsHeld: Int(pools))
        }, Unmanaged.passRetained(guardObject).toOpaque())
        return guardObject
    }

    private init(limit: ShmPoolLimit, logger: Logger) {
        self.limit = limit
        self.logger = logger
    }

    private func admit(client: OpaquePointer, poolsHeld: Int) -> Bool {
        switch limit.decide(poolsHeld: poolsHeld) {
        case .admit:
            return true
        case .refuse(let message):
            // Only the first refusal is logged and posted: libwayland ignores
            // the client's later requests once an error is posted.
            if poolsHeld == limit.maxPoolsPerClient + 1 {
                logger.warning("disconnecting a client: \(message)")
                // Object 1 is every client's wl_display.
                if let display = wl_client_get_object(client, 1) {
                    carrel_resource_post_error(display, WL_DISPLAY_ERROR_NO_MEMORY.rawValue, message)
                } else {
                    wl_client_post_no_memory(client)
                }
            }
            return false
        }
    }
}
