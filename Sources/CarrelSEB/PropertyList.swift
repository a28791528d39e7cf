import Foundation

/// A value of an XML property list, as SEB writes its configuration.
///
/// Dictionaries keep their keys in document order (the Config Key sorts them
/// itself), and every key is kept, known to carrel-browser or not: an unknown
/// setting still counts in the Config Key.
public indirect enum PlistValue: Hashable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 1970, UTC (the plist's `<date>` is ISO 8601, whole seconds).
    case date(Int64)
    case data([UInt8])
    case array([PlistValue])
    case dictionary([(key: String, value: PlistValue)])

    public static func == (lhs: PlistValue, rhs: PlistValue) -> Bool {
        switch (lhs, rhs) {
        case let (.string(a), .string(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.real(a), .real(b)): return a == b
        case let (.bool(a), .bool(b)): return a == b
        case let (.date(a), .date(b)): return a == b
        case let (.data(a), .data(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.dictionary(a), .dictionary(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let s): hasher.combine(0); hasher.combine(s)
        case .integer(let i): hasher.combine(1); hasher.combine(i)
        case .real(let d): hasher.combine(2); hasher.combine(d)
        case .bool(let b): hasher.combine(3); hasher.combine(b)
        case .date(let t): hasher.combine(4); hasher.combine(t)
        case .data(let d): hasher.combine(5); hasher.combine(d)
        case .array(let a): hasher.combine(6); hasher.combine(a)
        case .dictionary(let d):
            hasher.combine(7)
            for entry in d { hasher.combine(entry.key); hasher.combine(entry.value) }
        }
    }

    /// The value of `key` in a dictionary (the first, should a file repeat it).
    public subscript(key: String) -> PlistValue? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// The name of the type as the plist spells it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dict"
        }
    }
}

/// Reading an XML property list (Apple's DTD, as SEB, SEB's Config Tool and
/// Moodle write it) into ``PlistValue``.
public enum PropertyList {
    /// Parses `bytes` as an XML plist whose root is a dictionary.
    public static func parse(_ bytes: [UInt8]) throws(SEBError) -> PlistValue {
        let tree = try XMLTree.parse(bytes)
        guard tree.name == "plist" else {
            throw .notAPropertyList("the document's root element is <\(tree.name)>, not <plist>")
        }
        let elements = tree.children
        guard elements.count == 1, let root = elements.first else {
            throw .notAPropertyList("<plist> holds \(elements.count) elements; expected one <dict>")
        }
        let value = try convert(root)
        guard case .dictionary = value else {
            throw .notAPropertyList("the plist's root is <\(root.name)>; SEB settings are a <dict>")
        }
        return value
    }

    private static func convert(_ element: XMLTree) throws(SEBError) -> PlistValue {
        switch element.name {
        case "string":
            return .string(element.text)
        case "integer":
            let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Int64(text) else {
                throw .notAPropertyList("<integer>\(text)</integer> on line \(element.line) is not a whole number")
            }
            return .integer(value)
        case "real":
            let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Double(text) else {
                throw .notAPropertyList("<real>\(text)</real> on line \(element.line) is not a number")
            }
            return .real(value)
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "date":
            let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let seconds = parseDate(text) else {
                throw .notAPropertyList("<date>\(text)</date> on line \(element.line) is not an ISO 8601 date such as 2024-05-01T08:00:00Z")
            }
            return .date(seconds)
        case "data":
            let text = element.text.filter { !$0.isWhitespace }
            guard let data = Data(base64Encoded: text) else {
                throw .notAPropertyList("<data> on line \(element.line) is not Base64")
            }
            return .data([UInt8](data))
        case "array":
            // As CFPropertyList (Moodle's reader) does, a <key> inside an array is ignored.
            var values: [PlistValue] = []
            for child in element.children where child.name != "key" {
                values.append(try convert(child))
            }
            return .array(values)
        case "dict":
            var entries: [(key: String, value: PlistValue)] = []
            var pendingKey: String?
            for child in element.children {
                if child.name == "key" {
                    if let key = pendingKey {
                        throw .notAPropertyList("<key>\(key)</key> on line \(child.line) has no value")
                    }
                    pendingKey = child.text
                } else {
                    guard let key = pendingKey else {
                        throw .notAPropertyList("<\(child.name)> on line \(child.line) has no <key> before it")
                    }
                    entries.append((key, try convert(child)))
                    pendingKey = nil
                }
            }
            if let key = pendingKey {
                throw .notAPropertyList("<key>\(key)</key> at the end of a <dict> has no value")
            }
            return .dictionary(entries)
        default:
            throw .notAPropertyList("<\(element.name)> on line \(element.line) is not a property list element")
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` → seconds since 1970 (UTC).
    static func parseDate(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text) else { return nil }
        return Int64(date.timeIntervalSince1970.rounded(.down))
    }
}

/// The element tree of an XML document: a small reader of the XML a plist
/// uses (prolog, DOCTYPE, comments, processing instructions, elements with
/// attributes, character and entity references, CDATA). Written here rather
/// than taken from Foundation's XMLParser, which traps on some malformed
/// input, and a .seb file may be anything.
final class XMLTree {
    let name: String
    let line: Int
    var children: [XMLTree] = []
    var text = ""

    init(name: String, line: Int) {
        self.name = name
        self.line = line
    }

    /// Deeper than any real configuration; a guard against a hostile file.
    static let maximumDepth = 64

    static func parse(_ bytes: [UInt8]) throws(SEBError) -> XMLTree {
        var reader = Reader(bytes: bytes)
        return try reader.document()
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        var line = 1

        init(bytes: [UInt8]) {
            self.bytes = bytes
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        }

        func fail(_ what: String) -> SEBError {
            .notAPropertyList("not well-formed XML (line \(line)): \(what)")
        }

        var atEnd: Bool { index >= bytes.count }

        func peek(_ literal: String) -> Bool {
            let l = Array(literal.utf8)
            return index + l.count <= bytes.count && bytes[index..<index + l.count].elementsEqual(l)
        }

        mutating func advance(_ count: Int = 1) {
            for _ in 0..<count where index < bytes.count {
                if bytes[index] == 0x0A { line += 1 }
                index += 1
            }
        }

        mutating func skipWhitespace() {
            while !atEnd, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { advance() }
        }

        /// Skips past `terminator`; fails if the document ends first.
        mutating func skip(past terminator: String, what: String) throws(SEBError) {
            while !atEnd {
                if peek(terminator) { advance(terminator.utf8.count); return }
                advance()
            }
            throw fail("\(what) is not closed")
        }

        /// Comments, processing instructions and the DOCTYPE between elements.
        mutating func skipMisc() throws(SEBError) {
            while true {
                skipWhitespace()
                if peek("<!--") { try skip(past: "-->", what: "a comment") }
                else if peek("<?") { try skip(past: "?>", what: "a processing instruction") }
                else if peek("<!DOCTYPE") {
                    // Apple's DTD line has no internal subset; allow one anyway, without expanding it.
                    while !atEnd, bytes[index] != UInt8(ascii: ">") {
                        if bytes[index] == UInt8(ascii: "[") { try skip(past: "]", what: "the DOCTYPE's internal subset") } else { advance() }
                    }
                    guard !atEnd else { throw fail("the DOCTYPE is not closed") }
                    advance()
                } else { return }
            }
        }

        mutating func document() throws(SEBError) -> XMLTree {
            try skipMisc()
            guard peek("<"), !atEnd else { throw fail("no root element") }
            let root = try element(depth: 0)
            try skipMisc()
            guard atEnd else { throw fail("content after the root element") }
            return root
        }

        mutating func name() throws(SEBError) -> String {
            let start = index
            while !atEnd {
                let b = bytes[index]
                if [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "<")].contains(b) { break }
                advance()
            }
            guard index > start, let text = String(validating: bytes[start..<index], as: UTF8.self) else {
                throw fail("an element without a valid name")
            }
            return text
        }

        mutating func element(depth: Int) throws(SEBError) -> XMLTree {
            guard depth < XMLTree.maximumDepth else { throw fail("elements nested more than \(XMLTree.maximumDepth) deep") }
            advance()   // "<"
            let element = XMLTree(name: try name(), line: line)
            // Attributes (plist's version="1.0"): read and dropped.
            while true {
                skipWhitespace()
                guard !atEnd else { throw fail("<\(element.name)> is not closed") }
                if peek("/>") { advance(2); return element }
                if peek(">") { advance(); break }
                _ = try name()
                skipWhitespace()
                guard peek("=") else { throw fail("an attribute of <\(element.name)> has no value") }
                advance()
                skipWhitespace()
                guard !atEnd, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                    throw fail("an attribute value of <\(element.name)> is not quoted")
                }
                let quote = bytes[index]
                advance()
                while !atEnd, bytes[index] != quote { advance() }
                guard !atEnd else { throw fail("an attribute value of <\(element.name)> is not closed") }
                advance()
            }
            // Content.
            var text: [UInt8] = []
            while true {
                guard !atEnd else { throw fail("<\(element.name)> is not closed") }
                if peek("</") {
                    advance(2)
                    let closing = try name()
                    skipWhitespace()
                    guard closing == element.name, peek(">") else {
                        throw fail("</\(closing)> closes <\(element.name)>")
                    }
                    advance()
                    break
                } else if peek("<!--") {
                    try skip(past: "-->", what: "a comment")
                } else if peek("<![CDATA[") {
                    advance(9)
                    let start = index
                    try skip(past: "]]>", what: "a CDATA section")
                    text += bytes[start..<index - 3]
                } else if peek("<?") {
                    try skip(past: "?>", what: "a processing instruction")
                } else if peek("<") {
                    element.children.append(try self.element(depth: depth + 1))
                } else if peek("&") {
                    text += try reference()
                } else {
                    text.append(bytes[index])
                    advance()
                }
            }
            guard let decoded = String(validating: text, as: UTF8.self) else {
                throw fail("the text of <\(element.name)> is not UTF-8")
            }
            element.text = decoded
            return element
        }

        /// &lt; &gt; &amp; &quot; &apos; &#NN; &#xNN; as UTF-8.
        mutating func reference() throws(SEBError) -> [UInt8] {
            let start = index
            while !atEnd, bytes[index] != UInt8(ascii: ";"), index - start < 12 { advance() }
            guard !atEnd, bytes[index] == UInt8(ascii: ";") else { throw fail("an '&' that is not a reference (write &amp;)") }
            let body = String(decoding: bytes[(start + 1)..<index], as: UTF8.self)
            advance()
            switch body {
            case "lt": return Array("<".utf8)
            case "gt": return Array(">".utf8)
            case "amp": return Array("&".utf8)
            case "quot": return Array("\"".utf8)
            case "apos": return Array("'".utf8)
            default:
                var value: UInt32?
                if body.hasPrefix("#x") || body.hasPrefix("#X") { value = UInt32(body.dropFirst(2), radix: 16) }
                else if body.hasPrefix("#") { value = UInt32(body.dropFirst()) }
                guard let value, let scalar = Unicode.Scalar(value) else { throw fail("the unknown reference &\(body);") }
                return Array(String(Character(scalar)).utf8)
            }
        }
    }
}
