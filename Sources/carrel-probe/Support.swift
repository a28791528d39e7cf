import CarrelWire
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// A failure that ends carrel-probe with status 2 (usage or connection).
struct ProbeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Seconds on CLOCK_MONOTONIC.
func now() -> Double { MonotonicClock.seconds() }

/// "12 ms" for a duration in seconds.
func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }

/// "1.0 s" for a timeout in seconds.
func secondsText(_ seconds: Double) -> String {
    let tenths = (seconds * 10).rounded() / 10
    return tenths == seconds.rounded(.towardZero) ? "\(Int(seconds)) s" : "\(tenths) s"
}

func printError(_ message: String) {
    printError(message, program: "carrel-probe")
}

// MARK: JSON

/// A JSON value, enough for the probe's one-line reports.
enum JSON {
    case string(String)
    case number(Int)
    case bool(Bool)
    case array([JSON])
    case object([(String, JSON)])

    var text: String {
        switch self {
        case .string(let s): return JSON.quote(s)
        case .number(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ", ") + "]"
        case .object(let members):
            return "{" + members.map { JSON.quote($0.0) + ": " + $0.1.text }.joined(separator: ", ") + "}"
        }
    }

    static func quote(_ s: String) -> String { JSONString.quoted(s) }
}

/// Prints one line to stdout and flushes it, so a reader on a pipe sees each
/// verdict as it is reached.
func emit(_ value: JSON) {
    print(value.text)
    fflush(stdout)
}
