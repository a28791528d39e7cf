/// Answers one `request_attestation`: the statement to sign, or the reason
/// and message of `attestation_failed`. The nonce is checked first (it is
/// the client's to get right whatever the machine), then whether this
/// machine can sign at all, then the session's phase.
public enum AttestationRequest {
    /// - Parameters:
    ///   - signer: what every statement states, or why Carrel cannot sign (no key configured or readable).
    ///   - session: the session asked about, nil if Carrel no longer knows it.
    public static func answer(nonce bytes: [UInt8], session: SessionRecord?, signer: Result<AttestationFacts, AttestationRefusal>,
                              tally: SessionTally, chain: AuditChainPosition, nowUnixMilliseconds: Int64, now: Instant,
                              digest: ([UInt8]) -> String) -> Result<AttestationStatement, AttestationRefusal> {
        let nonce: AttestationNonce
        switch AttestationNonce.validate(bytes) {
        case .success(let valid): nonce = valid
        case .failure(let refusal): return .failure(refusal)
        }
        let facts: AttestationFacts
        switch signer {
        case .success(let known): facts = known
        case .failure(let refusal): return .failure(refusal)
        }
        guard let session else {
            return .failure(AttestationRefusal(.notActive, "the session is over; a statement is made only between began and end"))
        }
        return AttestationStatement.make(nonce: nonce, session: session, facts: facts, tally: tally, chain: chain,
                                         nowUnixMilliseconds: nowUnixMilliseconds, now: now, digest: digest)
    }

    /// The refusal when the policy names no key.
    public static let noKeyConfigured = AttestationRefusal(
        .unavailable, "this machine has no attestation key: the policy has no [attestation] key; "
            + "an administrator creates one with `carrel keygen`, enrols its public half with the exam server "
            + "and sets [attestation] key = PATH (docs/ATTESTATION.md)")
}
