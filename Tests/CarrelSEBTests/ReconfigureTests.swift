import CarrelSEB
import Testing

private let reconfigureStart = "<key>startURL</key><string>https://lms.example.org/</string>"

private func policy(_ body: String) throws -> ReconfigurePolicy {
    try BrowserSettings(try settings(reconfigureStart + body)).reconfigure
}

@Suite("reconfiguring from a seb(s):// link during the exam")
struct ReconfigureTests {
    let link = "sebs://lms.example.org/mod/quiz/accessrule/seb/config.php?cmid=7"

    @Test("refused by default: without examSessionReconfigureAllow nothing reconfigures")
    func failsClosed() throws {
        let p = try policy("")
        #expect(p == ReconfigurePolicy(allow: false, configURL: nil, downloadAndOpen: true))
        guard case .refused(let why) = p.decide(link: link) else { Issue.record("allowed"); return }
        #expect(why.contains("does not allow reconfiguring"))
        #expect(try policy("<key>examSessionReconfigureAllow</key><false/>").decide(link: link) != .allowed(
            configurationURL: "https://lms.example.org/mod/quiz/accessrule/seb/config.php?cmid=7"))
    }

    @Test("allowed with no URL: any seb or sebs link, fetched over http or https")
    func allowedAnywhere() throws {
        let p = try policy("<key>examSessionReconfigureAllow</key><true/><key>examSessionReconfigureConfigURL</key><string></string>")
        #expect(p.decide(link: link) == .allowed(configurationURL: "https://lms.example.org/mod/quiz/accessrule/seb/config.php?cmid=7"))
        #expect(p.decide(link: "seb://127.0.0.1:8000/exam.seb") == .allowed(configurationURL: "http://127.0.0.1:8000/exam.seb"))
        #expect(p.decide(link: "https://lms.example.org/exam.seb") == .refused("it is not a seb:// or sebs:// link"))
        guard case .refused = p.decide(link: "sebs:///nohost") else { Issue.record("a link with no host was allowed"); return }
    }

    @Test("the URL setting limits it, with * as a wildcard, in the link's form or the http(s) one")
    func urlPattern() throws {
        let sebForm = try policy("<key>examSessionReconfigureAllow</key><true/>"
            + "<key>examSessionReconfigureConfigURL</key><string>sebs://lms.example.org/mod/quiz/accessrule/seb/config.php*</string>")
        #expect(sebForm.decide(link: link).isAllowed)
        #expect(!sebForm.decide(link: "sebs://evil.example.net/mod/quiz/accessrule/seb/config.php?cmid=7").isAllowed)
        #expect(!sebForm.decide(link: "seb://lms.example.org/mod/quiz/accessrule/seb/config.php?cmid=7").isAllowed)
        let httpsForm = try policy("<key>examSessionReconfigureAllow</key><true/>"
            + "<key>examSessionReconfigureConfigURL</key><string>https://lms.example.org/*</string>")
        #expect(httpsForm.decide(link: link).isAllowed)
        #expect(!httpsForm.decide(link: "sebs://lms.example.org.evil.net/x.seb").isAllowed)
        guard case .refused(let why) = httpsForm.decide(link: "sebs://other.example.org/x.seb") else { return }
        #expect(why.contains("only from https://lms.example.org/*"))
    }

    @Test("downloadAndOpenSebConfig off refuses even where reconfiguring is allowed")
    func downloadAndOpenOff() throws {
        let p = try policy("<key>examSessionReconfigureAllow</key><true/><key>downloadAndOpenSebConfig</key><false/>")
        #expect(!p.decide(link: link).isAllowed)
    }

    @Test("wrong types are clear errors; the keys count as honoured")
    func types() throws {
        #expect(throws: SEBError.self) { try policy("<key>examSessionReconfigureAllow</key><string>yes</string>") }
        #expect(throws: SEBError.self) { try policy("<key>examSessionReconfigureConfigURL</key><true/>") }
        let s = try settings(reconfigureStart + "<key>examSessionReconfigureAllow</key><true/>"
            + "<key>examSessionReconfigureConfigURL</key><string>*</string><key>downloadAndOpenSebConfig</key><true/>")
        #expect(BrowserSettings.unhonouredKeys(s) == [])
    }

    @Test("wildcard matching is whole-string, * takes any run, nothing else is special", arguments: [
        ("*", "", true), ("*", "anything", true), ("a*c", "abbbc", true), ("a*c", "abbbcd", false),
        ("https://h/*", "https://h/", true), ("https://h/*", "https://h", false), ("*.seb", "x.seb.html", false),
        ("a*b*c", "aXbYbZc", true), ("a?c", "abc", false), ("a?c", "a?c", true), ("a.c", "abc", false),
        ("", "", true), ("", "x", false), ("**x", "yx", true),
    ])
    func wildcard(pattern: String, text: String, expected: Bool) {
        #expect(ReconfigurePolicy.matches(pattern, text) == expected)
    }
}

extension ReconfigurePolicy.Verdict {
    var isAllowed: Bool { if case .allowed = self { true } else { false } }
}
