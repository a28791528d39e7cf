#if canImport(Glibc)
import Glibc
#endif

/// A failure the demo reports on stderr before exiting 1.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

/// Writes `message` to stderr, prefixed with the program name.
func printError(_ message: String) {
    fputs("carrel-demo-exam: \(message)\n", stderr)
}

/// Copies a listener struct to memory that is never freed: libwayland keeps
/// the pointer for as long as the proxy lives, and our listeners are
/// per-type constants.
func permanentListener<Listener>(_ listener: Listener) -> UnsafePointer<Listener> {
    let storage = UnsafeMutablePointer<Listener>.allocate(capacity: 1)
    storage.initialize(to: listener)
    return UnsafePointer(storage)
}

/// Seconds on the monotonic clock, for the script runner's deadlines.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
