import WaylandClientSupport

/// A failure carrel-paint reports on stderr before exiting 1.
struct PaintError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Writes `message` to stderr, prefixed with the program name.
func printError(_ message: String) {
    printError(message, program: "carrel-paint")
}
