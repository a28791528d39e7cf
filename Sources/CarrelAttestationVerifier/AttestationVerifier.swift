import CarrelAudit
import Foundation

/// An envelope as JSON (what the demo exam posts, and what `carrelctl attest
/// verify` reads). Here, apart from `AttestationEnvelope` itself, because it
/// needs Foundation's `JSONSerialization`: the compositor signs envelopes but
/// never reads or writes their JSON, and does not link Foundation.
extension AttestationEnvelope {
    /// The envelope's JSON text.
    public var json: String {
        let object: [String: String] = ["statement": String(decoding: statement, as: UTF8.self),
                                        "signature": Data(signature).base64EncodedString()]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads an envelope, or a submission holding one under `attestation`.
    public static func parse(_ data: Data) throws(AttestationRejection) -> AttestationEnvelope {
        guard var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw AttestationRejection(.malformed, "not a JSON object; expected {\"statement\": ..., \"signature\": ...}")
        }
        if let inner = object["attestation"] as? [String: Any] { object = inner }
        guard let statement = object["statement"] as? String else {
            throw AttestationRejection(.malformed, "no \"statement\" string: the submission carries no attestation")
        }
        guard let text = object["signature"] as? String, let signature = Data(base64Encoded: text) else {
            throw AttestationRejection(.malformed, "no \"signature\" in base64")
        }
        return AttestationEnvelope(statement: Array(statement.utf8), signature: Array(signature))
    }
}

/// Why a statement is refused, by kind (the exit status of `carrelctl attest verify`).
public struct AttestationRejection: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Not an envelope, not JSON, too large, or a field missing.
        case malformed
        /// Signed by another key than the one given.
        case wrongKey = "wrong_key"
        /// The signature does not match the bytes: changed or cut short.
        case badSignature = "bad_signature"
        /// Genuine, but not what the server asked for (nonce, waivers, configuration, interruption).
        case expectationUnmet = "expectation_unmet"
    }

    public var kind: Kind
    public var message: String
    public init(_ kind: Kind, _ message: String) { self.kind = kind; self.message = message }
    public var description: String { "\(kind.rawValue): \(message)" }
}

/// What a verifier requires of a genuine statement beyond its signature.
public struct AttestationExpectations: Sendable, Equatable {
    /// The nonce the server issued, lower-case hex.
    public var nonce: String?
    public var requireNoWaivers: Bool
    /// The configuration digest the exam must run under.
    public var configurationDigest: String?
    public var requireNotInterrupted: Bool

    public init(nonce: String? = nil, requireNoWaivers: Bool = false, configurationDigest: String? = nil, requireNotInterrupted: Bool = false) {
        self.nonce = nonce
        self.requireNoWaivers = requireNoWaivers
        self.configurationDigest = configurationDigest
        self.requireNotInterrupted = requireNotInterrupted
    }
}

/// Checks a statement: size, signature by the given key, then the
/// expectations (the signature covers the exact bytes, so a re-encoded
/// statement fails it; the Python verifier also checks the canonical form). The first failure is the answer.
public enum AttestationVerifier {
    /// Statements Carrel makes are at most this long (AttestationStatement.maximumByteCount).
    public static let maximumStatementByteCount = 3072

    /// The statement's fields when it is accepted.
    public static func verify(_ envelope: AttestationEnvelope, key: AttestationPublicKey,
                              expecting expectations: AttestationExpectations) throws(AttestationRejection) -> [String: Any] {
        guard envelope.statement.count <= maximumStatementByteCount else {
            throw AttestationRejection(.malformed, "the statement has \(envelope.statement.count) bytes; Carrel's are at most \(maximumStatementByteCount)")
        }
        guard envelope.signature.count == 64 else {
            throw AttestationRejection(.malformed, "the signature has \(envelope.signature.count) bytes; an Ed25519 signature has 64")
        }
        let fields = (try? JSONSerialization.jsonObject(with: Data(envelope.statement))) as? [String: Any]
        if let named = fields?["key_fingerprint"] as? String, named != key.fingerprint {
            throw AttestationRejection(.wrongKey, "the statement names key \(named), not the given key \(key.fingerprint): it comes from another machine (or the wrong key was enrolled)")
        }
        guard key.isValidSignature(envelope.signature, for: envelope.statement) else {
            throw AttestationRejection(.badSignature, "the signature does not match the statement's bytes under key \(key.fingerprint): the statement was changed or cut short, or another key signed it")
        }
        guard let fields, fields["format"] as? String == "carrel-attestation-1" else {
            throw AttestationRejection(.malformed, "signed, but not a carrel-attestation-1 statement")
        }
        if let nonce = expectations.nonce, (fields["nonce"] as? String) != nonce.lowercased() {
            throw AttestationRejection(.expectationUnmet, "the statement carries nonce \(fields["nonce"] as? String ?? "none"), not the one issued (\(nonce.lowercased())): a replay, or the answer to another request")
        }
        let preconditions = fields["preconditions"] as? [String: Any]
        let waived = preconditions?["waived"] as? [String] ?? []
        if expectations.requireNoWaivers && !waived.isEmpty {
            throw AttestationRejection(.expectationUnmet, "the session ran with preconditions waived (\(waived.joined(separator: ", "))): a test machine, not an exam machine")
        }
        if let digest = expectations.configurationDigest, (fields["configuration_digest"] as? String) != digest.lowercased() {
            throw AttestationRejection(.expectationUnmet, "the session's configuration digest is \(fields["configuration_digest"] as? String ?? "none"), not the required \(digest.lowercased())")
        }
        let session = fields["session"] as? [String: Any]
        if expectations.requireNotInterrupted, (session?["interrupted"] as? Bool) != false {
            let reasons = (session?["interruptions"] as? [String] ?? []).joined(separator: ", ")
            throw AttestationRejection(.expectationUnmet, "the session was interrupted (\(reasons.isEmpty ? "reason not given" : reasons)): its answers were not written under whole restrictions")
        }
        return fields
    }
}
