import Foundation

/// SEB's simplified filter expression,
/// `[scheme://][user[:password]@]host[:port][/path][?query][#fragment]`,
/// written as one regular expression over the whole URL, in the dialect
/// both of carrel-browser's engines read alike (``PortableRegex``): the
/// browser decides navigations with it, the web process every other request.
///
/// The meaning, part by part, each without regard to case:
/// - `*` is a wildcard within its part (it never crosses into the next);
/// - an omitted part matches anything;
/// - the host matches its subdomains too, unless it starts with "." (this
///   host only) or is one word (`localhost`);
/// - a port matches the URL's port, or the scheme's default (80 for http
///   and ws, 443 for https and wss) when the URL names none; a port that is
///   not a number (`*`) matches any;
/// - a path matches with or without its trailing "/" ("/" alone is no
///   constraint);
/// - the query "." means none (or an empty one).
///
/// The URL is as WebKit writes it: `scheme://[userinfo@]host[:port]/path[?query][#fragment]`,
/// ASCII, the default port left out. A host in brackets (an IPv6 address)
/// is never an expression's: only a regex rule matches it.
struct FilterExpression {
    var scheme: Substring?
    var userInfo: Substring?
    var host: Substring
    var port: Int?
    var path: Substring?
    var query: Substring?
    var fragment: Substring?

    init(_ expression: String) {
        var rest = Substring(expression)
        if let range = rest.range(of: "://") {
            scheme = rest[..<range.lowerBound]
            rest = rest[range.upperBound...]
        }
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[slash...]
        }
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
        }
        host = authority
        if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            port = Int(authority[authority.index(after: colon)...])
        }
    }

    // What each part may hold in a URL as WebKit writes it: a wildcard
    // stands for a run of these, so it stays within its part.
    static let schemeChars = "[^:/?#@]"
    static let userInfoChars = "[^/?#@]"
    static let hostChars = "[^/?#@:\\[\\]]"
    static let pathChars = "[^?#]"
    static let queryChars = "[^#]"
    static let fragmentChars = "."

    /// `text` with each `*` a run of `chars`, the rest literal, and each
    /// character outside ASCII percent-encoded (UTF-8), as WebKit writes it
    /// in a URL's path, query and fragment. (In a host WebKit writes
    /// punycode instead: such a host never matches, which blocks.)
    static func part<S: StringProtocol>(_ text: S, _ chars: String) -> String {
        text.split(separator: "*", omittingEmptySubsequences: false)
            .map { PortableRegex.literal(percentEncodingWide($0)) }
            .joined(separator: chars + "*")
    }

    static func percentEncodingWide<S: StringProtocol>(_ text: S) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                out.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 { out += "%" + String(byte, radix: 16, uppercase: true) }
            }
        }
        return out
    }

    /// Whether `text` is stars only, so that its part may be absent or empty.
    static func onlyStars(_ text: Substring) -> Bool { text.allSatisfy { $0 == "*" } }

    var schemePattern: String {
        if let scheme, !scheme.isEmpty { return Self.part(scheme, Self.schemeChars) }
        return Self.schemeChars + "+"
    }

    var userPattern: String {
        guard let userInfo, !userInfo.isEmpty else { return "(?:" + Self.userInfoChars + "*@)?" }
        var u = Self.part(userInfo, Self.userInfoChars)
        // "user" alone takes any password of that user.
        if !userInfo.contains(":") { u += "(?::" + Self.userInfoChars + "*)?" }
        return Self.onlyStars(userInfo) ? "(?:" + u + "@)?" : u + "@"
    }

    var hostPattern: String {
        let exact = host.hasPrefix(".")
        let bare = exact ? host.dropFirst() : host
        let oneWord = bare.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        let hostPattern = Self.part(bare, Self.hostChars)
        if !exact && !oneWord { return "(?:" + Self.hostChars + "+\\.)?" + hostPattern }
        return hostPattern
    }

    /// The path, query and fragment.
    var tail: String {
        var tail = ""
        if let path, path != "/" {
            tail += Self.part(path, Self.pathChars) + (path.hasSuffix("/") ? "?" : "/?")
        } else {
            tail += "(?:/" + Self.pathChars + "*)?"
        }
        if let query, !query.isEmpty, !Self.onlyStars(query) {
            tail += query == "." ? "\\??" : "\\?" + Self.part(query, Self.queryChars)
        } else {
            tail += "(?:\\?" + Self.queryChars + "*)?"
        }
        if let fragment, !fragment.isEmpty, !Self.onlyStars(fragment) {
            tail += "#" + Self.part(fragment, Self.fragmentChars)
        } else {
            tail += "(?:#" + Self.fragmentChars + "*)?"
        }
        return tail
    }

    /// The whole-URL regular expression, anchored at both ends.
    var pattern: String {
        func body(port: String) -> String {
            schemePattern + "://" + userPattern + hostPattern + port + tail
        }
        guard let port else { return "^" + body(port: "(?::[0-9]+)?") + "$" }
        // The URL leaves the scheme's default port out: the expression's
        // port is the URL's, or the default of the URL's scheme.
        var alternatives = [body(port: ":\(port)")]
        for scheme in defaultSchemes(of: port) {
            alternatives.append("(?=" + scheme + "://)" + body(port: ""))
        }
        return "^(?:" + alternatives.joined(separator: "|") + ")$"
    }

    /// The schemes whose default port a URL leaves out: a WebSocket's
    /// (ws, wss) as well as a page's, so a port in an expression reads alike
    /// for both (SEB's Windows filter compares .NET's port of the URL, which
    /// knows the same defaults).
    static let defaultPorts = [("http", 80), ("https", 443), ("ws", 80), ("wss", 443)]

    func defaultSchemes(of port: Int) -> [String] {
        Self.defaultPorts.filter { $0.1 == port }.map(\.0)
    }

    /// ``pattern`` written for WebKit's content rules (its `url-filter`),
    /// which take no alternation and no lookahead: the same URLs, as several
    /// patterns any one of which matches. The scheme whose default port the
    /// expression names is written out in the pattern where the lookahead
    /// checked it, and only when the expression's scheme (if any) takes it.
    var contentRulePatterns: [String] {
        guard let port else { return [pattern] }
        let user = userPattern, host = hostPattern, rest = tail
        var patterns = ["^" + schemePattern + "://" + user + host + ":\(port)" + rest + "$"]
        for scheme in defaultSchemes(of: port) where schemeTakes(scheme) {
            patterns.append("^" + scheme + "://" + user + host + rest + "$")
        }
        return patterns
    }

    /// Whether the expression's scheme part (wildcards and all) matches `scheme`.
    func schemeTakes(_ scheme: String) -> Bool {
        guard let own = self.scheme, !own.isEmpty else { return true }
        guard let regex = try? NSRegularExpression(pattern: "^" + schemePattern + "$", options: [.caseInsensitive]) else {
            return false
        }
        return regex.firstMatch(in: scheme, range: NSRange(scheme.startIndex..., in: scheme)) != nil
    }
}
