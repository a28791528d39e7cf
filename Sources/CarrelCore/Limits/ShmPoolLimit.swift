/// How many `wl_shm` pools one client may hold at once.
///
/// Every pool is a separate `mmap` in Carrel's address space. The kernel caps
/// the number of mappings per process (`vm.max_map_count`, 65530 by default);
/// a client that creates pools without end would use them all up, after which
/// every other client's `create_pool` fails and Carrel's own allocations may
/// fail with it. The limit keeps one client from getting anywhere near that:
/// the pool that goes over it is refused with `wl_display.no_memory` and the
/// client is disconnected. A pool's size is bounded by the protocol itself
/// (an int32, under 2 GiB) and costs address space, not memory, in Carrel:
/// pages belong to the client's memfd.
public struct ShmPoolLimit: Sendable, Equatable {
    /// Pools one client may hold at once; the next one is refused.
    public var maxPoolsPerClient: Int

    /// Generous for real toolkits (a few pools per window and buffer) and far
    /// below the kernel's mapping cap, so many clients fit under it too.
    public static let standard = ShmPoolLimit(maxPoolsPerClient: 1024)

    public init(maxPoolsPerClient: Int) {
        self.maxPoolsPerClient = max(1, maxPoolsPerClient)
    }

    public enum Decision: Sendable, Equatable {
        case admit
        /// Refuse the pool and disconnect the client; the message says why.
        case refuse(message: String)
    }

    /// Decides on a pool just created, given how many the client now holds
    /// (this one included).
    public func decide(poolsHeld: Int) -> Decision {
        guard poolsHeld > maxPoolsPerClient else { return .admit }
        return .refuse(message: "too many wl_shm pools: a client may hold at most \(maxPoolsPerClient) at once; "
                       + "destroy pools it no longer needs (wl_shm_pool.destroy) or reuse one pool for several buffers")
    }
}
