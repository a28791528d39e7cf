import Crypto
import _CryptoExtras
import Foundation

/// RNCryptor's data format, version 3, with a password: what SEB's "pswd" and
/// "pwcc" containers hold.
///
/// version (3) · options (1: password) · encryption salt (8) · HMAC salt (8)
/// · IV (16) · AES-256-CBC ciphertext with PKCS#7 padding · HMAC-SHA256 (32)
/// over everything before it. Both keys are PBKDF2-HMAC-SHA1 of the password's
/// UTF-8 bytes, 10 000 rounds, 32 bytes.
public enum RNCryptor {
    static let version: UInt8 = 3
    static let passwordOption: UInt8 = 1
    static let rounds = 10_000
    static let headerSize = 2 + 8 + 8 + 16
    static let hmacSize = 32

    public static func decrypt(_ message: [UInt8], password: String) throws(SEBError) -> [UInt8] {
        guard message.count >= 2 else { throw .truncated("the encrypted data has no header") }
        guard message[0] == version else {
            throw .unsupportedEncryption("RNCryptor version \(message[0]); SEB writes version 3")
        }
        guard message[1] == passwordOption else {
            throw .unsupportedEncryption("RNCryptor options \(message[1]); expected a password-based container (1)")
        }
        guard message.count >= headerSize + 16 + hmacSize else {
            throw .truncated("\(message.count) bytes of encrypted data; at least \(headerSize + 16 + hmacSize) expected")
        }
        let ciphertextEnd = message.count - hmacSize
        guard (ciphertextEnd - headerSize) % 16 == 0 else {
            throw .truncated("the ciphertext is not a whole number of AES blocks")
        }
        let encryptionSalt = message[2..<10]
        let hmacSalt = message[10..<18]
        let iv = message[18..<34]
        let (encryptionKey, hmacKey) = keys(password: password, encryptionSalt: encryptionSalt, hmacSalt: hmacSalt)
        let authenticated = message[0..<ciphertextEnd]
        guard HMAC<SHA256>.isValidAuthenticationCode(message[ciphertextEnd...], authenticating: authenticated,
                                                     using: hmacKey) else {
            throw .wrongPassword
        }
        do {
            let plaintext = try AES._CBC.decrypt(message[headerSize..<ciphertextEnd], using: encryptionKey,
                                                 iv: AES._CBC.IV(ivBytes: iv))
            return [UInt8](plaintext)
        } catch {
            // The HMAC matched, so the writer padded wrongly: not SEB's format.
            throw .unsupportedEncryption("authenticated, but the padding is invalid")
        }
    }

    /// Encrypts as SEB does (for tests and for writing files).
    public static func encrypt(_ plaintext: [UInt8], password: String) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let encryptionSalt = (0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let hmacSalt = (0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let iv = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let (encryptionKey, hmacKey) = keys(password: password, encryptionSalt: encryptionSalt[...], hmacSalt: hmacSalt[...])
        var message: [UInt8] = [version, passwordOption] + encryptionSalt + hmacSalt + iv
        // Both only fail for a wrong IV size, which is fixed above.
        let ciphertext = try! AES._CBC.encrypt(plaintext, using: encryptionKey, iv: AES._CBC.IV(ivBytes: iv))
        message += ciphertext
        message += HMAC<SHA256>.authenticationCode(for: message, using: hmacKey)
        return message
    }

    private static func keys(password: String, encryptionSalt: ArraySlice<UInt8>,
                             hmacSalt: ArraySlice<UInt8>) -> (SymmetricKey, SymmetricKey) {
        // An empty password is the HMAC key "", which HMAC pads with zero
        // bytes: the same key as a single zero byte, which BoringSSL's PBKDF2
        // takes where it would not take an empty buffer.
        let passwordBytes = password.isEmpty ? [0] : Array(password.utf8)
        // RNCryptor v3's fixed 10 000 rounds of SHA-1: below swift-crypto's
        // floor for new passwords, hence the unchecked variant. The format
        // fixes them; these files are what SEB's own writers produce.
        let derive = { (salt: ArraySlice<UInt8>) -> SymmetricKey in
            try! KDF.Insecure.PBKDF2.deriveKey(from: passwordBytes, salt: salt, using: .insecureSHA1,
                                               outputByteCount: 32, unsafeUncheckedRounds: rounds)
        }
        return (derive(encryptionSalt), derive(hmacSalt))
    }
}
