/// The line on which each table and key of a TOML text is written, so that a
/// policy error can name it.
///
/// TOMLKit 0.6 reports source positions for syntax errors only; its values
/// carry none. So this looks the lines up itself: it follows `[table]`
/// headers and `key =` assignments (bare, quoted and dotted keys) and skips
/// comments and multi-line strings. It only ever sees text TOMLKit parsed
/// without error, and it only has to find lines, not values: a key it cannot
/// place (inside an inline table, say) gets the line of the nearest table or
/// key around it.
struct SourceLines {
    /// Dotted path → 1-based line of its first header or assignment.
    private var lines: [[String]: Int] = [:]

    init(_ text: String) {
        var table: [String] = []
        var openString: String?  // the delimiter of a multi-line string we are inside
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            var line = Substring(raw)
            if let delimiter = openString {
                guard let end = line.firstRange(of: delimiter) else { continue }
                openString = nil
                line = line[end.upperBound...]
                if let rest = Self.multilineStringLeftOpen(line) { openString = rest }
                continue
            }
            line = line.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                let isArray = line.hasPrefix("[[")
                var rest = line.dropFirst(isArray ? 2 : 1)
                guard let path = Self.key(&rest) else { continue }
                table = path
                record(path, number)
                continue
            }
            var rest = line
            guard let key = Self.key(&rest) else { continue }
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard rest.hasPrefix("=") else { continue }
            record(table + key, number)
            openString = Self.multilineStringLeftOpen(rest.dropFirst())
        }
    }

    /// The line of `path`, or of its nearest enclosing table or key that has
    /// one; line 1 if none does.
    func line(of path: [String]) -> Int {
        var path = path
        while !path.isEmpty {
            if let line = lines[path] { return line }
            path.removeLast()
        }
        return 1
    }

    private mutating func record(_ path: [String], _ line: Int) {
        if lines[path] == nil { lines[path] = line }
        // A dotted key or a `[a.b]` header also defines its parents here,
        // unless they were written earlier.
        for count in stride(from: path.count - 1, to: 0, by: -1) where lines[Array(path.prefix(count))] == nil {
            lines[Array(path.prefix(count))] = line
        }
    }

    /// Reads a dotted key at the start of `text` (after spaces), leaving
    /// `text` after it; nil if none is there.
    private static func key(_ text: inout Substring) -> [String]? {
        var parts: [String] = []
        while true {
            text = text.drop { $0 == " " || $0 == "\t" }
            guard let first = text.first else { return nil }
            if first == "\"" || first == "'" {
                var part = ""
                var rest = text.dropFirst()
                var closed = false
                while let c = rest.first {
                    rest = rest.dropFirst()
                    if c == first { closed = true; break }
                    if c == "\\" && first == "\"", let escaped = rest.first {
                        rest = rest.dropFirst()
                        part.append(escaped)
                    } else {
                        part.append(c)
                    }
                }
                guard closed else { return nil }
                parts.append(part)
                text = rest
            } else {
                let bare = text.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
                guard !bare.isEmpty else { return nil }
                parts.append(String(bare))
                text = text[bare.endIndex...]
            }
            text = text.drop { $0 == " " || $0 == "\t" }
            guard text.hasPrefix(".") else { return parts }
            text = text.dropFirst()
        }
    }

    /// The delimiter of a multi-line string that opens in `text` and does not
    /// close on the same line, if any.
    private static func multilineStringLeftOpen(_ text: Substring) -> String? {
        var rest = text
        while let start = rest.firstIndex(where: { $0 == "\"" || $0 == "'" || $0 == "#" }) {
            let c = rest[start]
            if c == "#" { return nil }
            let delimiter = String(repeating: c, count: 3)
            if rest[start...].hasPrefix(delimiter) {
                let after = rest[rest.index(start, offsetBy: 3)...]
                guard let end = after.firstRange(of: delimiter) else { return delimiter }
                rest = after[end.upperBound...]
            } else {
                // A one-line string: skip to its closing quote.
                var i = rest.index(after: start)
                while i < rest.endIndex, rest[i] != c {
                    if c == "\"" && rest[i] == "\\" { i = rest.index(after: i) }
                    if i < rest.endIndex { i = rest.index(after: i) }
                }
                rest = i < rest.endIndex ? rest[rest.index(after: i)...] : rest[rest.endIndex...]
            }
        }
        return nil
    }
}
