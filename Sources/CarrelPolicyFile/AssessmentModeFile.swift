import CarrelCore
import TOMLKit

/// The small TOML file of `carrel --assessment=CONFIG.toml`: what the session
/// Carrel begins on the app's behalf allows.
///
/// ```toml
/// time_limit_minutes = 90          # or time_limit_seconds = 30 (tests, drills)
/// allow = ["input_method"]         # protocol feature names; default: none
/// ```
///
/// Every key is optional; an empty file is the most restrictive session with
/// the policy's default time limit. Anything else — an unknown key, a wrong
/// type, a time limit that is not a positive whole number, an unknown feature,
/// both time-limit keys — is an error naming the file and the key.
public enum AssessmentModeFile {
    /// A file that could not be used, with what to do about it.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var key: String?
        public var problem: String

        public var description: String {
            "\(file): " + (key.map { "key `\($0)`: " } ?? "") + problem
        }
    }

    public static let keys = ["time_limit_minutes", "time_limit_seconds", "allow"]

    /// The configuration `text` (the contents of `file`) describes.
    public static func parse(_ text: String, file: String) throws(Error) -> AssessmentConfiguration {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw Error(file: file, key: nil, problem: "not valid TOML: \(error.description) (\(error.source.begin))")
        } catch {
            throw Error(file: file, key: nil, problem: "not valid TOML: \(error)")
        }
        for key in table.keys.sorted() where !keys.contains(key) {
            throw Error(file: file, key: key, problem: "unknown key; the keys are \(keys.joined(separator: ", "))")
        }
        var configuration = AssessmentConfiguration()
        if table["time_limit_minutes"] != nil, table["time_limit_seconds"] != nil {
            throw Error(file: file, key: "time_limit_seconds", problem: "give time_limit_minutes or time_limit_seconds, not both")
        }
        for (key, unit) in [("time_limit_minutes", 60), ("time_limit_seconds", 1)] {
            guard let value = table[key] else { continue }
            guard value.type == .int, let number = value.int else {
                throw Error(file: file, key: key, problem: "must be a whole number, not a \(value.type)")
            }
            let (seconds, overflow) = number.multipliedReportingOverflow(by: unit)
            guard number > 0, !overflow, seconds <= Int(UInt32.max) else {
                throw Error(file: file, key: key, problem: "\(number) is out of range; give a positive number of \(unit == 60 ? "minutes" : "seconds") (at most \(Int(UInt32.max) / unit))")
            }
            configuration.timeLimit = UInt32(seconds)
        }
        if let value = table["allow"] {
            guard value.type == .array, let array = value.array else {
                throw Error(file: file, key: "allow", problem: "must be an array of feature names, not a \(value.type)")
            }
            let known = AssessmentFeature.allCases.map(\.protocolName)
            for element in array {
                guard element.type == .string, let name = element.string else {
                    throw Error(file: file, key: "allow", problem: "must hold strings (feature names), found a \(element.type)")
                }
                guard let feature = AssessmentFeature.allCases.first(where: { $0.protocolName == name }) else {
                    throw Error(file: file, key: "allow", problem: "unknown feature \"\(name)\"; known: \(known.joined(separator: ", "))")
                }
                configuration.allowedFeatures.insert(feature)
            }
        }
        return configuration
    }
}
