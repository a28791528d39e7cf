#if canImport(Glibc)
import Glibc
#endif

/// strerror's text for `code` (by default the current errno).
public func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

/// Writes `message` to stderr, prefixed with `program` (e.g. "carrel-paint").
public func printError(_ message: String, program: String) {
    fputs("\(program): \(message)\n", stderr)
}
