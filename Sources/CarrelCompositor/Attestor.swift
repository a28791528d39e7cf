import CarrelAudit
import CarrelCore
import CarrelShim
import Glibc
import Logging

/// Signs statements about sessions with the machine's attestation key:
/// reads the key (the policy's `[attestation] key`) and hashes Carrel's own
/// executable (opened at start, hashed off the event loop) and the policy
/// file once at start, keeps each session's tally
/// of blocked attempts and interruptions, and answers `request_attestation`
/// with what Core's `AttestationRequest` decides.
final class Attestor {
    /// The key, or why there is none (sent as `attestation_failed(unavailable)`).
    private let key: Result<AttestationKey, AttestationRefusal>
    /// Only with a key: without one no statement names it.
    private let executableDigest: ExecutableDigest?
    private var policyDigest: String?
    private let policyFile: String?
    private let version: String
    private let privilegedHelper: Bool
    private var tallies: [SessionID: SessionTally] = [:]

    init(options: CompositorOptions, logger: Logger) {
        if let path = options.policy.attestation.keyPath {
            do {
                let loaded = try AttestationKey.load(path: path)
                key = .success(loaded)
                logger.info("attestation: key \(path), fingerprint \(loaded.publicKey.fingerprint)")
            } catch {
                logger.error("attestation: \(error); exam apps asking for a signed statement hear that none is available")
                key = .failure(AttestationRefusal(.unavailable, "the attestation key could not be read when Carrel started: \(error)"))
            }
        } else {
            key = .failure(AttestationRequest.noKeyConfigured)
        }
        // Opened once, at start: what runs now is what is hashed (the file may be replaced later, the process is not).
        executableDigest = (try? key.get()).map { _ in ExecutableDigest() }
        policyFile = options.policyPath
        privilegedHelper = options.privilegedHelper != nil
        policyDigest = options.policyPath.flatMap { Digest.sha256Hex(fileAt: $0) }
        version = options.carrelVersion
    }

    /// `carrelctl reload` read the policy file again: statements name the file as reloaded.
    func policyReloaded() {
        policyDigest = policyFile.flatMap { Digest.sha256Hex(fileAt: $0) }
    }

    // MARK: - Tally

    func countBlocked(_ kind: String, session: SessionID?) {
        guard let session else { return }
        tallies[session, default: SessionTally()].countBlocked(kind)
    }

    func noteInterruption(_ reason: InterruptionReason, session: SessionID) {
        tallies[session, default: SessionTally()].noteInterruption(reason)
    }

    func forget(_ session: SessionID) {
        tallies[session] = nil
    }

    // MARK: - Statements

    /// The signed statement for `session`, or the refusal to send.
    func answer(nonce: [UInt8], session: SessionRecord?, policy: PreconditionPolicy, providers: [String],
                virtualMachine: VirtualMachineSignals,
                chain: AuditChainPosition, run: String, now: Instant) -> Result<AttestationEnvelope, AttestationRefusal> {
        let signer = key.map { key in
            var facts = AttestationFacts(keyFingerprint: key.publicKey.fingerprint, carrelVersion: version,
                                         executableDigest: executableDigest?.hex ?? "unreadable",
                                         policyFile: policyFile, policyDigest: policyDigest, preconditions: policy,
                                         virtualMachine: virtualMachine, run: run, privilegedHelper: privilegedHelper)
            facts.providers = providers
            return facts
        }
        let tally = session.flatMap { tallies[$0.id] } ?? SessionTally()
        let decided = AttestationRequest.answer(nonce: nonce, session: session, signer: signer, tally: tally, chain: chain,
                                                nowUnixMilliseconds: Self.wallClockMilliseconds(), now: now,
                                                digest: Digest.sha256Hex)
        switch (decided, key) {
        case (.success(let statement), .success(let key)):
            do {
                return .success(AttestationEnvelope(statement: statement.bytes, signature: try key.sign(statement.bytes)))
            } catch {
                return .failure(AttestationRefusal(.other, "signing failed: \(error)"))
            }
        case (.failure(let refusal), _):
            return .failure(refusal)
        case (.success, .failure(let refusal)):
            return .failure(refusal)
        }
    }

    private static func wallClockMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec / 1_000_000)
    }
}
