/// The exam server's nonce as the client passed it with
/// `request_attestation`: 16 to 256 bytes, so a statement is fresh (the
/// server issued it for one submission) and the event stays small.
public struct AttestationNonce: Sendable, Hashable {
    public static let byteCount = 16...256

    public let bytes: [UInt8]

    /// The nonce, or why it is refused (`invalid_nonce`).
    public static func validate(_ bytes: [UInt8]) -> Result<AttestationNonce, AttestationRefusal> {
        guard Self.byteCount.contains(bytes.count) else {
            return .failure(AttestationRefusal(
                .invalidNonce,
                "the nonce has \(bytes.count) bytes; expected \(byteCount.lowerBound) to \(byteCount.upperBound) "
                    + "bytes as issued by the exam server; ask the server for a new nonce"))
        }
        return .success(AttestationNonce(bytes: bytes))
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Lower-case hex, as the statement carries it.
    public var hex: String { Self.hex(bytes) }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Why a request for a statement gets `attestation_failed`, and the message.
public struct AttestationRefusal: Error, Sendable, Hashable {
    public var reason: AttestationFailureReason
    public var message: String
    public init(_ reason: AttestationFailureReason, _ message: String) {
        self.reason = reason
        self.message = message
    }
}
