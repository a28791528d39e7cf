import Crypto
import Foundation

/// A .seb file, read: its settings and how it was stored.
///
/// Forms read: a plain XML property list; that gzip-compressed; the binary
/// containers SEB writes, each possibly gzip-compressed as a whole:
/// "plnd" (plain data, gzip inside), "pswd" (RNCryptor v3 with the exam's
/// password, gzip inside) and "pwcc" (the same for configuring a client, with
/// the SHA-256 hex of the settings password as SEB keys it). "pkhs" and "phsk"
/// (encrypted for a certificate) are refused with a clear error.
public struct SEBConfiguration: Sendable {
    public enum Storage: String, Sendable {
        case xml = "plain XML"
        case plainData = "plain data (\"plnd\")"
        case password = "password-encrypted (\"pswd\")"
        case passwordForConfiguringClient = "password-encrypted for configuring a client (\"pwcc\")"
    }

    /// The root dictionary, every key kept.
    public let settings: PlistValue
    public let storage: Storage
    /// Whether the file (or its container) was gzip-compressed.
    public let wasCompressed: Bool

    public static let maximumFileSize = 16 << 20

    /// Reads a .seb file's bytes; `password` opens the encrypted forms.
    public init(fileBytes: [UInt8], password: String? = nil) throws(SEBError) {
        guard !fileBytes.isEmpty else { throw .empty }
        guard fileBytes.count <= Self.maximumFileSize else { throw .tooLarge(fileBytes.count) }
        var bytes = fileBytes
        var compressed = false
        if Gzip.isCompressed(bytes) {
            bytes = try Gzip.decompress(bytes)
            compressed = true
        }
        guard bytes.count >= 4 else { throw .truncated("\(bytes.count) bytes; no SEB configuration is that short") }
        let prefix = String(decoding: bytes[0..<4], as: UTF8.self)
        let body = Array(bytes[4...])
        switch prefix {
        case "pswd":
            guard let password else { throw .passwordRequired(forConfiguringClient: false) }
            settings = try Self.parsePlain(RNCryptor.decrypt(body, password: password))
            storage = .password
        case "pwcc":
            // SEB keys this form with the settings password's SHA-256 hex; a
            // client configured without a settings password uses an empty one.
            let key = password.map { ConfigKey.hex(SHA256.hash(data: Array($0.utf8))) } ?? ""
            settings = try Self.parsePlain(RNCryptor.decrypt(body, password: key))
            storage = .passwordForConfiguringClient
        case "plnd":
            settings = try Self.parsePlain(body)
            storage = .plainData
        case "pkhs", "phsk":
            throw .certificateEncryptionUnsupported
        default:
            guard Self.looksLikeXML(bytes) else {
                let shown = bytes.prefix(4).map { (0x20..<0x7f).contains($0) ? String(UnicodeScalar($0)) : "." }.joined()
                throw .notAPropertyList("it starts with '\(shown)', neither XML nor one of SEB's containers (pswd, pwcc, plnd)")
            }
            settings = try PropertyList.parse(bytes)
            storage = .xml
        }
        wasCompressed = compressed
    }

    /// The settings of an XML property list's text.
    public init(xml: String) throws(SEBError) {
        try self.init(fileBytes: Array(xml.utf8))
    }

    private static func parsePlain(_ bytes: [UInt8]) throws(SEBError) -> PlistValue {
        let inner = Gzip.isCompressed(bytes) ? try Gzip.decompress(bytes) : bytes
        guard looksLikeXML(inner) else {
            throw .notAPropertyList("the decrypted or unpacked data is not XML")
        }
        return try PropertyList.parse(inner)
    }

    static func looksLikeXML(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        return rest.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "<")
    }

    /// The Config Key (Moodle's computation).
    public var configKey: String { ConfigKey.compute(settings) }

    /// Writes the settings as SEB's "pswd" form (gzip, encrypt, gzip), for tests and tools.
    public static func encryptedFile(xml: String, password: String) -> [UInt8] {
        Gzip.compress(Array("pswd".utf8) + RNCryptor.encrypt(Gzip.compress(Array(xml.utf8)), password: password))
    }
}

/// SEB's hashed quit (and admin) passwords: the SHA-256 of the UTF-8
/// password in hex, compared without regard to case (SEB writes lowercase;
/// some tools uppercase).
public enum QuitPassword {
    public static func hash(_ password: String) -> String {
        ConfigKey.hex(SHA256.hash(data: Array(password.utf8)))
    }

    public static func matches(_ password: String, hashed: String) -> Bool {
        let candidate = Array(hash(password).utf8)
        let expected = Array(hashed.lowercased().utf8)
        guard candidate.count == expected.count else { return false }
        // Constant time over the whole string.
        return zip(candidate, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// The Browser Exam Key of carrel-browser: HMAC-SHA256, keyed with the
/// configuration's `examKeySalt` (empty when absent), over the digest of this
/// build's files and the Config Key. Not SEB's own key (which hashes SEB's
/// application bundle): it identifies this build of carrel-browser with this
/// configuration, and changes with either. `carrel-browser --keys FILE` prints
/// it for the LMS's list of allowed keys.
public enum BrowserExamKey {
    public static func compute(settings: PlistValue, buildDigest: String) -> String {
        var salt: [UInt8] = []
        if case .data(let bytes)? = settings["examKeySalt"] { salt = bytes }
        let message = Array(("carrel-browser|" + buildDigest + "|" + ConfigKey.compute(settings)).utf8)
        return ConfigKey.hex(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: salt)))
    }

    /// SHA-256 over the given files' bytes, in order: the build's identity.
    public static func buildDigest(files: [[UInt8]]) -> String {
        var hasher = SHA256()
        for file in files {
            hasher.update(data: Array(String(file.count).utf8) + [0])
            hasher.update(data: file)
        }
        return ConfigKey.hex(hasher.finalize())
    }
}

/// seb:// and sebs:// links: the URL of a .seb file, over http and https.
public enum SEBLink {
    /// Whether `url` is a seb:// or sebs:// link (valid or not).
    public static func isLink(_ url: String) -> Bool {
        let lower = url.lowercased()
        return lower.hasPrefix("seb://") || lower.hasPrefix("sebs://")
    }

    /// The http(s) URL a seb:// or sebs:// link names; nil for anything else.
    public static func configurationURL(_ link: String) throws(SEBError) -> String? {
        let lower = link.lowercased()
        let replaced: String
        if lower.hasPrefix("sebs://") {
            replaced = "https://" + link.dropFirst("sebs://".count)
        } else if lower.hasPrefix("seb://") {
            replaced = "http://" + link.dropFirst("seb://".count)
        } else {
            return nil
        }
        guard let components = URLComponents(string: replaced), let host = components.host, !host.isEmpty else {
            throw .badLink("'\(link)' has no host; expected seb://HOST/PATH or sebs://HOST/PATH")
        }
        return replaced
    }
}
