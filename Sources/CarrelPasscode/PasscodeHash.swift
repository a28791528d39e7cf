import Crypto
import FoundationEssentials
import _CryptoExtras

/// A Guided Access passcode stored as a salted slow hash, never in the clear.
///
/// The policy holds one line, `pbkdf2-sha256$ITERATIONS$SALT$HASH`: PBKDF2 with
/// HMAC-SHA256, the iteration count in decimal, a random salt and the 32-byte
/// derived key, both in standard base64 with padding.
///
/// ```swift
/// let line = try PasscodeHash.make(passcode: "4711")   // carrel hash-passcode
/// try PasscodeHash.verify(passcode: "4711", against: line)  // true
/// try PasscodeHash.verify(passcode: "0000", against: line)  // false
/// ```
public struct PasscodeHash: Sendable, Equatable, CustomStringConvertible {
    /// PBKDF2 rounds: how slow one guess is.
    public let iterations: Int
    public let salt: [UInt8]
    /// The PBKDF2 output for the passcode.
    public let derivedKey: [UInt8]

    public static let scheme = "pbkdf2-sha256"
    /// OWASP's 2023 figure for PBKDF2-HMAC-SHA256.
    public static let defaultIterations = 600_000
    /// Below 210 000 swift-crypto refuses PBKDF2 as too weak; above ten million
    /// one check would stall the compositor for seconds (and a hostile file
    /// could ask for that).
    public static let allowedIterations = 210_000...10_000_000
    public static let saltByteCount = 16
    public static let allowedSaltByteCounts = 16...64
    public static let derivedKeyByteCount = 32
    /// Shorter than this guesses itself too fast, however slow the hash.
    public static let minimumPasscodeLength = 4

    /// The line `make` prints, to paste into `[guided_access] passcode_hash`.
    public var description: String {
        "\(Self.scheme)$\(iterations)$\(Data(salt).base64EncodedString())$\(Data(derivedKey).base64EncodedString())"
    }

    /// Reads a line `description` wrote; every way it can be wrong is a `FormatError`.
    public init(parsing line: String) throws(FormatError) {
        let fields = line.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 4 else { throw .fieldCount(fields.count) }
        guard fields[0] == Self.scheme else { throw .scheme(String(fields[0])) }
        guard fields[1].allSatisfy({ $0.isASCII && $0.isNumber }), let iterations = Int(fields[1]),
              Self.allowedIterations.contains(iterations) else { throw .iterations(String(fields[1])) }
        guard let salt = Data(base64Encoded: String(fields[2])),
              Self.allowedSaltByteCounts.contains(salt.count) else { throw .salt }
        guard let key = Data(base64Encoded: String(fields[3])), key.count == Self.derivedKeyByteCount
        else { throw .derivedKey }
        self.iterations = iterations
        self.salt = Array(salt)
        self.derivedKey = Array(key)
    }

    init(iterations: Int, salt: [UInt8], derivedKey: [UInt8]) {
        self.iterations = iterations
        self.salt = salt
        self.derivedKey = derivedKey
    }

    /// A new hash line for `passcode` with a fresh random salt.
    public static func make(passcode: String, iterations: Int = defaultIterations) throws(PasscodeError) -> String {
        guard passcode.count >= minimumPasscodeLength else { throw .tooShort(minimum: minimumPasscodeLength) }
        guard allowedIterations.contains(iterations) else { throw .iterations(iterations) }
        let salt = SymmetricKey(size: SymmetricKeySize(bitCount: saltByteCount * 8))
            .withUnsafeBytes { Array($0) }
        let key = derive(passcode, salt: salt, iterations: iterations)
        return PasscodeHash(iterations: iterations, salt: salt, derivedKey: key).description
    }

    /// Whether `passcode` is the one `line` was made from; compares in
    /// constant time. Throws only when `line` itself is malformed.
    public static func verify(passcode: String, against line: String) throws(FormatError) -> Bool {
        try PasscodeHash(parsing: line).matches(passcode)
    }

    /// Whether `passcode` hashes to this derived key, in time independent of
    /// where the keys first differ.
    public func matches(_ passcode: String) -> Bool {
        let candidate = Self.derive(passcode, salt: salt, iterations: iterations)
        guard candidate.count == derivedKey.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(candidate, derivedKey) { difference |= a ^ b }
        return difference == 0
    }

    private static func derive(_ passcode: String, salt: [UInt8], iterations: Int) -> [UInt8] {
        // Cannot throw: the iteration count is checked against
        // `allowedIterations`, whose floor is swift-crypto's own.
        let key = try! KDF.Insecure.PBKDF2.deriveKey(from: Array(passcode.utf8), salt: salt, using: .sha256,
                                                     outputByteCount: derivedKeyByteCount, rounds: iterations)
        return key.withUnsafeBytes { Array($0) }
    }

    /// A passcode `make` will not hash.
    public enum PasscodeError: Error, Equatable, CustomStringConvertible {
        case tooShort(minimum: Int)
        case iterations(Int)

        public var description: String {
            switch self {
            case .tooShort(let minimum):
                "the passcode must be at least \(minimum) characters long"
            case .iterations(let count):
                "the iteration count must be from \(PasscodeHash.allowedIterations.lowerBound) to \(PasscodeHash.allowedIterations.upperBound), got \(count)"
            }
        }
    }

    /// What is wrong with a hash line, said so that a policy error can quote it.
    public enum FormatError: Error, Equatable, CustomStringConvertible {
        case fieldCount(Int)
        case scheme(String)
        case iterations(String)
        case salt
        case derivedKey

        public var description: String {
            let shape = "\(PasscodeHash.scheme)$ITERATIONS$SALT$HASH as `carrel hash-passcode` prints it"
            switch self {
            case .fieldCount(let count):
                return "must be \(shape): 4 fields separated by $, got \(count)"
            case .scheme(let scheme):
                return "must start with \(PasscodeHash.scheme)$ (the only scheme Carrel knows), got \"\(scheme)\""
            case .iterations(let text):
                return "must have an iteration count from \(PasscodeHash.allowedIterations.lowerBound) to \(PasscodeHash.allowedIterations.upperBound), got \"\(text)\""
            case .salt:
                return "must have a salt of \(PasscodeHash.allowedSaltByteCounts.lowerBound) to \(PasscodeHash.allowedSaltByteCounts.upperBound) bytes in base64 as its third field; make a new one with `carrel hash-passcode`"
            case .derivedKey:
                return "must have a \(PasscodeHash.derivedKeyByteCount)-byte hash in base64 as its last field; make a new one with `carrel hash-passcode`"
            }
        }
    }
}
