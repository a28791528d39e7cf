import CarrelWire

/// A signed statement about a session, to send to the exam server with the
/// answers: the statement's canonical JSON exactly as signed, and its
/// Ed25519 signature. The server checks it against the machine's enrolled
/// public key and the nonce it issued (docs/ATTESTATION.md).
public struct SessionAttestation: Hashable, Sendable {
    /// The statement's bytes (UTF-8 canonical JSON): verify the signature over these, unchanged.
    public var statement: [UInt8]
    /// 64 bytes.
    public var signature: [UInt8]

    public init(statement: [UInt8], signature: [UInt8]) {
        self.statement = statement
        self.signature = signature
    }

    /// The statement as text.
    public var statementText: String { String(decoding: statement, as: UTF8.self) }

    /// `{"signature":"<base64>","statement":"<the statement, as a JSON string>"}`:
    /// what `carrelctl attest verify` and `carrel_attest` read.
    public var envelopeJSON: String {
        "{\"signature\":\"\(Base64.encode(signature))\",\"statement\":\(JSONString.quoted(statementText))}"
    }
}

/// Why a session got no statement: the compositor's reason (reasons of later
/// protocol versions arrive as `other`) and a message for logs.
public struct AttestationError: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: AttestationFailureReason
    public var message: String

    public init(_ reason: AttestationFailureReason, message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { "\(reason): \(message)" }
}

/// Standard base64 with padding (RFC 4648), for the envelope.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let b0 = chunk[0], b1 = chunk.count > 1 ? chunk[1] : 0, b2 = chunk.count > 2 ? chunk[2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(chunk.count > 1 ? alphabet[Int((b1 & 0x0f) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(chunk.count > 2 ? alphabet[Int(b2 & 0x3f)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

