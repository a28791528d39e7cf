import Crypto
import Foundation

/// SEB's Config Key, computed as Moodle's quiz access rule computes it to
/// check the `X-SafeExamBrowser-ConfigKeyHash` header and the JavaScript API.
///
/// The settings become "SEB-JSON": `originatorVersion` removed wherever it
/// is, empty dictionaries removed (also those that only held empty ones), keys
/// ordered as Unicode's root collation orders them (case-insensitive first,
/// lowercase before uppercase: `allowWlan` before `allowWLAN`), no whitespace,
/// neither slashes nor backslashes nor non-ASCII characters escaped (quotes and
/// control characters are, as PHP's json_encode does), `<data>` as Base64,
/// `<date>` as ISO 8601 with `+00:00`, `<real>` with a fraction (`888.0`). A
/// dictionary or array that ends up empty is `[]`, and one whose keys are
/// exactly "0", "1", … is a JSON array, as PHP's arrays make them. The key is
/// the SHA-256 of that text, in lowercase hex.
public enum ConfigKey {
    /// The Config Key of a configuration's root dictionary.
    public static func compute(_ settings: PlistValue) -> String {
        hex(SHA256.hash(data: Array(json(settings).utf8)))
    }

    /// The SEB-JSON text the key hashes.
    public static func json(_ settings: PlistValue) -> String {
        var out = ""
        write(node(settings) ?? .list([]), to: &out)
        return out
    }

    /// SHA-256(url + key) in lowercase hex, the URL without its fragment: the
    /// `X-SafeExamBrowser-ConfigKeyHash` header (with the Config Key), the
    /// `X-SafeExamBrowser-RequestHash` header (with the Browser Exam Key), and
    /// the JavaScript API's per-page values.
    public static func urlHash(url: String, key: String) -> String {
        hex(SHA256.hash(data: Array((withoutFragment(url) + key).utf8)))
    }

    public static func withoutFragment(_ url: String) -> String {
        guard let hash = url.firstIndex(of: "#") else { return url }
        return String(url[..<hash])
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        for byte in digest {
            bytes.append(digits[Int(byte >> 4)])
            bytes.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - SEB-JSON

    indirect enum Node {
        case scalar(String)
        case list([Node])
        case object([(String, Node)])
    }

    /// nil: an empty dictionary, which its parent drops.
    static func node(_ value: PlistValue) -> Node? {
        switch value {
        case .string(let s): return .scalar(quote(s))
        case .integer(let i): return .scalar(String(i))
        case .real(let d): return .scalar(real(d))
        case .bool(let b): return .scalar(b ? "true" : "false")
        case .date(let seconds): return .scalar(quote(iso8601(seconds)))
        case .data(let bytes): return .scalar(quote(Data(bytes).base64EncodedString()))
        case .array(let elements):
            var kept: [(String, Node)] = []
            for (index, element) in elements.enumerated() {
                guard let child = node(element) else { continue }
                kept.append((String(index), child))
            }
            return phpArray(kept)
        case .dictionary(let entries):
            // A repeated key keeps its first place and its last value, as a PHP array does.
            var order: [String] = []
            var values: [String: PlistValue] = [:]
            for (key, child) in entries where key != "originatorVersion" {
                if values[key] == nil { order.append(key) }
                values[key] = child
            }
            var kept: [(String, Node)] = []
            for key in order {
                guard let child = node(values[key]!) else { continue }
                kept.append((key, child))
            }
            if kept.isEmpty { return nil }
            return phpArray(kept)
        }
    }

    /// PHP's rule: keys 0…n-1 in order make a list, anything else an object (sorted).
    static func phpArray(_ entries: [(String, Node)]) -> Node {
        if entries.enumerated().allSatisfy({ $0.element.0 == String($0.offset) }) {
            return .list(entries.map(\.1))
        }
        return .object(entries.sorted { RootCollation.precedes($0.0, $1.0) })
    }

    static func write(_ node: Node, to out: inout String) {
        switch node {
        case .scalar(let text):
            out += text
        case .list(let elements):
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                write(element, to: &out)
            }
            out += "]"
        case .object(let entries):
            out += "{"
            for (i, entry) in entries.enumerated() {
                if i > 0 { out += "," }
                out += quote(entry.0)
                out += ":"
                write(entry.1, to: &out)
            }
            out += "}"
        }
    }

    /// A JSON string as PHP writes it with JSON_UNESCAPED_SLASHES |
    /// JSON_UNESCAPED_UNICODE, and backslashes left alone as Moodle leaves them.
    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hexDigits = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hexDigits.count) + hexDigits
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A double as PHP's json_encode writes it (shortest round trip, a ".0" kept).
    static func real(_ d: Double) -> String {
        guard d.isFinite else { return "0" }
        var text = "\(d)"
        if let e = text.firstIndex(of: "e"), !text[..<e].contains(".") {
            text.insert(contentsOf: ".0", at: e)
        }
        return text
    }

    static func iso8601(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) + "+00:00"
    }
}

/// Key order as Unicode's root collation (ICU's `Collator('root')`, which
/// Moodle sorts with) orders the characters SEB's keys use: spaces and
/// punctuation, then digits, then letters without regard to case; at equal
/// letters, lowercase first.
enum RootCollation {
    /// DUCET's order of ASCII's spaces, punctuation and symbols.
    private static let punctuation = Array(" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$".unicodeScalars)

    static func primary(_ scalar: Unicode.Scalar) -> (Int, UInt32) {
        if let index = punctuation.firstIndex(of: scalar) { return (0, UInt32(index)) }
        if scalar.value < 0x20 { return (0, 0) }
        if ("0"..."9").contains(scalar) { return (1, scalar.value) }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars.first ?? scalar
        if ("a"..."z").contains(lower) { return (2, lower.value) }
        return (3, lower.value)
    }

    static func precedes(_ a: String, _ b: String) -> Bool {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        for (p, q) in zip(x, y) {
            let (pp, qq) = (primary(p), primary(q))
            if pp != qq { return pp < qq }
        }
        if x.count != y.count { return x.count < y.count }
        // Tertiary: the first difference in case, lowercase first.
        for (p, q) in zip(x, y) where p != q {
            let pLower = p.properties.isLowercase, qLower = q.properties.isLowercase
            if pLower != qLower { return pLower }
            return p.value < q.value
        }
        return false
    }
}
