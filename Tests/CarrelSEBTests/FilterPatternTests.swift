import CarrelSEB
import Testing

// The filter's rules as the regular expressions both the browser (ICU) and
// its web process (PCRE) run: SEB's expressions written as whole-URL
// patterns, SEB's regex rules held to the dialect both read alike.

@Suite("SEB's expressions as whole-URL patterns")
struct FilterExpressionPatternTests {
    func allows(_ expression: String, _ url: String) throws -> Bool {
        try filter([rule(expression, allow: true)]).decide(url) == .allow
    }

    @Test("a wildcard stays within its part: no host, port or path is reached through another part")
    func wildcardsStayInTheirPart() throws {
        #expect(try allows("*.example.org", "https://www.example.org/"))
        #expect(try !allows("*.example.org", "https://evil.com/x.example.org"))
        #expect(try !allows("*.example.org", "https://evil.com/?.example.org"))
        #expect(try !allows("*.example.org", "https://evil.com/#.example.org"))
        #expect(try !allows("example.org", "https://example.org@evil.com/"))
        #expect(try !allows("example.org", "https://example.org:pass@evil.com/"))
        #expect(try allows("user@example.org", "https://user:secret@example.org/"))
        #expect(try !allows("user@example.org", "https://example.org/"))
        #expect(try allows("*@example.org", "https://example.org/"))
        #expect(try !allows("*:*@example.org", "https://example.org/"))
        #expect(try !allows("ex*.org", "https://example.com/a.org"))
        #expect(try !allows("example.org/exam*", "https://example.org/other?x=/exam"))
        #expect(try allows("example.org/exam*", "https://example.org/exam/2?x=1#top"))
        // A host wildcard never takes the port: the port rule still counts.
        #expect(try !allows("*:80", "http://example.org:8080/"))
        #expect(try allows("*:80", "http://example.org/"))
    }

    @Test("a port is the URL's, or its scheme's default when the URL names none")
    func ports() throws {
        #expect(try allows("example.org:80", "http://example.org/"))
        #expect(try allows("example.org:80", "http://example.org:80/"))
        #expect(try !allows("example.org:80", "https://example.org/"))
        #expect(try allows("example.org:443", "https://example.org/exam"))
        #expect(try !allows("example.org:443", "http://example.org/"))
        #expect(try !allows("example.org:80", "http://example.org:8080/"))
        #expect(try allows("example.org:8080", "http://example.org:8080/"))
        #expect(try !allows("example.org:8080", "http://example.org:80801/"))
        #expect(try allows("example.org:*", "http://example.org:9/"))
        #expect(try allows("example.org", "http://example.org:9/"))
    }

    @Test("the expression's punctuation is literal: dots, pluses, brackets, parentheses")
    func literals() throws {
        #expect(try allows("example.org/a+b(1).php", "https://example.org/a+b(1).php"))
        #expect(try !allows("example.org/a+b(1).php", "https://example.org/aab1Xphp"))
        #expect(try !allows("example.org", "https://exampleXorg/"))
        #expect(try allows("example.org/[x]{2}$^|", "https://example.org/[x]{2}$^|"))
        #expect(try !allows("example.org/[x]{2}", "https://example.org/xx"))
        #expect(try allows("example.org/\\d", "https://example.org/\\d"))
        #expect(try !allows("example.org/\\d", "https://example.org/5"))
    }

    @Test("case, one-word hosts, exact hosts, queries and fragments")
    func parts() throws {
        #expect(try allows("HTTPS://Example.ORG/Exam", "https://example.org/exam"))
        #expect(try allows("localhost", "http://localhost:8000/quiz"))
        #expect(try !allows("localhost", "http://www.localhost/"))
        #expect(try allows(".example.org", "http://example.org/"))
        #expect(try !allows(".example.org", "http://www.example.org/"))
        #expect(try allows("example.org/page?.", "https://example.org/page"))
        #expect(try allows("example.org/page?.", "https://example.org/page?"))
        #expect(try !allows("example.org/page?.", "https://example.org/page?a=1"))
        #expect(try allows("example.org/page?a=*", "https://example.org/page?a=1&b=2"))
        #expect(try !allows("example.org/page?a=*", "https://example.org/page"))
        #expect(try allows("example.org/page?*", "https://example.org/page"))
        #expect(try allows("example.org/doc#part*", "https://example.org/doc#part2"))
        #expect(try !allows("example.org/doc#part*", "https://example.org/doc"))
        #expect(try allows("http://example.org", "http://example.org/"))
        #expect(try !allows("http://example.org", "https://example.org/"))
    }

    @Test("outside ASCII: a path's characters percent-encoded as WebKit writes them; a host never matches")
    func wide() throws {
        #expect(try allows("example.org/café", "https://example.org/caf%C3%A9"))
        #expect(try allows("example.org/café", "https://example.org/caf%c3%a9"))
        #expect(try !allows("example.org/straße", "https://example.org/strasse"))
        #expect(try !allows("bücher.example", "https://xn--bcher-kva.example/"))
    }

    @Test("an IPv6 host is never an expression's (fail closed: only a regex rule allows one)")
    func ipv6() throws {
        #expect(try !allows("*", "http://[::1]/"))
        #expect(try allows("*", "http://127.0.0.1/"))
        #expect(try filter([rule(#"^http://\[::1\]/"#, regex: true, allow: true)]).decide("http://[::1]/x") == .allow)
    }

    @Test("every expression's pattern is in the dialect, however odd the expression")
    func patternsInTheDialect() throws {
        for expression in ["*", "a", "*.*", "x://y", "u:p@h:1/p?q#f", "h/[a-z]{3}(x|y)\\", "h/((", "h/]]}}", "a?.", "a#.",
                           "ü.example/é", "h:/p", "h/a**b", "*://*@*:*/*?*#*", "a b/c d"] {
            let r = try URLFilter.rule(expression, regex: false, action: .allow)
            #expect(PortableRegex.problem(r.pattern) == nil, "\(expression) → \(r.pattern)")
        }
    }

    @Test("block rules are tried first, then allow rules: the order the web process is given")
    func order() throws {
        let f = try filter([rule("a.example", allow: true), rule("b.example", allow: false), rule("c.example", allow: true),
                            rule("d", regex: true, allow: false)])
        #expect(f.orderedRules.map(\.expression) == ["b.example", "d", "a.example", "c.example"])
        #expect(f.orderedRules.map(\.action) == [.block, .block, .allow, .allow])
        #expect(f.orderedRules[1].pattern == "d")
    }
}

@Suite("the regex dialect ICU and PCRE read alike")
struct PortableRegexTests {
    @Test("what SEB's regex rules are written with is taken")
    func taken() {
        for pattern in [#"^https?://(www\.)?example\.org/.*$"#, #"\bquiz\b"#, #"[^/]+\.pdf$"#, #"(?:a|b){2,3}?"#,
                        #"^https://exam\.example\.org/(?!admin)"#, #"x(?=y)"#, #"[a-z0-9_\-\.]+"#, #"\d{4}-\d\d"#,
                        #"a.b*c+d?e{3}f{2,}"#, #"[\]\[]"#, "logout", #"\/\:\@"#, "%C3%A9"] {
            #expect(PortableRegex.problem(pattern) == nil, "\(pattern)")
        }
    }

    @Test("what the two engines read differently, or one not at all, is refused")
    func refused() {
        for pattern in ["[[:alpha:]]", "[a-z&&[^x]]", "[a--b]", #"\Qa.b\E"#, "(?i)exam", #"\x41"#, #"\u0041"#,
                        #"\p{L}"#, #"\Aexam"#, #"exam\z"#, #"(a)\1"#, "a++", "a*+", "a{,3}", "a{x}", "x{", "[]a]", "[^]a]",
                        "a]", "a}", "(?<name>a)", "(?<=a)b", "(?#c)", "(a", "a)", "*a", "a|*b", "[abc", #"a\"#, #"\n"#,
                        #"[\b]"#, "^*", "straße", "[é]"] {
            #expect(PortableRegex.problem(pattern) != nil, "\(pattern)")
        }
    }

    @Test("a regex rule outside the dialect stops the configuration, naming the rule")
    func refusedRuleNamesItself() throws {
        do {
            _ = try filter([rule("example.org", allow: true), rule(#"\Qexam\E"#, regex: true, allow: true)])
            Issue.record("a rule outside the dialect was taken")
        } catch let error as SEBError {
            #expect("\(error)".contains("URLFilterRules[1]"), "\(error)")
            #expect("\(error)".contains(#"\Qexam\E"#), "\(error)")
        }
    }

    @Test("a literal is itself in the dialect and matches only itself")
    func literal() throws {
        let text = #"a.b*c+(d)[e]{f}|^$\?/:@#&=~%"#
        #expect(PortableRegex.problem(PortableRegex.literal(text)) == nil)
        let f = URLFilter(enabled: true, rules: [try URLFilter.rule("^" + PortableRegex.literal(text) + "$", regex: true, action: .allow)])
        #expect(f.decide(text) == .allow)
        #expect(f.decide("aXb*c+(d)[e]{f}|^$\\?/:@#&=~%") == .block(rule: nil))
    }
}

@Suite("the content filter and the quit URL's question")
struct ContentFilterAndQuitSettingsTests {
    let start = "<key>startURL</key><string>https://exam.example.org/</string>"

    @Test("URLFilterEnableContentFilter: off by default, and only with the filter on")
    func contentFilter() throws {
        #expect(try !BrowserSettings(settings(start + "<key>URLFilterEnable</key><true/>")).filter.filtersContent)
        #expect(try BrowserSettings(settings(start + "<key>URLFilterEnable</key><true/><key>URLFilterEnableContentFilter</key><true/>"))
            .filter.filtersContent)
        #expect(try !BrowserSettings(settings(start + "<key>URLFilterEnableContentFilter</key><true/>")).filter.filtersContent)
        #expect(throws: SEBError.self) {
            try BrowserSettings(settings(start + "<key>URLFilterEnableContentFilter</key><string>yes</string>"))
        }
        #expect(BrowserSettings.unhonouredKeys(try settings(start + "<key>URLFilterEnableContentFilter</key><true/>")) == [])
    }

    @Test("quitURLConfirm: asks first by default (SEB's default), quits at once when off")
    func quitURLConfirm() throws {
        let quit = "<key>quitURL</key><string>https://exam.example.org/done</string>"
        let asks = try BrowserSettings(settings(start + quit))
        #expect(asks.quitURLConfirm && asks.quitURLAction("https://exam.example.org/done/") == .confirmFirst)
        #expect(asks.quitURLAction("https://exam.example.org/") == nil)
        let quits = try BrowserSettings(settings(start + quit + "<key>quitURLConfirm</key><false/>"))
        #expect(quits.quitURLAction("https://exam.example.org/done") == .quit)
        #expect(try BrowserSettings(settings(start)).quitURLAction("https://exam.example.org/done") == nil)
        #expect(throws: SEBError.self) { try BrowserSettings(settings(start + "<key>quitURLConfirm</key><integer>1</integer>")) }
    }

    @Test("--check's line: allowed, blocked by a rule, by none, or not a web URL")
    func verdicts() throws {
        let f = try filter([rule("example.org", allow: true), rule("example.org/admin", allow: false)])
        #expect(f.verdict("https://example.org/") == "allow https://example.org/")
        #expect(f.verdict("https://example.org/admin") == "block https://example.org/admin: rule example.org/admin")
        #expect(f.verdict("https://other.org/") == "block https://other.org/: no rule allows it")
        #expect(f.verdict("file:///etc/passwd") == "block file:///etc/passwd: only http and https load")
    }
}
