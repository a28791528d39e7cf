import CarrelSEB
import Testing

/// Hex text → bytes.
func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        out.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return out
}

let examXML = plist("<key>startURL</key><string>https://exam.example.org/quiz</string>"
    + "<key>originatorVersion</key><string>SEB_Win_3.5</string><key>someFutureKey</key><integer>4</integer>")

@Suite(".seb files: XML, gzip, and SEB's containers")
struct SEBFileTests {
    @Test("RNCryptor v3 with a password, against a vector made by Python's cryptography")
    func rncryptorVector() throws {
        // Salts 00…07 and 08…0f, IV 10…1f, password "exam-password".
        let message = bytes(hex: "0301000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1fd28ce378ed2a31e842944aa6b6b4880b55223e088573b1d85512e5f58ec93f5bacb5030a3fae5a846171a52b839d61793bb99979849e177ab381e9d8a521ada7")
        #expect(try RNCryptor.decrypt(message, password: "exam-password") == Array("Carrel exam configuration".utf8))
        #expect(throws: SEBError.wrongPassword) { try RNCryptor.decrypt(message, password: "exam-Password") }
        var tampered = message
        tampered[40] ^= 1
        #expect(throws: SEBError.wrongPassword) { try RNCryptor.decrypt(tampered, password: "exam-password") }
    }

    @Test("RNCryptor round trip, and every truncation is a clear error")
    func rncryptorTruncation() throws {
        let message = RNCryptor.encrypt(Array("hello".utf8), password: "p")
        #expect(try RNCryptor.decrypt(message, password: "p") == Array("hello".utf8))
        for length in 0..<message.count {
            #expect(throws: SEBError.self) { try RNCryptor.decrypt(Array(message[0..<length]), password: "p") }
        }
    }

    @Test("plain XML, gzip-compressed XML, and plnd read the same settings")
    func plainForms() throws {
        let xml = try SEBConfiguration(xml: examXML)
        #expect(xml.storage == .xml)
        let gz = try SEBConfiguration(fileBytes: Gzip.compress(Array(examXML.utf8)))
        #expect(gz.wasCompressed && gz.settings == xml.settings)
        let plnd = try SEBConfiguration(fileBytes: Gzip.compress(Array("plnd".utf8) + Gzip.compress(Array(examXML.utf8))))
        #expect(plnd.storage == .plainData && plnd.settings == xml.settings)
        #expect(plnd.configKey == xml.configKey)
    }

    @Test("pswd: opens with its password, asks for one, refuses a wrong one")
    func passwordForm() throws {
        let file = SEBConfiguration.encryptedFile(xml: examXML, password: "Start-123")
        let opened = try SEBConfiguration(fileBytes: file, password: "Start-123")
        #expect(opened.storage == .password)
        #expect(opened.configKey == (try SEBConfiguration(xml: examXML)).configKey)
        #expect(throws: SEBError.passwordRequired(forConfiguringClient: false)) { try SEBConfiguration(fileBytes: file) }
        #expect(throws: SEBError.wrongPassword) { try SEBConfiguration(fileBytes: file, password: "start-123") }
    }

    @Test("pwcc: keyed with the settings password's SHA-256 hex")
    func configuringClientForm() throws {
        let key = QuitPassword.hash("admin")
        let file = Gzip.compress(Array("pwcc".utf8) + RNCryptor.encrypt(Gzip.compress(Array(examXML.utf8)), password: key))
        #expect(try SEBConfiguration(fileBytes: file, password: "admin").storage == .passwordForConfiguringClient)
        #expect(throws: SEBError.wrongPassword) { try SEBConfiguration(fileBytes: file, password: "Admin") }
        // Without a password: the empty one SEB uses for a client without a settings password.
        #expect(throws: SEBError.wrongPassword) { try SEBConfiguration(fileBytes: file) }
        let open = Gzip.compress(Array("pwcc".utf8) + RNCryptor.encrypt(Array(examXML.utf8), password: ""))
        #expect(try SEBConfiguration(fileBytes: open).storage == .passwordForConfiguringClient)
    }

    @Test("certificate-encrypted files are refused as not supported")
    func certificateForm() {
        for prefix in ["pkhs", "phsk"] {
            let file = Gzip.compress(Array(prefix.utf8) + [UInt8](repeating: 7, count: 64))
            #expect(throws: SEBError.certificateEncryptionUnsupported) { try SEBConfiguration(fileBytes: file) }
        }
    }

    @Test("empty, garbage, truncated and malformed files are clear errors")
    func badFiles() throws {
        #expect(throws: SEBError.empty) { try SEBConfiguration(fileBytes: []) }
        #expect(throws: SEBError.self) { try SEBConfiguration(fileBytes: Array("GIF89a....".utf8)) }
        let gz = Gzip.compress(Array(examXML.utf8))
        for length in [2, 10, gz.count / 2, gz.count - 1] {
            #expect(throws: SEBError.self) { try SEBConfiguration(fileBytes: Array(gz[0..<length])) }
        }
        #expect(throws: SEBError.self) { try SEBConfiguration(xml: "<?xml This is some bad xml for sure.") }
        #expect(throws: SEBError.self) { try SEBConfiguration(xml: "<plist><array/></plist>") }
        #expect(throws: SEBError.self) { try SEBConfiguration(xml: plist("<key>a</key>")) }
        #expect(throws: SEBError.self) { try SEBConfiguration(xml: plist("<key>a</key><integer>x</integer>")) }
        let deep = String(repeating: "<array>", count: 500) + String(repeating: "</array>", count: 500)
        #expect(throws: SEBError.self) { try SEBConfiguration(xml: plist("<key>a</key>" + deep)) }
    }

    @Test("random bytes never crash the reader")
    func randomBytes() {
        var generator = SplitMix64(seed: 0x5EB)
        for _ in 0..<300 {
            let count = Int.random(in: 0...300, using: &generator)
            var data = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if count > 4, Bool.random(using: &generator) {
                let prefixes = ["pswd", "pwcc", "plnd", "<?xm"]
                data.replaceSubrange(0..<4, with: Array(prefixes[Int.random(in: 0..<4, using: &generator)].utf8))
            }
            _ = try? SEBConfiguration(fileBytes: data, password: "x")
            _ = try? SEBConfiguration(fileBytes: Gzip.compress(data), password: "x")
        }
    }

    @Test("seb:// and sebs:// name http and https")
    func links() throws {
        #expect(try SEBLink.configurationURL("sebs://exam.example.org/x.seb") == "https://exam.example.org/x.seb")
        #expect(try SEBLink.configurationURL("seb://exam.example.org/x.seb") == "http://exam.example.org/x.seb")
        #expect(try SEBLink.configurationURL("https://exam.example.org/") == nil)
        #expect(throws: SEBError.self) { try SEBLink.configurationURL("sebs://") }
    }
}

/// A seeded generator, so a failure repeats.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
}
