import Crypto
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Why an attestation key could not be made, written or read: what
/// happened and what to do.
public struct AttestationKeyError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The machine's Ed25519 attestation key. Its private half is a file of one
/// line, the base64 of the 32-byte seed, mode 0600; the public half beside
/// it (`.pub`) is the base64 of the raw 32-byte public key, what an exam
/// server enrols.
///
/// ```swift
/// let key = AttestationKey.generate()
/// let paths = try key.write(toDirectory: "/etc/carrel/attestation", overwrite: false)
/// let again = try AttestationKey.load(path: paths.privateKey)
/// let signature = try again.sign(statementBytes)
/// ```
public struct AttestationKey {
    public static let privateFileName = "attestation.key"
    public static let publicFileName = "attestation.pub"

    let privateKey: Curve25519.Signing.PrivateKey

    public static func generate() -> AttestationKey {
        AttestationKey(privateKey: Curve25519.Signing.PrivateKey())
    }

    public var publicKey: AttestationPublicKey { AttestationPublicKey(key: privateKey.publicKey) }

    public func sign(_ bytes: [UInt8]) throws -> [UInt8] {
        Array(try privateKey.signature(for: bytes))
    }

    /// Writes both halves into `directory` (created, mode 0700, if missing).
    /// An existing key is kept unless `overwrite`: replacing it makes every
    /// enrolment of the old public half useless.
    public func write(toDirectory directory: String, overwrite: Bool) throws(AttestationKeyError) -> (privateKey: String, publicKey: String) {
        let privatePath = directory + "/" + Self.privateFileName
        let publicPath = directory + "/" + Self.publicFileName
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw AttestationKeyError("cannot create \(directory): \(String(cString: strerror(errno))); create it (mode 0700) or choose another --key-dir")
        }
        if !overwrite && access(privatePath, F_OK) == 0 {
            throw AttestationKeyError("\(privatePath) exists: this machine already has an attestation key; keep it, or pass --force to replace it (exam servers must then enrol the new public key, see docs/ATTESTATION.md)")
        }
        let seed = privateKey.rawRepresentation.base64EncodedString() + "\n"
        try Self.writeFile(privatePath, seed, mode: 0o600)
        try Self.writeFile(publicPath, publicKey.base64 + "\n", mode: 0o644)
        return (privatePath, publicPath)
    }

    /// Reads the private key `write` made. Refuses a file others may read:
    /// anyone who reads it can sign statements.
    public static func load(path: String) throws(AttestationKeyError) -> AttestationKey {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw AttestationKeyError("cannot read the attestation key \(path): \(String(cString: strerror(errno))); create one with `carrel keygen` or fix [attestation] key in the policy")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw AttestationKeyError("the attestation key \(path) is not a regular file; point [attestation] key at the attestation.key `carrel keygen` wrote")
        }
        if info.st_uid != 0 && info.st_uid != geteuid() {
            throw AttestationKeyError("the attestation key \(path) belongs to uid \(info.st_uid), who could sign statements with it; make it root's (chown root:root, chmod 600), or create a new one with `carrel keygen` as root")
        }
        if info.st_mode & 0o077 != 0 {
            throw AttestationKeyError("the attestation key \(path) may be read or changed by others (mode \(String(info.st_mode & 0o777, radix: 8))); anyone who reads it can sign statements: chmod 600 it, then enrol a new key if it may have been copied")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 1024 else {
            throw AttestationKeyError("cannot read the attestation key \(path) (unreadable, or larger than a key file); create one with `carrel keygen`")
        }
        let text = trimmingWhitespace(String(decoding: data, as: UTF8.self))
        guard let seed = Data(base64Encoded: text), seed.count == 32,
              let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
            throw AttestationKeyError("\(path) is not an attestation key (expected one line: the base64 of a 32-byte Ed25519 seed, as `carrel keygen` writes it)")
        }
        return AttestationKey(privateKey: key)
    }

    private static func writeFile(_ path: String, _ text: String, mode: mode_t) throws(AttestationKeyError) {
        // Opened with its final mode: the private half is never readable by others, not even briefly.
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw AttestationKeyError("cannot create \(path): \(String(cString: strerror(errno))); run as root, or choose a --key-dir you may write")
        }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            throw AttestationKeyError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        _ = fchmod(fd, mode)
    }
}

/// The public half of an attestation key, as an exam server enrols it.
public struct AttestationPublicKey: Hashable {
    let key: Curve25519.Signing.PublicKey

    init(key: Curve25519.Signing.PublicKey) { self.key = key }

    /// From the base64 of the raw 32 bytes (the `.pub` file's line).
    public init(base64 text: String) throws(AttestationKeyError) {
        let trimmed = trimmingWhitespace(text)
        guard let raw = Data(base64Encoded: trimmed), raw.count == 32,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
            throw AttestationKeyError("not an attestation public key (expected the base64 of 32 bytes, the line of attestation.pub)")
        }
        self.key = key
    }

    public var base64: String { key.rawRepresentation.base64EncodedString() }

    /// SHA-256 of the raw 32 bytes, lower-case hex: what statements name.
    public var fingerprint: String { Digest.sha256Hex(Array(key.rawRepresentation)) }

    public func isValidSignature(_ signature: [UInt8], for bytes: [UInt8]) -> Bool {
        key.isValidSignature(signature, for: bytes)
    }

    public static func == (a: Self, b: Self) -> Bool { a.key.rawRepresentation == b.key.rawRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(key.rawRepresentation) }
}

/// SHA-256 as lower-case hex, of bytes or of a file.
public enum Digest {
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        hex(Array(SHA256.hash(data: bytes)))
    }

    /// The file's digest; nil if it cannot be opened or read.
    public static func sha256Hex(fileAt path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return sha256Hex(fileDescriptor: fd)
    }

    /// The digest of an open file from its first byte, read in pieces
    /// (`FilePieces`): an executable is a hundred megabytes, and no chunk of
    /// it should stay on the heap. nil on a read error.
    public static func sha256Hex(fileDescriptor fd: Int32) -> String? {
        var hasher = SHA256()
        let read = FilePieces.read(fd) { piece in
            piece.withUnsafeBytes { hasher.update(bufferPointer: $0) }
            return true
        }
        guard case .success = read else { return nil }
        return hex(Array(hasher.finalize()))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// The text without the white space (newlines too) around it, as a key file's
/// line is read.
private func trimmingWhitespace(_ text: String) -> String {
    guard let first = text.firstIndex(where: { !$0.isWhitespace }),
          let last = text.lastIndex(where: { !$0.isWhitespace }) else { return "" }
    return String(text[first...last])
}
