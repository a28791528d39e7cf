import CarrelWire

/// A JSON value with one byte encoding: object keys sorted, no whitespace,
/// UTF-8, only the escapes JSON requires. The signature of an attestation is
/// made over these bytes, so a verifier in any language that parses them
/// reads exactly what was signed, and re-encoding with sorted keys and no
/// whitespace (Python: `json.dumps(v, sort_keys=True, separators=(",", ":"),
/// ensure_ascii=False)`) gives the same bytes back.
///
/// ```swift
/// CanonicalJSON.object(["b": .integer(1), "a": .string("x")]).text   // {"a":"x","b":1}
/// ```
public indirect enum CanonicalJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// Integers only: floating-point numbers have no single text form.
    case integer(Int64)
    case string(String)
    case array([CanonicalJSON])
    case object([String: CanonicalJSON])

    /// The canonical text.
    public var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    /// The canonical text's UTF-8 bytes: what is signed.
    public var bytes: [UInt8] { Array(text.utf8) }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            // By Unicode scalar values, as Python's sort_keys orders str keys.
            let keys = members.keys.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, into: &out)
                out += ":"
                members[key]!.write(into: &out)
            }
            out += "}"
        }
    }

    /// Quotes `value` as every Carrel program does (`JSONString`).
    private static func writeString(_ value: String, into out: inout String) {
        out += JSONString.quoted(value)
    }
}
