/// The regular-expression dialect both of carrel-browser's engines read the
/// same way: ICU's (NSRegularExpression, which decides navigations in the
/// browser) and PCRE's (GLib's GRegex, which decides every other request in
/// the web process extension). The filter's patterns, SEB's own regex rules
/// and those carrel-browser writes for SEB's expressions, are held to it so a
/// URL is allowed or blocked alike in both.
///
/// What it takes: literals, escaped punctuation, `.`, `^`, `$`, `|`, groups
/// `( )`, `(?: )`, lookaheads `(?= )`, `(?! )`, the quantifiers `* + ? {n}
/// {n,} {n,m}` (each possibly lazy, `?` after it), `\d \D \w \W \s \S \b \B`
/// and classes `[...]` / `[^...]` of literals, ranges and those escapes.
/// What it refuses is what the two engines read differently or one of them
/// not at all: ICU's nested sets and set operations (`[[a]&&[b]]`,
/// `[[:alpha:]]`), letter escapes other than those above (`\Q…\E`, `\x`,
/// `\u`, `\p`, `\A`, `\z`, `\1`, …), inline options and other `(?` groups,
/// possessive quantifiers, a `{` that is not a quantifier, an unescaped `]`
/// or `}` outside its construct, and `]` first in a class (PCRE's literal,
/// ICU's end), and any character outside ASCII: the URLs are ASCII as
/// WebKit writes them (hosts in punycode, the rest percent-encoded), and
/// without regard to case ICU lets "ß" match "ss" where PCRE does not.
/// Letters' case is ignored by both (their case-insensitive option).
public enum PortableRegex {
    /// Why `pattern` is outside the dialect; nil when it is inside.
    public static func problem(_ pattern: String) -> String? {
        let chars = Array(pattern.unicodeScalars)
        var i = 0
        var depth = 0
        // Whether a quantifier may follow: after an atom, not after an
        // assertion, an alternation, a group's start or another quantifier.
        var quantifiable = false
        let classEscapes: Set<Unicode.Scalar> = ["d", "D", "w", "W", "s", "S"]
        func isPunctuation(_ c: Unicode.Scalar) -> Bool {
            c.isASCII && c.value > 0x20 && c.value < 0x7f && !(c.properties.isAlphabetic || ("0"..."9").contains(c))
        }
        func escapeProblem(_ c: Unicode.Scalar?) -> String? {
            guard let c else { return "ends with a lone \\" }
            if isPunctuation(c) { return nil }
            return "uses the escape \\\(c), which ICU and PCRE read differently or not at all"
        }
        if let wide = chars.first(where: { !$0.isASCII }) {
            return "has the character '\(wide)', outside ASCII; URLs are matched as WebKit writes them, "
                + "ASCII (hosts in punycode, paths and queries percent-encoded): write it so"
        }
        while i < chars.count {
            let c = chars[i]
            switch c {
            case "\\":
                let next = i + 1 < chars.count ? chars[i + 1] : nil
                if let n = next, classEscapes.contains(n) {
                    quantifiable = true
                } else if let n = next, n == "b" || n == "B" {
                    quantifiable = false
                } else if let problem = escapeProblem(next) {
                    return problem
                } else {
                    quantifiable = true
                }
                i += 2
            case "[":
                i += 1
                if i < chars.count && chars[i] == "^" { i += 1 }
                if i < chars.count && chars[i] == "]" {
                    return "has ']' first in a class, which PCRE takes as a literal and ICU as the class's end; write \\]"
                }
                var closed = false
                while i < chars.count {
                    let d = chars[i]
                    if d == "]" { closed = true; i += 1; break }
                    if d == "[" {
                        return "has '[' inside a class (ICU reads nested sets and [:classes:], PCRE does not); write \\["
                    }
                    if (d == "&" || d == "-") && i + 1 < chars.count && chars[i + 1] == d {
                        return "has '\(d)\(d)' inside a class (ICU's set operations, PCRE's literals); write \\\(d)\\\(d)"
                    }
                    if d == "\\" {
                        let next = i + 1 < chars.count ? chars[i + 1] : nil
                        if let n = next, classEscapes.contains(n) {
                            // fine
                        } else if let problem = escapeProblem(next) {
                            return problem
                        }
                        i += 2
                        continue
                    }
                    i += 1
                }
                guard closed else { return "has a class '[' that is never closed" }
                quantifiable = true
            case "(":
                if i + 1 < chars.count && chars[i + 1] == "?" {
                    let kind = i + 2 < chars.count ? chars[i + 2] : nil
                    guard let kind, kind == ":" || kind == "=" || kind == "!" else {
                        return "has a '(?\(kind.map(String.init) ?? "")' group; only (?: ), (?= ) and (?! ) read alike in ICU and PCRE"
                    }
                    i += 3
                } else {
                    i += 1
                }
                depth += 1
                quantifiable = false
            case ")":
                guard depth > 0 else { return "has a ')' that closes no group" }
                depth -= 1
                i += 1
                quantifiable = true
            case "*", "+", "?", "{":
                guard quantifiable else {
                    return "has the quantifier '\(c)' where nothing precedes it to repeat"
                }
                if c == "{" {
                    var j = i + 1
                    var digits = 0
                    while j < chars.count, ("0"..."9").contains(chars[j]) { j += 1; digits += 1 }
                    guard digits > 0 else { return "has a '{' that is not a quantifier {n}, {n,} or {n,m}; write \\{" }
                    if j < chars.count && chars[j] == "," {
                        j += 1
                        while j < chars.count, ("0"..."9").contains(chars[j]) { j += 1 }
                    }
                    guard j < chars.count && chars[j] == "}" else {
                        return "has a '{' that is not a quantifier {n}, {n,} or {n,m}; write \\{"
                    }
                    i = j + 1
                } else {
                    i += 1
                }
                if i < chars.count && chars[i] == "?" { i += 1 }
                if i < chars.count && chars[i] == "+" {
                    return "has a possessive quantifier ('\(c)+'); write it without the '+'"
                }
                quantifiable = false
            case "]", "}":
                return "has an unescaped '\(c)'; write \\\(c)"
            case "^", "$", "|":
                quantifiable = false
                i += 1
            default:
                quantifiable = true
                i += 1
            }
        }
        if depth > 0 { return "has a '(' that is never closed" }
        return nil
    }

    /// `text` as a literal in the dialect.
    public static func literal<S: StringProtocol>(_ text: S) -> String {
        var out = ""
        for c in text.unicodeScalars {
            if c.isASCII && !(c.properties.isAlphabetic || ("0"..."9").contains(c)) && c.value > 0x20 && c.value < 0x7f {
                out += "\\"
            }
            out.unicodeScalars.append(c)
        }
        return out
    }
}
