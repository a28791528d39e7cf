/// A string as a JSON string literal, the one way every Carrel program
/// writes one: `"` and `\` escaped, control characters as JSON's short
/// escapes or `\u00XX`, everything else as itself (UTF-8). That is what
/// Python's `json.dumps(..., ensure_ascii=False)` writes, so a signed
/// statement's canonical bytes are the same whichever side makes them.
///
/// ```swift
/// JSONString.quoted("日本語\n")   // "\"日本語\\n\""
/// ```
public enum JSONString {
    public static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
