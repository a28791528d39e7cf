import CarrelSEB
import Testing

/// An XML plist around `body`, as SEB and Moodle's tests write one.
func plist(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="utf-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple Computer//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
      <dict>\(body)  </dict>
    </plist>
    """
}

func settings(_ body: String) throws -> PlistValue {
    try SEBConfiguration(xml: plist(body)).settings
}

@Suite("the Config Key, as Moodle's quizaccess_seb computes it")
struct ConfigKeyTests {
    // Moodle's published serialisation vectors: each XML fragment and the SEB-JSON it must give.
    @Test("SEB-JSON of each value type", arguments: [
        ("<key>date</key><date>1940-10-09T22:13:56Z</date>", #"{"date":"1940-10-09T22:13:56+00:00"}"#),
        ("<key>data</key><data>YmxhaGJsYWg=</data>", #"{"data":"YmxhaGJsYWg="}"#),
        ("<key>string</key><string>hello wörld</string>", #"{"string":"hello wörld"}"#),
        (#"<key>string</key><string>ws:\localhost</string>"#, #"{"string":"ws:\localhost"}"#),
        (#"<key>string</key><string>ws:\\localhost</string>"#, #"{"string":"ws:\\localhost"}"#),
        (#"<key>string</key><string>ws:\\\localhost</string>"#, #"{"string":"ws:\\\localhost"}"#),
        ("<key>bool</key><true/>", #"{"bool":true}"#),
        ("<key>array</key><array><key>arraybool</key><false/><key>arraybool2</key><true/></array>", #"{"array":[false,true]}"#),
        ("<key>bool</key><true/><key>array</key><array/>", #"{"array":[],"bool":true}"#),
        ("<key>dict</key><dict><key>dictbool</key><false/><key>dictbool2</key><true/></dict>",
         #"{"dict":{"dictbool":false,"dictbool2":true}}"#),
        ("<key>bool</key><true/><key>emptydict</key><dict/>", #"{"bool":true}"#),
        ("<key>testKey</key><string>testValue</string><key>allowWLAN</key><string>testValue2</string>"
            + "<key>allowWlan</key><string>testValue3</string>",
         #"{"allowWlan":"testValue3","allowWLAN":"testValue2","testKey":"testValue"}"#),
        ("<key>url</key><string>http://test.com</string>", #"{"url":"http://test.com"}"#),
        ("<key>dict</key><dict><key>banana</key><false/><key>apple</key><true/></dict>",
         #"{"dict":{"apple":true,"banana":false}}"#),
    ])
    func json(_ xml: String, _ expected: String) throws {
        #expect(ConfigKey.json(try settings(xml)) == expected)
    }

    @Test("an empty configuration hashes PHP's empty array, Moodle's published value")
    func empty() throws {
        #expect(ConfigKey.compute(try settings("")) == "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945")
    }

    @Test("originatorVersion does not count, at any depth")
    func originatorVersion() throws {
        let with = try settings("<key>originatorVersion</key><string>SEB_OSX_2.1.4</string><key>a</key><dict>"
            + "<key>originatorVersion</key><string>x</string><key>b</key><true/></dict>")
        let without = try settings("<key>a</key><dict><key>b</key><true/></dict>")
        #expect(ConfigKey.compute(with) == ConfigKey.compute(without))
        #expect(ConfigKey.json(with) == #"{"a":{"b":true}}"#)
    }

    @Test("dictionaries left empty go too; integers, reals, quotes and control characters as PHP writes them")
    func details() throws {
        let value = try settings("<key>outer</key><dict><key>inner</key><dict/></dict><key>n</key><integer>-3</integer>"
            + "<key>r</key><real>888</real><key>q</key><string>say \"hi\"\n\t/</string>")
        #expect(ConfigKey.json(value) == #"{"n":-3,"q":"say \"hi\"\n\t/","r":888.0}"#)
    }

    @Test("keys order as Unicode's root collation: punctuation, digits, letters; lowercase first")
    func order() throws {
        let value = try settings("<key>b</key><true/><key>a_b</key><true/><key>a1</key><true/><key>A</key><true/>"
            + "<key>a</key><true/><key>ab</key><true/>")
        #expect(ConfigKey.json(value) == #"{"a":true,"A":true,"a_b":true,"a1":true,"ab":true,"b":true}"#)
    }

    @Test("the header and per-page hashes: SHA-256 of the URL (no fragment) and the key")
    func urlHash() {
        let key = "4fa9af8ec8759eb7c680752ef4ee5eaf1a860628608fccae2715d519849f9292"
        let expected = "443b26227fd9e7bcc6dcdf7bc5a4cdac9821109c54846e710012e3975821aa23"
        #expect(ConfigKey.urlHash(url: "https://exam.example.org/mod/quiz/view.php?id=7", key: key) == expected)
        #expect(ConfigKey.urlHash(url: "https://exam.example.org/mod/quiz/view.php?id=7#q3", key: key) == expected)
    }

    @Test("the quit password hash is SEB's SHA-256 hex, compared without regard to case")
    func quitPassword() {
        let hash = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
        #expect(QuitPassword.hash("secret") == hash)
        #expect(QuitPassword.matches("secret", hashed: hash.uppercased()))
        #expect(!QuitPassword.matches("Secret", hashed: hash))
        #expect(!QuitPassword.matches("secret", hashed: ""))
    }

    @Test("the Browser Exam Key changes with the build and with the configuration")
    func browserExamKey() throws {
        let a = try settings("<key>startURL</key><string>https://a.example</string>")
        let b = try settings("<key>startURL</key><string>https://b.example</string>")
        let build1 = BrowserExamKey.buildDigest(files: [[1, 2, 3]])
        let build2 = BrowserExamKey.buildDigest(files: [[1, 2, 4]])
        let key = BrowserExamKey.compute(settings: a, buildDigest: build1)
        #expect(key.count == 64)
        #expect(key == BrowserExamKey.compute(settings: a, buildDigest: build1))
        #expect(key != BrowserExamKey.compute(settings: a, buildDigest: build2))
        #expect(key != BrowserExamKey.compute(settings: b, buildDigest: build1))
    }
}
