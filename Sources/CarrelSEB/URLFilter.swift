import Foundation

/// SEB's URL filter: `URLFilterEnable` and the `URLFilterRules` array (each
/// rule a dict of `active`, `regex`, `expression`, `action`: 0 block, 1 allow).
///
/// As SEB applies them: block rules first (any match blocks), then allow
/// rules (any match allows), and what no rule matches is blocked. With the
/// filter off every http and https URL is allowed. Other schemes (file:,
/// view-source:, data: …) are never the filter's to allow: the browser
/// refuses them before asking.
public struct URLFilter: @unchecked Sendable {
    public enum Action: Int, Sendable { case block = 0, allow = 1 }

    public struct Rule: @unchecked Sendable {
        public let expression: String
        public let isRegex: Bool
        public let action: Action
        let matcher: Matcher
    }

    public enum Decision: Hashable, Sendable {
        case allow
        /// Blocked, with the rule's expression (nil: no rule allowed it).
        case block(rule: String?)
    }

    public let isEnabled: Bool
    public let rules: [Rule]

    public init(enabled: Bool, rules: [Rule]) {
        self.isEnabled = enabled
        self.rules = rules
    }

    /// The filter of a configuration's root dictionary.
    public init(settings: PlistValue) throws(SEBError) {
        var enabled = false
        if let value = settings["URLFilterEnable"] {
            guard case .bool(let b) = value else {
                throw .invalidSetting(key: "URLFilterEnable", problem: "is a \(value.typeName); expected <true/> or <false/>")
            }
            enabled = b
        }
        var rules: [Rule] = []
        if let value = settings["URLFilterRules"] {
            guard case .array(let entries) = value else {
                throw .invalidSetting(key: "URLFilterRules", problem: "is a \(value.typeName); expected an <array> of rule dicts")
            }
            for (index, entry) in entries.enumerated() {
                let where_ = "URLFilterRules[\(index)]"
                guard case .dictionary = entry else {
                    throw .invalidSetting(key: where_, problem: "is a \(entry.typeName); expected a <dict>")
                }
                if case .bool(false)? = entry["active"] { continue }
                guard case .string(let expression)? = entry["expression"], !expression.isEmpty else {
                    throw .invalidSetting(key: where_ + ".expression", problem: "is missing or empty; give a URL expression")
                }
                var isRegex = false
                if case .bool(let b)? = entry["regex"] { isRegex = b }
                var action = Action.block
                if case .integer(let a)? = entry["action"] {
                    guard let known = Action(rawValue: Int(a)) else {
                        throw .invalidSetting(key: where_ + ".action", problem: "is \(a); expected 0 (block) or 1 (allow)")
                    }
                    action = known
                }
                rules.append(try Self.rule(expression, regex: isRegex, action: action, where: where_))
            }
        }
        self.init(enabled: enabled, rules: rules)
    }

    public static func rule(_ expression: String, regex: Bool, action: Action,
                            where place: String = "rule") throws(SEBError) -> Rule {
        if regex {
            do {
                let compiled = try NSRegularExpression(pattern: expression, options: [.caseInsensitive])
                return Rule(expression: expression, isRegex: true, action: action, matcher: .regex(compiled))
            } catch {
                throw .invalidSetting(key: place, problem: "is not a valid regular expression: \(expression)")
            }
        }
        guard expression.contains(where: { $0.isLetter || $0.isNumber || $0 == "*" }) else {
            throw .invalidSetting(key: place, problem: "'\(expression)' has no letter, digit or *; give an expression such as example.com/exam")
        }
        return Rule(expression: expression, isRegex: false, action: action,
                    matcher: .simple(SimpleExpression(expression)))
    }

    public func decide(_ url: String) -> Decision {
        guard isEnabled else { return .allow }
        guard let parts = URLParts(url) else { return .block(rule: nil) }
        for rule in rules where rule.action == .block && rule.matcher.matches(url, parts) {
            return .block(rule: rule.expression)
        }
        for rule in rules where rule.action == .allow && rule.matcher.matches(url, parts) {
            return .allow
        }
        return .block(rule: nil)
    }

    enum Matcher {
        case regex(NSRegularExpression)
        case simple(SimpleExpression)

        func matches(_ url: String, _ parts: URLParts) -> Bool {
            switch self {
            case .regex(let regex):
                return regex.firstMatch(in: url, range: NSRange(url.startIndex..., in: url)) != nil
            case .simple(let expression):
                return expression.matches(parts)
            }
        }
    }
}

/// A URL's parts as the simplified expressions test them.
struct URLParts {
    let scheme: String
    let userInfo: String
    let host: String
    let port: Int?
    let path: String
    let query: String
    let fragment: String

    init?(_ url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
              let host = components.host else { return nil }
        self.scheme = scheme
        var user = components.percentEncodedUser ?? ""
        if let password = components.percentEncodedPassword { user += ":" + password }
        self.userInfo = user
        self.host = host
        self.port = components.port ?? ["http": 80, "https": 443][scheme.lowercased()]
        self.path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.query = components.percentEncodedQuery ?? ""
        self.fragment = components.percentEncodedFragment ?? ""
    }
}

/// SEB's simplified filter expression: `[scheme://][user[:password]@]host[:port][/path][?query][#fragment]`,
/// `*` a wildcard in any part, each part compared without regard to case.
/// The host matches its subdomains too, unless it starts with "." (this host
/// only) or is one word (`localhost`); a path matches with or without a
/// trailing "/"; an omitted part matches anything; the query "." means none.
struct SimpleExpression {
    var scheme: NSRegularExpression?
    var userInfo: NSRegularExpression?
    var host: NSRegularExpression
    var port: Int?
    var path: NSRegularExpression?
    var query: NSRegularExpression?
    var fragment: NSRegularExpression?

    init(_ expression: String) {
        var rest = Substring(expression)
        func take(upTo separator: String) -> Substring? {
            guard let range = rest.range(of: separator) else { return nil }
            let part = rest[..<range.lowerBound]
            rest = rest[range.upperBound...]
            return part
        }
        let schemePart = take(upTo: "://")
        var fragmentPart: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragmentPart = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var queryPart: Substring?
        if let question = rest.firstIndex(of: "?") {
            queryPart = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        var authority = rest
        var pathPart: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            pathPart = rest[slash...]
        }
        var userPart: Substring?
        if let at = authority.lastIndex(of: "@") {
            userPart = authority[..<at]
            authority = authority[authority.index(after: at)...]
        }
        var hostPart = authority
        if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            port = Int(authority[authority.index(after: colon)...])
        }

        if let s = schemePart, !s.isEmpty { scheme = Self.build(Self.pattern(s)) }
        if let u = userPart, !u.isEmpty {
            userInfo = Self.build(u.contains(":") ? Self.pattern(u) : Self.pattern(u) + "(:.*)?")
        }
        let exactHost = hostPart.hasPrefix(".")
        let bareHost = exactHost ? hostPart.dropFirst() : hostPart
        let isOneWord = bareHost.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        var hostPattern = Self.pattern(bareHost)
        if !exactHost && !isOneWord { hostPattern = "(.+?\\.)*" + hostPattern }
        host = Self.build(hostPattern)!
        if !pathPart.isEmpty && pathPart != "/" {
            let p = Self.pattern(pathPart)
            path = Self.build(pathPart.hasSuffix("/") ? p + "?" : p + "/?")
        }
        if let q = queryPart, !q.isEmpty {
            query = Self.build(q == "." ? "" : Self.pattern(q))
        }
        if let f = fragmentPart, !f.isEmpty { fragment = Self.build(Self.pattern(f)) }
    }

    func matches(_ url: URLParts) -> Bool {
        func test(_ regex: NSRegularExpression?, _ text: String) -> Bool {
            guard let regex else { return true }
            return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
        return test(scheme, url.scheme) && test(userInfo, url.userInfo) && test(host, url.host)
            && (port == nil || port == url.port) && test(path, url.path) && test(query, url.query)
            && test(fragment, url.fragment)
    }

    static func pattern(_ text: Substring) -> String {
        NSRegularExpression.escapedPattern(for: String(text)).replacingOccurrences(of: "\\*", with: ".*")
    }

    static func build(_ pattern: String) -> NSRegularExpression? {
        try? NSRegularExpression(pattern: "^" + pattern + "$", options: [.caseInsensitive])
    }
}
