import Foundation

/// The URL filter for WebSocket connections, as a WebKit content rule list.
///
/// WebKit opens a WebSocket without passing it through the web process
/// extension's `send-request`, where the content filter decides every other
/// request. What WebKit does check before a WebSocket leaves is the web
/// view's content rule lists (resource type `websocket`), against the
/// connection's own URL (`ws://…` or `wss://…`). So with the content filter
/// on, carrel-browser gives WebKit the filter's rules as such a list, for
/// WebSockets only:
///
/// 1. block every WebSocket;
/// 2. each allow rule undoes that for the URLs it matches
///    (`ignore-previous-rules`);
/// 3. each block rule blocks again the URLs it matches.
///
/// WebKit applies a list's rules in order, a later one over an earlier one:
/// a URL a block rule matches is blocked, else one an allow rule matches is
/// allowed, else it is blocked: SEB's order (block rules, then allow rules,
/// the rest blocked), as ``URLFilter/decide(_:)`` decides.
///
/// The rules match the WebSocket's URL as they match any other: as in SEB's
/// own matching, a rule's scheme is compared as written, so `http://host/*`
/// does not take `ws://host/…` (nor `https` `wss`); a rule with no scheme
/// takes every scheme, WebSockets' too. A port in an expression is the
/// URL's, or the default of the URL's scheme (ws 80, wss 443).
///
/// WebKit's rules are a smaller dialect than the filter's (no alternation,
/// no lookahead, no counted repetition, no `\d \w \s \b`, `^` only first and
/// `$` only last): each expression is written in it (as several patterns
/// where the filter's pattern alternates), and a regex rule outside it is
/// left out where that only blocks more: an allow rule's WebSockets stay
/// blocked; a block rule that cannot be written blocks every WebSocket.
public enum WebSocketRules {
    /// The list for `filter` (its JSON), and one line for each rule that
    /// could not be written in WebKit's dialect, saying what that costs.
    public struct List: Sendable {
        public let json: String
        public let unwritten: [String]
    }

    public static func list(for filter: URLFilter) -> List {
        var entries: [[String: Any]] = [entry(".*", "block")]
        var unwritten: [String] = []
        for rule in filter.orderedRules where rule.action == .allow {
            guard let patterns = rule.contentRulePatterns else {
                unwritten.append("allow rule \(rule.expression): WebSockets it allows stay blocked "
                                 + "(\(problem(rule.pattern) ?? "not written"))")
                continue
            }
            entries += patterns.map { entry($0, "ignore-previous-rules") }
        }
        for rule in filter.orderedRules where rule.action == .block {
            guard let patterns = rule.contentRulePatterns else {
                unwritten.append("block rule \(rule.expression): every WebSocket is blocked "
                                 + "(\(problem(rule.pattern) ?? "not written"))")
                // Fail closed: no allow rule may undo a block WebKit cannot be told.
                entries = [entry(".*", "block")]
                break
            }
            entries += patterns.map { entry($0, "block") }
        }
        let data = (try? JSONSerialization.data(withJSONObject: entries, options: [.sortedKeys])) ?? Data()
        return List(json: String(decoding: data, as: UTF8.self), unwritten: unwritten)
    }

    static func entry(_ urlFilter: String, _ action: String) -> [String: Any] {
        ["trigger": ["url-filter": urlFilter, "resource-type": ["websocket"]], "action": ["type": action]]
    }

    /// Why `pattern` (already in ``PortableRegex``'s dialect) is outside
    /// what WebKit's content rules take; nil when WebKit takes it.
    /// Conservative: what it refuses only blocks more.
    public static func problem(_ pattern: String) -> String? {
        let chars = Array(pattern.unicodeScalars)
        let builtIn: Set<Unicode.Scalar> = ["d", "D", "w", "W", "s", "S", "b", "B"]
        var i = 0
        while i < chars.count {
            let c = chars[i]
            switch c {
            case "\\":
                if i + 1 < chars.count, builtIn.contains(chars[i + 1]) {
                    return "uses \\\(chars[i + 1]), which WebKit's content rules do not take"
                }
                i += 2
            case "[":
                i += 1
                while i < chars.count, chars[i] != "]" {
                    if chars[i] == "\\" {
                        if i + 1 < chars.count, builtIn.contains(chars[i + 1]) {
                            return "uses \\\(chars[i + 1]) in a class, which WebKit's content rules do not take"
                        }
                        i += 1
                    }
                    i += 1
                }
                i += 1
            case "(":
                if i + 2 < chars.count, chars[i + 1] == "?", chars[i + 2] != ":" {
                    return "has a lookahead, which WebKit's content rules do not take"
                }
                i += 1
            case "|":
                return "has '|', which WebKit's content rules do not take"
            case "{":
                return "has a counted repetition {n,m}, which WebKit's content rules do not take"
            case "^" where i != 0:
                return "has '^' after its start, which WebKit's content rules do not take"
            case "$" where i != chars.count - 1:
                return "has '$' before its end, which WebKit's content rules do not take"
            default:
                i += 1
            }
        }
        return nil
    }
}
