#if canImport(Glibc)
import Glibc
#endif

/// A failure carrel-paint reports on stderr before exiting 1.
struct PaintError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func errnoText() -> String { String(cString: strerror(errno)) }

/// Copies a listener struct to memory that is never freed: libwayland keeps
/// the pointer for as long as the proxy lives, and our listeners are
/// per-type constants.
func staticListener<Listener>(_ listener: Listener) -> UnsafePointer<Listener> {
    let storage = UnsafeMutablePointer<Listener>.allocate(capacity: 1)
    storage.initialize(to: listener)
    return UnsafePointer(storage)
}

/// Writes `message` to stderr, prefixed with the program name.
func printError(_ message: String) {
    fputs("carrel-paint: \(message)\n", stderr)
}
