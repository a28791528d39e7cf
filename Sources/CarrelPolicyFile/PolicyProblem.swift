/// One thing wrong with a policy file, printed as `FILE:LINE: KEY: message`
/// (`FILE:LINE:COLUMN: ...` for a TOML syntax error, which has a column).
public struct PolicyProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file as the administrator named it.
    public var file: String
    public var line: Int
    public var column: Int?
    /// The dotted key, e.g. `kiosk.maximum_relaunches`; for a syntax error, "TOML syntax".
    public var key: String
    /// What was wrong and what is allowed.
    public var message: String

    public init(file: String, line: Int, column: Int? = nil, key: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    public var description: String {
        "\(file):\(line)\(column.map { ":\($0)" } ?? ""): \(key): \(message)"
    }
}

/// A policy file that cannot be used: every problem in it, in file order.
public struct PolicyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [PolicyProblem]

    public init(problems: [PolicyProblem]) { self.problems = problems }

    /// One problem a line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
