/// What stays the same for every statement while Carrel runs: who signs,
/// which Carrel, under which policy, on which machine. Gathered by the
/// compositor at start (the executable and policy digests once).
public struct AttestationFacts: Sendable, Equatable {
    /// SHA-256 (hex) of the public key: which enrolled key a verifier uses.
    public var keyFingerprint: String
    public var carrelVersion: String
    /// SHA-256 (hex) of the executable Carrel runs from, read at start.
    public var executableDigest: String
    /// The policy file, or nil under the built-in policy.
    public var policyFile: String?
    /// SHA-256 (hex) of the policy file's bytes as read at start; nil with it.
    public var policyDigest: String?
    public var preconditions: PreconditionPolicy
    public var virtualMachine: VirtualMachineSignals
    /// The audit log's run id: which start of Carrel the session belongs to.
    public var run: String
    /// Whether Carrel runs through the privileged helper, so the
    /// `privileged_helper` precondition was checked (it applies only then).
    public var privilegedHelper: Bool
    /// The restrictions beyond the display that hold in every session
    /// (`ProvidersPolicy.enabledNames`): a statement says `network: false`
    /// rather than let a verifier assume other processes were cut off.
    public var providers: [String] = []

    public init(keyFingerprint: String, carrelVersion: String, executableDigest: String, policyFile: String?,
                policyDigest: String?, preconditions: PreconditionPolicy, virtualMachine: VirtualMachineSignals, run: String,
                privilegedHelper: Bool = false) {
        self.privilegedHelper = privilegedHelper
        self.keyFingerprint = keyFingerprint
        self.carrelVersion = carrelVersion
        self.executableDigest = executableDigest
        self.policyFile = policyFile
        self.policyDigest = policyDigest
        self.preconditions = preconditions
        self.virtualMachine = virtualMachine
        self.run = run
    }
}

/// Where the audit log's chain stood when a statement was made.
public struct AuditChainPosition: Sendable, Hashable {
    public var head: String
    public var seq: UInt64
    public init(head: String, seq: UInt64) { self.head = head; self.seq = seq }
}

/// A statement about one session, as signed: its canonical JSON. Every field
/// is described in docs/ATTESTATION.md; `format` names the layout.
///
/// ```swift
/// let statement = try AttestationStatement.make(nonce: nonce, session: record, ...).get()
/// sign(statement.bytes)     // Ed25519 over exactly these bytes
/// ```
public struct AttestationStatement: Sendable, Hashable {
    public static let format = "carrel-attestation-1"
    /// The largest statement sent: with the 64-byte signature and the
    /// event's header it stays well inside Wayland's 4096-byte message.
    public static let maximumByteCount = 3072

    public let json: CanonicalJSON
    public let bytes: [UInt8]
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The configuration as the statement carries it and its digest covers:
    /// allowed features and participants sorted, the participants whose
    /// network it takes away (sorted, only those it names), whether it takes
    /// the owner's, the effective time limit.
    public static func configurationJSON(_ configuration: AssessmentConfiguration, timeLimitSeconds: UInt32) -> CanonicalJSON {
        let participants = Set(configuration.participants)
        return .object([
            "allowed_features": .array(configuration.allowedFeatures.sorted().map { .string($0.protocolName) }),
            "network_denied_participants": .array(configuration.networkDeniedParticipants.intersection(participants)
                .sorted().map { .string($0) }),
            "owner_network_denied": .bool(configuration.ownerNetworkDenied),
            "participants": .array(participants.sorted().map { .string($0) }),
            "time_limit_seconds": .integer(Int64(timeLimitSeconds)),
        ])
    }

    /// The statement for `session` (which must have begun), or why there is none.
    /// - Parameters:
    ///   - nowUnixMilliseconds: the wall clock, for `issued_at` and `began_at`.
    ///   - now: the monotonic clock the session's `beganAt` was read from.
    ///   - digest: SHA-256 as lower-case hex (injected: Core does no cryptography).
    public static func make(nonce: AttestationNonce, session: SessionRecord, facts: AttestationFacts, tally: SessionTally,
                            chain: AuditChainPosition, nowUnixMilliseconds: Int64, now: Instant,
                            digest: ([UInt8]) -> String) -> Result<AttestationStatement, AttestationRefusal> {
        guard session.phase.hasBegun, let beganAt = session.beganAt else {
            return .failure(AttestationRefusal(
                .notActive, "session \(session.id.raw) is \(session.phase); a statement is made only between began and end"))
        }
        let sinceBegan = now.nanoseconds >= beganAt.nanoseconds ? Int64((now.nanoseconds - beganAt.nanoseconds) / 1_000_000) : 0
        let configuration = configurationJSON(session.configuration, timeLimitSeconds: session.timeLimit)
        let waived = facts.preconditions.waived
        let checked = Precondition.allCases.filter { !waived.contains($0) && ($0 != .privilegedHelper || facts.privilegedHelper) }
        let interrupted: Bool
        if case .interrupted = session.phase { interrupted = true } else { interrupted = !tally.interruptions.isEmpty }
        let json = CanonicalJSON.object([
            "format": .string(format),
            "key_fingerprint": .string(facts.keyFingerprint),
            "nonce": .string(nonce.hex),
            "issued_at_unix_ms": .integer(nowUnixMilliseconds),
            "session": .object([
                "id": .integer(Int64(clamping: session.id.raw)),
                "run": .string(facts.run),
                "began_at_unix_ms": .integer(nowUnixMilliseconds - sinceBegan),
                "phase": .string(interrupted ? "interrupted" : "active"),
                "interrupted": .bool(interrupted),
                "interruptions": .array(tally.interruptions.map { .string($0.protocolName) }),
            ]),
            "configuration": configuration,
            "configuration_digest": .string(digest(configuration.bytes)),
            "policy": .object([
                "file": facts.policyFile.map { .string($0) } ?? .null,
                "digest": facts.policyDigest.map { .string($0) } ?? .null,
            ]),
            "preconditions": .object([
                "checked": .array(checked.map { .string($0.rawValue) }),
                "waived": .array(waived.sorted().map { .string($0.rawValue) }),
                "virtual_machine": .object([
                    "detected": .bool(!facts.virtualMachine.signals.isEmpty),
                    "signals": .array(facts.virtualMachine.signals.map { .string($0) }),
                    "refused": .bool(facts.preconditions.refuseVirtualMachine),
                ]),
            ]),
            "carrel": .object([
                "version": .string(facts.carrelVersion),
                "executable_digest": .string(facts.executableDigest),
            ]),
            "restrictions": .object(Dictionary(uniqueKeysWithValues: ProvidersPolicy.knownNames.map {
                ($0, CanonicalJSON.bool(facts.providers.contains($0)))
            })),
            "blocked_attempts": .object(tally.blockedByKind.mapValues { .integer(Int64(clamping: $0)) }),
            "audit": .object([
                "chain_head": .string(chain.head),
                "seq": .integer(Int64(clamping: chain.seq)),
            ]),
        ])
        let bytes = json.bytes
        guard bytes.count <= maximumByteCount else {
            return .failure(AttestationRefusal(
                .tooLarge, "the statement would be \(bytes.count) bytes, more than the \(maximumByteCount) one event carries; "
                    + "name fewer participants in the configuration"))
        }
        return .success(AttestationStatement(json: json, bytes: bytes))
    }
}
