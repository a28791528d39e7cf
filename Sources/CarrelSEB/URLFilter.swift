import Foundation

/// SEB's URL filter: `URLFilterEnable` and the `URLFilterRules` array (each
/// rule a dict of `active`, `regex`, `expression`, `action`: 0 block, 1 allow).
///
/// As SEB applies them: block rules first (any match blocks), then allow
/// rules (any match allows), and what no rule matches is blocked. With the
/// filter off every http and https URL is allowed. Other schemes (file:,
/// view-source:, data: …) are never the filter's to allow: the browser
/// refuses them before asking.
///
/// The filter always decides navigations (pages and frames). With
/// `URLFilterEnableContentFilter` too (SEB's default: off; it counts only
/// while `URLFilterEnable` is on, as in SEB) it decides every request a page
/// makes: images, scripts, stylesheets, fetches, frames, WebSockets. Then
/// the web process extension runs ``orderedRules``' patterns itself, the
/// same patterns this type decides with, and WebKit's content rules decide
/// WebSockets (``WebSocketRules``), which the extension never sees.
public struct URLFilter: @unchecked Sendable {
    public enum Action: Int, Sendable { case block = 0, allow = 1 }

    public struct Rule: @unchecked Sendable {
        public let expression: String
        public let isRegex: Bool
        public let action: Action
        /// The regular expression the rule is, in ``PortableRegex``'s
        /// dialect: a regex rule's own, or an expression's as
        /// ``FilterExpression`` writes it.
        public let pattern: String
        /// The rule in WebKit's content-rule dialect (``WebSocketRules``):
        /// patterns any one of which matches the URLs ``pattern`` does; nil
        /// when it cannot be written there (a regex rule outside it).
        public let contentRulePatterns: [String]?
        let regex: NSRegularExpression
    }

    public enum Decision: Hashable, Sendable {
        case allow
        /// Blocked, with the rule's expression (nil: no rule allowed it).
        case block(rule: String?)
    }

    public let isEnabled: Bool
    public let rules: [Rule]
    /// Every request is filtered, not only navigations (SEB's
    /// `URLFilterEnableContentFilter`, only while the filter is on).
    public let filtersContent: Bool

    public init(enabled: Bool, rules: [Rule], filtersContent: Bool = false) {
        self.isEnabled = enabled
        self.rules = rules
        self.filtersContent = enabled && filtersContent
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
        var content = false
        if let value = settings["URLFilterEnableContentFilter"] {
            guard case .bool(let b) = value else {
                throw .invalidSetting(key: "URLFilterEnableContentFilter", problem: "is a \(value.typeName); expected <true/> or <false/>")
            }
            content = b
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
        self.init(enabled: enabled, rules: rules, filtersContent: content)
    }

    public static func rule(_ expression: String, regex: Bool, action: Action,
                            where place: String = "rule") throws(SEBError) -> Rule {
        let pattern: String
        let contentRulePatterns: [String]?
        if regex {
            if let problem = PortableRegex.problem(expression) {
                throw .invalidSetting(key: place, problem: "(the regular expression \(expression)) \(problem); "
                    + "carrel-browser applies each rule alike in the browser (ICU) and in its web process (PCRE) "
                    + "and refuses one it cannot; rewrite the rule without it")
            }
            pattern = expression
            contentRulePatterns = WebSocketRules.problem(expression) == nil ? [expression] : nil
        } else {
            guard expression.contains(where: { $0.isLetter || $0.isNumber || $0 == "*" }) else {
                throw .invalidSetting(key: place, problem: "'\(expression)' has no letter, digit or *; give an expression such as example.com/exam")
            }
            let parsed = FilterExpression(expression)
            pattern = parsed.pattern
            let written = parsed.contentRulePatterns
            // Written from the same parts as the pattern; checked all the same.
            contentRulePatterns = written.allSatisfy { WebSocketRules.problem($0) == nil } ? written : nil
            // Written here from literals and carrel-browser's own classes, so
            // inside the dialect by construction; checked all the same.
            if let problem = PortableRegex.problem(pattern) {
                throw .invalidSetting(key: place, problem: "(the expression \(expression)) became the pattern \(pattern), which "
                    + "\(problem); write the rule as a regular expression instead")
            }
        }
        do {
            let compiled = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            return Rule(expression: expression, isRegex: regex, action: action, pattern: pattern,
                        contentRulePatterns: contentRulePatterns, regex: compiled)
        } catch {
            throw .invalidSetting(key: place, problem: "is not a valid regular expression: \(expression)")
        }
    }

    /// The rules in the order they are tried: block rules, then allow
    /// rules; the first that matches decides, and what none matches is
    /// blocked. What the web process extension is given (with
    /// ``filtersContent``): it only runs these patterns, in this order.
    public var orderedRules: [Rule] {
        rules.filter { $0.action == .block } + rules.filter { $0.action == .allow }
    }

    /// One line for `carrel-browser --check`: "allow URL" or "block URL: why".
    /// A WebSocket's URL (ws, wss) is decided as the content filter decides
    /// it: by the same rules, its scheme as it is.
    public func verdict(_ url: String) -> String {
        let lower = url.lowercased()
        let webSocket = lower.hasPrefix("ws://") || lower.hasPrefix("wss://")
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") || webSocket else {
            return "block \(url): only http and https load"
        }
        if webSocket && isEnabled && !filtersContent {
            // Without the content filter SEB filters navigations only: a
            // page's WebSockets, like its images, are not filtered.
            return "allow \(url): WebSockets are not filtered without the content filter"
        }
        if webSocket, case .block(let rule) = decideWebSocket(url), decide(url) == .allow {
            // What WebKit will do, where a rule it cannot take makes it stricter.
            return rule.map { "block \(url): rule \($0) cannot be given to WebKit for WebSockets (see --explain)" }
                ?? "block \(url): WebKit's rules for WebSockets do not allow it"
        }
        switch decide(url) {
        case .allow: return "allow \(url)"
        case .block(let rule?): return "block \(url): rule \(rule)"
        case .block(nil): return "block \(url): no rule allows it"
        }
    }

    /// What WebKit decides for a WebSocket to `url` with the list
    /// ``WebSocketRules`` gives it: as ``decide(_:)``, except where a regex
    /// rule cannot be written for WebKit (then its block is the rule
    /// named). Never allows what ``decide(_:)`` blocks.
    public func decideWebSocket(_ url: String) -> Decision {
        guard isEnabled else { return .allow }
        let ordered = orderedRules
        if let unwritten = ordered.first(where: { $0.action == .block && $0.contentRulePatterns == nil }) {
            return .block(rule: unwritten.expression)
        }
        let range = NSRange(url.startIndex..., in: url)
        func matches(_ rule: Rule) -> Bool {
            (rule.contentRulePatterns ?? []).contains { pattern in
                (try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]))?
                    .firstMatch(in: url, range: range) != nil
            }
        }
        if let rule = ordered.first(where: { $0.action == .block && matches($0) }) { return .block(rule: rule.expression) }
        if ordered.contains(where: { $0.action == .allow && matches($0) }) { return .allow }
        if let unwritten = ordered.first(where: { $0.action == .allow && $0.contentRulePatterns == nil && $0.regex
            .firstMatch(in: url, range: range) != nil }) {
            return .block(rule: unwritten.expression)
        }
        return .block(rule: nil)
    }

    public func decide(_ url: String) -> Decision {
        guard isEnabled else { return .allow }
        let range = NSRange(url.startIndex..., in: url)
        for rule in orderedRules where rule.regex.firstMatch(in: url, range: range) != nil {
            return rule.action == .allow ? .allow : .block(rule: rule.expression)
        }
        return .block(rule: nil)
    }
}
