import CarrelSEB
import Testing

func rule(_ expression: String, regex: Bool = false, allow: Bool) -> String {
    "<dict><key>action</key><integer>\(allow ? 1 : 0)</integer><key>active</key><true/>"
        + "<key>expression</key><string>\(expression)</string><key>regex</key>\(regex ? "<true/>" : "<false/>")</dict>"
}

func filter(_ rules: [String], enabled: Bool = true) throws -> URLFilter {
    try URLFilter(settings: settings("<key>URLFilterEnable</key>\(enabled ? "<true/>" : "<false/>")"
        + "<key>URLFilterRules</key><array>\(rules.joined())</array>"))
}

@Suite("the URL filter, as SEB applies it")
struct URLFilterTests {
    @Test("a host expression takes its subdomains, any scheme and port, every path")
    func host() throws {
        let f = try filter([rule("example.org", allow: true)])
        #expect(f.decide("https://example.org/") == .allow)
        #expect(f.decide("http://moodle.example.org:8080/mod/quiz/view.php?id=3") == .allow)
        #expect(f.decide("https://example.org.evil.net/") == .block(rule: nil))
        #expect(f.decide("https://notexample.org/") == .block(rule: nil))
    }

    @Test("a leading dot is this host only; a path matches itself and below only when it says so")
    func exactAndPath() throws {
        let f = try filter([rule(".example.org/exam", allow: true), rule("127.0.0.1/quiz*", allow: true)])
        #expect(f.decide("https://example.org/exam") == .allow)
        #expect(f.decide("https://example.org/exam/") == .allow)
        #expect(f.decide("https://example.org/exam/2") == .block(rule: nil))
        #expect(f.decide("https://www.example.org/exam") == .block(rule: nil))
        #expect(f.decide("http://127.0.0.1:8000/quiz.html?x=1") == .allow)
        #expect(f.decide("http://127.0.0.1:8000/other.html") == .block(rule: nil))
    }

    @Test("block rules win over allow rules; scheme, port and query parts")
    func blockFirst() throws {
        let f = try filter([rule("*", allow: true), rule("https://*.example.org:8443/admin*", allow: false),
                            rule("example.net/page?.", allow: false)])
        #expect(f.decide("https://a.example.org:8443/admin/x") == .block(rule: "https://*.example.org:8443/admin*"))
        #expect(f.decide("http://a.example.org:8443/admin/x") == .allow)
        #expect(f.decide("https://a.example.org/admin/x") == .allow)
        #expect(f.decide("https://example.net/page") == .block(rule: "example.net/page?."))
        #expect(f.decide("https://example.net/page?q=1") == .allow)
    }

    @Test("regular expressions match anywhere in the URL, without regard to case")
    func regex() throws {
        let f = try filter([rule(#"^https://exam\.example\.org/"#, regex: true, allow: true),
                            rule("logout", regex: true, allow: false)])
        #expect(f.decide("https://EXAM.example.org/quiz") == .allow)
        #expect(f.decide("https://exam.example.org/logout.php") == .block(rule: "logout"))
        #expect(f.decide("http://exam.example.org/") == .block(rule: nil))
    }

    @Test("off: everything allowed; inactive rules ignored; a bad rule is a clear error")
    func offAndErrors() throws {
        #expect(try filter([rule("example.org", allow: false)], enabled: false).decide("https://example.org/") == .allow)
        let inactive = "<dict><key>action</key><integer>1</integer><key>active</key><false/><key>expression</key><string>example.org</string></dict>"
        #expect(try filter([inactive]).decide("https://example.org/") == .block(rule: nil))
        #expect(throws: SEBError.self) { try filter([rule("([", regex: true, allow: true)]) }
        #expect(throws: SEBError.self) { try filter([rule("example.org", allow: true).replacingOccurrences(of: "<integer>1", with: "<integer>7")]) }
    }
}

@Suite("the settings carrel-browser honours")
struct BrowserSettingsTests {
    @Test("defaults: quit allowed, downloads, printing and the context menu off, new windows in the same window")
    func defaults() throws {
        let s = try BrowserSettings(settings("<key>startURL</key><string>https://exam.example.org/</string>"))
        #expect(s.allowQuit && !s.allowDownUploads && !s.allowPrint && !s.enableRightMouse && !s.allowSpellCheck)
        #expect(s.linkPolicy == .newWindow && s.quitURL == nil && !s.filter.isEnabled)
    }

    @Test("values read, the quit URL compared as SEB compares it")
    func values() throws {
        let s = try BrowserSettings(settings("<key>startURL</key><string>https://exam.example.org/</string>"
            + "<key>quitURL</key><string>https://exam.example.org/done/</string><key>allowQuit</key><false/>"
            + "<key>newBrowserWindowByLinkPolicy</key><integer>0</integer><key>browserUserAgent</key><string>School</string>"
            + "<key>hashedQuitPassword</key><string>2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b</string>"))
        #expect(!s.allowQuit && s.linkPolicy == .block && s.userAgentSuffix == "School")
        #expect(s.isQuitURL("https://exam.example.org/done") && !s.isQuitURL("https://exam.example.org/"))
        #expect(QuitPassword.matches("secret", hashed: s.hashedQuitPassword!))
    }

    @Test("a missing or non-web start URL, or a value of the wrong type, is a clear error")
    func errors() {
        #expect(throws: SEBError.self) { try BrowserSettings(settings("")) }
        #expect(throws: SEBError.self) { try BrowserSettings(settings("<key>startURL</key><string>file:///etc/passwd</string>")) }
        #expect(throws: SEBError.self) {
            try BrowserSettings(settings("<key>startURL</key><string>https://a.example</string><key>allowQuit</key><string>yes</string>"))
        }
    }

    @Test("unknown keys are kept, count in the key, and are listed")
    func unknownKeys() throws {
        let base = "<key>startURL</key><string>https://a.example/</string>"
        let with = try settings(base + "<key>zzFuture</key><integer>1</integer><key>allowSiri</key><false/>")
        #expect(BrowserSettings.unhonouredKeys(with) == ["allowSiri", "zzFuture"])
        #expect(ConfigKey.compute(with) != ConfigKey.compute(try settings(base)))
        let text = BrowserSettings.explain(try SEBConfiguration(xml: plist(base + "<key>zzFuture</key><integer>1</integer>")))
        #expect(text.contains("zzFuture = 1"))
    }
}
