/// A line for the compositor's log.
public struct SessionLogEntry: Sendable, Hashable, CustomStringConvertible {
    public enum Level: Sendable, Hashable { case info, notice, warning, error }
    public var level: Level
    public var message: String
    public init(_ level: Level, _ message: String) { self.level = level; self.message = message }
    public var description: String { "[\(level)] \(message)" }
}
