import FoundationEssentials

/// The JSON values the privileged helper's lines are made of: strings,
/// whole numbers, lists of strings and maps of strings. Anything else (a
/// float, a boolean, null, nesting) does not decode, so the helper never
/// has to decide what it would mean.
enum JSONValue: Codable, Hashable, Sendable {
    case string(String)
    case number(UInt64)
    case strings([String])
    case object([String: String])

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .number(value)
        } else if let value = try? container.decode([String].self) {
            self = .strings(value)
        } else {
            self = .object(try container.decode([String: String].self))
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// One line of JSON, keys sorted.
    static func encodeObject(_ object: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, numbers and their lists and maps always encode.
        let data = (try? encoder.encode(object)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeObject(_ line: some Collection<UInt8>) -> [String: JSONValue]? {
        try? JSONDecoder().decode([String: JSONValue].self, from: Data(line))
    }
}
