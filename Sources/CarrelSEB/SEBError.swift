/// Why a configuration could not be read or used: each says what was wrong
/// and what to do about it.
public enum SEBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file is empty.
    case empty
    /// Not an XML property list, or not one SEB's settings can be (the detail says where).
    case notAPropertyList(String)
    /// A gzip stream inside the file is damaged or cut short.
    case badCompression(String)
    /// The file is password-encrypted and no password was given.
    case passwordRequired(forConfiguringClient: Bool)
    /// The password does not open the file (its HMAC does not match).
    case wrongPassword
    /// Shorter than its format says it must be.
    case truncated(String)
    /// Encrypted for a certificate ("pkhs"/"phsk"): carrel-browser has no identity store.
    case certificateEncryptionUnsupported
    /// An encrypted container with a version or option this reader does not know.
    case unsupportedEncryption(String)
    /// Bigger than any real configuration.
    case tooLarge(Int)
    /// A setting has a value carrel-browser cannot use (the key and why).
    case invalidSetting(key: String, problem: String)
    /// A seb:// or sebs:// link that is not a URL.
    case badLink(String)

    public var description: String {
        switch self {
        case .empty:
            return "the file is empty; export the exam's configuration again from SEB's Config Tool or the LMS"
        case .notAPropertyList(let detail):
            return "not an SEB configuration: \(detail); give a .seb file as SEB's Config Tool or the LMS writes it"
        case .badCompression(let detail):
            return "the file's compressed data is damaged (\(detail)); download the .seb file again"
        case .passwordRequired(let client):
            return client
                ? "the file is encrypted for configuring a client (\"pwcc\"); give its settings password with --password-file FILE"
                : "the file is encrypted with a password (\"pswd\"); give the exam's start password with --password-file FILE"
        case .wrongPassword:
            return "the password does not open this file; check the exam's password (letters' case counts) and try again"
        case .truncated(let detail):
            return "the file is cut short (\(detail)); download the .seb file again"
        case .certificateEncryptionUnsupported:
            return "the file is encrypted for a certificate (\"pkhs\"/\"phsk\"), which carrel-browser does not support; "
                + "export it with a password or unencrypted instead"
        case .unsupportedEncryption(let detail):
            return "the file's encryption is not the form SEB writes (\(detail)); export it again with SEB's Config Tool"
        case .tooLarge(let size):
            return "the file is \(size) bytes, more than any SEB configuration (at most 16 MiB); check you gave the right file"
        case .invalidSetting(let key, let problem):
            return "the setting \(key) \(problem)"
        case .badLink(let detail):
            return "not a seb:// or sebs:// link: \(detail)"
        }
    }
}
