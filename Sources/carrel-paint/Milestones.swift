import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// Points in a client's start-up that benchmarks time, each printed once as
/// `milestone NAME MONOTONIC_NS` on stdout, flushed at once so a reader on a
/// pipe sees it when it happens.
enum Milestone: String {
    case connected
    case firstConfigure = "first_configure"
    case firstCommit = "first_commit"
    case firstFrameDone = "first_frame_done"
}

final class MilestoneLog {
    private let enabled: Bool
    private var seen: Set<String> = []

    init(enabled: Bool) { self.enabled = enabled }

    func reach(_ milestone: Milestone) {
        // Read the clock before any bookkeeping so the stamp is as close to
        // the event as this process can make it.
        let now = MonotonicClock.nanoseconds()
        guard enabled, seen.insert(milestone.rawValue).inserted else { return }
        print("milestone \(milestone.rawValue) \(now)")
        fflush(stdout)
    }
}
