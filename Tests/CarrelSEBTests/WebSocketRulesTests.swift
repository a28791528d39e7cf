import CarrelSEB
import Foundation
import Testing

// WebSockets under the content filter: the filter's rules given to WebKit
// as a content rule list, which must decide each ws:// and wss:// URL as the
// filter itself does (and so as SEB's rules read).

/// What WebKit does with the list for `url`: its rules in order, each that
/// matches (a search, without regard to case) blocking or undoing the
/// blocks before it. true: the WebSocket connects.
func webKitAllows(_ json: String, _ url: String) throws -> Bool {
    let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
    var blocked = false
    for entry in entries {
        let trigger = try #require(entry["trigger"] as? [String: Any])
        #expect(trigger["resource-type"] as? [String] == ["websocket"], "a rule for more than WebSockets: \(entry)")
        let pattern = try #require(trigger["url-filter"] as? String)
        let regex = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
        guard regex.firstMatch(in: url, range: NSRange(url.startIndex..., in: url)) != nil else { continue }
        switch try #require((entry["action"] as? [String: Any])?["type"] as? String) {
        case "block": blocked = true
        case "ignore-previous-rules": blocked = false
        case let other: Issue.record("unexpected action \(other)")
        }
    }
    return !blocked
}

func contentFilter(_ rules: [String]) throws -> URLFilter {
    try URLFilter(settings: settings("<key>URLFilterEnable</key><true/><key>URLFilterEnableContentFilter</key><true/>"
        + "<key>URLFilterRules</key><array>\(rules.joined())</array>"))
}

@Suite("WebSockets follow the URL filter, through WebKit's content rules")
struct WebSocketRulesTests {
    let rules = [
        rule("secret", regex: true, allow: false),
        rule("ws://example.org/live*", allow: true),
        rule("example.net:443/chat", allow: true),
        rule("http://example.com/*", allow: true),
        rule(#"^wss://proctor\.example\.org/"#, regex: true, allow: true),
        rule("*.lms.org:80", allow: true),
        rule("moodle.example.edu/*", allow: true),
    ]

    /// Each URL and whether SEB's rules allow it, worked out by hand.
    let table: [(String, Bool)] = [
        ("ws://example.org/live", true),
        ("ws://example.org/live/room?id=3", true),
        ("WS://EXAMPLE.ORG/live", true),
        ("wss://example.org/live", false),            // the rule's scheme is ws, compared as written
        ("ws://example.org/live/secret", false),      // a block rule comes first
        ("ws://example.org/other", false),            // no rule allows it
        ("wss://example.net/chat", true),             // wss's default port is 443
        ("wss://example.net:443/chat", true),
        ("ws://example.net/chat", false),             // ws's default port is 80
        ("ws://example.net:443/chat", true),
        ("ws://example.com/x", false),                // an http rule does not take ws
        ("wss://example.com/x", false),
        ("wss://proctor.example.org/socket", true),
        ("ws://proctor.example.org/socket", false),
        ("ws://a.lms.org/", true),                    // ws's default port is 80
        ("ws://a.lms.org:80/", true),
        ("wss://a.lms.org/", false),
        ("ws://a.lms.org:8080/", false),
        ("wss://moodle.example.edu/local/autosave", true),   // no scheme: any scheme
        ("ws://www.moodle.example.edu/x", true),
        ("wss://moodle.example.edu.evil.org/x", false),
        ("wss://evil.org/moodle.example.edu/x", false),
    ]

    @Test("the list WebKit gets decides every ws and wss URL as the filter does, and as SEB's rules read")
    func agreesWithTheFilter() throws {
        let f = try contentFilter(rules)
        let list = WebSocketRules.list(for: f)
        #expect(list.unwritten.isEmpty, "\(list.unwritten)")
        for (url, allowed) in table {
            #expect((f.decide(url) == .allow) == allowed, "the filter on \(url)")
            #expect(try webKitAllows(list.json, url) == allowed, "WebKit's list on \(url)")
            #expect((f.decideWebSocket(url) == .allow) == allowed, "decideWebSocket on \(url)")
            #expect(f.verdict(url).hasPrefix(allowed ? "allow " : "block "), "\(f.verdict(url))")
        }
    }

    @Test("every pattern in the list is in WebKit's dialect: no alternation, no lookahead")
    func dialect() throws {
        let odd = ["example.org:80", "https://example.org:443/a?.", "*:8080", "u:p@example.org:80/x#y", "ws*://h:80/",
                   "http://.example.org:443", "localhost:80/a+b(1).php", "example.org/[x]{2}$^|"]
        let f = try contentFilter(odd.map { rule($0, allow: true) } + rules)
        let json = WebSocketRules.list(for: f).json
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        for entry in entries {
            let pattern = try #require((entry["trigger"] as? [String: Any])?["url-filter"] as? String)
            #expect(WebSocketRules.problem(pattern) == nil, "\(pattern)")
            #expect(!pattern.contains("(?="), "\(pattern)")
        }
        // A port's alternatives: the port named, or the default of a scheme the expression takes.
        #expect(try webKitAllows(json, "ws://h:80/"))
        #expect(try !webKitAllows(json, "wss://h/"))
        #expect(try webKitAllows(json, "ws://h/"))
        #expect(try webKitAllows(json, "ws://localhost/a+b(1).php"))
        #expect(try !webKitAllows(json, "ws://localhost:81/a+b(1).php"))
    }

    @Test("WebKit's dialect: what it refuses")
    func problems() {
        for pattern in [#"^wss://h/\d+"#, "a|b", "(?=ws)x", "(?!ws)x", "a{2}", "x^y", "x$y", #"\bexam"#, #"[\w]"#] {
            #expect(WebSocketRules.problem(pattern) != nil, "\(pattern)")
        }
        for pattern in ["^wss://h/", #"^wss?://moodle\.example\.org/"#, "exam", #"[^/?#]+\.example\.org"#,
                        "(?:a)?b*c+$", #"\^\$\|\{"#, "[$^|{]"] {
            #expect(WebSocketRules.problem(pattern) == nil, "\(pattern)")
        }
    }

    @Test("a rule WebKit cannot take only blocks more: an allow rule's WebSockets stay blocked, a block rule blocks them all")
    func unwrittenRulesFailClosed() throws {
        let allowOdd = try contentFilter([rule("^ws://(a|b)\\.example\\.org/", regex: true, allow: true),
                                          rule("ws://c.example.org/*", allow: true)])
        let list = WebSocketRules.list(for: allowOdd)
        #expect(list.unwritten.count == 1)
        #expect(allowOdd.decide("ws://a.example.org/") == .allow)
        #expect(try !webKitAllows(list.json, "ws://a.example.org/"))
        #expect(try webKitAllows(list.json, "ws://c.example.org/x"))
        // --check says what WebKit will do, and why.
        #expect(allowOdd.verdict("ws://a.example.org/").hasPrefix("block ws://a.example.org/: rule ^ws://(a|b)"))
        #expect(allowOdd.verdict("ws://c.example.org/x").hasPrefix("allow "))

        let blockOdd = try contentFilter([rule(#"/\d+$"#, regex: true, allow: false),
                                          rule("ws://c.example.org/*", allow: true)])
        let blocked = WebSocketRules.list(for: blockOdd)
        #expect(blocked.unwritten.count == 1)
        #expect(try !webKitAllows(blocked.json, "ws://c.example.org/x"))
        #expect(try !webKitAllows(blocked.json, "ws://c.example.org/1"))
        #expect(blockOdd.verdict("ws://c.example.org/x").hasPrefix("block ws://c.example.org/x: rule /"))
    }

    @Test("--check: ws and wss URLs are decided; without the content filter WebSockets are not filtered")
    func verdicts() throws {
        let on = try contentFilter([rule("example.org", allow: true)])
        #expect(on.verdict("wss://example.org/x") == "allow wss://example.org/x")
        #expect(on.verdict("ws://other.org/x").hasPrefix("block ws://other.org/x"))
        let off = try filter([rule("example.org", allow: true)])
        #expect(off.verdict("ws://other.org/x").hasPrefix("allow "))
        #expect(off.verdict("ftp://example.org/").hasPrefix("block "))
    }

    @Test("the filter's own pattern takes ws and wss default ports too")
    func icuPorts() throws {
        #expect(try allows("example.org:80", "ws://example.org/"))
        #expect(try allows("example.org:443", "wss://example.org/"))
        #expect(try !allows("example.org:443", "ws://example.org/"))
        #expect(try !allows("https://example.org:443", "wss://example.org/"))
    }

    func allows(_ expression: String, _ url: String) throws -> Bool {
        try filter([rule(expression, allow: true)]).decide(url) == .allow
    }
}
