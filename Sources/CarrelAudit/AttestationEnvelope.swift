/// What a submission carries: the statement exactly as signed, and the
/// signature. As JSON: `{"statement": "<canonical JSON>", "signature":
/// "<base64>"}`, alone or as the `attestation` member of a larger object
/// (read and written by `CarrelAttestationVerifier`).
public struct AttestationEnvelope: Sendable, Equatable {
    public var statement: [UInt8]
    public var signature: [UInt8]

    public init(statement: [UInt8], signature: [UInt8]) {
        self.statement = statement
        self.signature = signature
    }
}
