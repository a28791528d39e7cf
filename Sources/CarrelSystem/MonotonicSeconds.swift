import Glibc

/// CLOCK_MONOTONIC in seconds, for bounded waits that block (a command's
/// run, a child's grace period, an answer from the privileged helper).
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
