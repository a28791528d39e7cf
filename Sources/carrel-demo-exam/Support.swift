import WaylandClientSupport

/// A failure the demo reports on stderr before exiting 1.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Writes `message` to stderr, prefixed with the program name.
func printError(_ message: String) {
    printError(message, program: "carrel-demo-exam")
}
