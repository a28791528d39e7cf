/// One assessment session: the exam app asks the compositor to show only its
/// windows and hold the restrictions, with AEAssessmentSession's semantics.
///
/// ```swift
/// let lockdown = try WaylandAssessmentManager(display: display, surface: examSurface)
/// let session = AssessmentSession(configuration: AssessmentConfiguration(), manager: lockdown)
/// session.delegate = self      // or: for await event in session.events { ... }
/// session.begin()              // show "locking…" until the delegate hears back
/// ```
///
/// Lifecycle: `begin()` is answered by exactly one of *did begin* and
/// *failed to begin*. *Was interrupted* is not the end: restrictions hold
/// until the app calls `end()`, answered by *did end*. Releasing the last
/// reference to a pending or active session ends it at once (without
/// callbacks), as does the app's connection closing.
///
/// The session guards the protocol's rules so that app mistakes never become
/// protocol errors (which would close the app's connection):
/// - `begin()` on a session that was already begun does nothing; make a new session.
/// - `end()` before the session began withdraws it: the session is released
///   to the compositor and *failed to begin* (`cancelled`) is called at once.
///   `end()` when already ending, ended, failed or never begun does nothing.
/// - `update(to:)` on a session that is not active calls *failed to update*
///   (`notActive`) at once; one with a time limit under a second,
///   `unsupportedConfiguration`.
/// - A configuration naming participants, begun or updated through a
///   compositor of protocol version 1, fails at once with
///   `multipleParticipantsNotSupported` (version 1 could not say why a
///   participant did not start).
///
/// Callbacks and stream events come on the thread that dispatches the
/// display, from within `wl_display_dispatch`; local refusals come from
/// within the call that caused them. Not thread-safe.
public final class AssessmentSession: Identifiable {
    /// Identifies a session to its manager, including while it is released.
    public struct ID: Hashable {
        fileprivate let object: ObjectIdentifier
    }

    public enum State: Hashable, Sendable {
        /// Made, not begun.
        case idle
        /// Begun; waiting for began or failed.
        case beginning
        /// Every restriction holds.
        case active
        /// Active, but a restriction stopped holding (or time ran out): hide content and end.
        case interrupted
        /// `end()` was sent; waiting for ended. Restrictions still hold.
        case ending
        /// Terminal: everything is restored.
        case ended
        /// Terminal: the session never began (or was withdrawn before it did).
        case failed
    }

    public let manager: any AssessmentManaging
    /// The configuration in force: the one given at creation, then the last one updated to.
    public private(set) var configuration: AssessmentConfiguration
    public private(set) var state: State = .idle
    public weak var delegate: AssessmentSessionDelegate?
    /// Every lifecycle event, in order, for `for await`. Finishes after the
    /// terminal event or when the session is released. One consumer only.
    ///
    /// Events are yielded from within dispatch, like the delegate calls, but
    /// the consumer runs when its task is scheduled: if the thread that
    /// dispatches is the one the consuming task needs (e.g. the main actor
    /// blocked in `wl_display_dispatch`), use the delegate instead, or
    /// dispatch from a loop that lets tasks run. Hiding content on
    /// interruption should happen in the delegate, which cannot be late.
    public let events: AsyncStream<AssessmentEvent>
    private let continuation: AsyncStream<AssessmentEvent>.Continuation
    /// Configurations sent with update and not yet answered, oldest first.
    private var pendingUpdates: [AssessmentConfiguration] = []

    public init(configuration: AssessmentConfiguration = AssessmentConfiguration(),
                manager: any AssessmentManaging) {
        self.configuration = configuration
        self.manager = manager
        (events, continuation) = AsyncStream.makeStream(of: AssessmentEvent.self)
    }

    /// A session through ``defaultManager``, as Apple's
    /// `AEAssessmentSession(configuration:)`. Never throws: without a
    /// compositor, `begin()` calls *failed to begin* with `notAvailable`
    /// (Apple's `unsupportedPlatform`).
    public convenience init(configuration: AssessmentConfiguration) {
        self.init(configuration: configuration, manager: Self.defaultManager ?? UnavailableAssessmentManager(error: AssessmentError(
            .notAvailable,
            message: "no compositor connection for AssessmentSession(configuration:): call "
                + "WaylandAssessmentManager.connectDefault(display:surface:) once the exam window is mapped, "
                + "or pass a manager to AssessmentSession(configuration:manager:)")))
    }

    /// The lockdown ``init(configuration:)`` uses: the live compositor's
    /// once `WaylandAssessmentManager.connectDefault(display:surface:)` ran
    /// (or the reason it could not connect), nil before.
    nonisolated(unsafe) public static var defaultManager: (any AssessmentManaging)?

    /// Whether the live compositor can take sessions naming participants
    /// (Apple's class property): asked of ``defaultManager``'s protocol
    /// version, or, before there is one, of the version the compositor named
    /// by `WAYLAND_DISPLAY` offers on a connection of its own. False without a compositor.
    public static var supportsMultipleParticipants: Bool {
        liveProtocolVersion.map(AssessmentProtocol.supportsMultipleParticipants(version:)) ?? false
    }

    /// Whether the live compositor can update an active session's
    /// configuration (Apple's class property), asked as
    /// ``supportsMultipleParticipants`` is. False without a compositor.
    public static var supportsConfigurationUpdates: Bool {
        liveProtocolVersion.map(AssessmentProtocol.supportsConfigurationUpdates(version:)) ?? false
    }

    private static var liveProtocolVersion: UInt32? {
        if let manager = defaultManager { return manager.protocolVersion }
        return WaylandAssessmentManager.offeredVersion(displayName: nil)
    }

    deinit {
        continuation.finish()
        // Releasing a pending or active session ends it (the protocol's destroy).
        manager.release(id)
    }

    public var id: ID { ID(object: ObjectIdentifier(self)) }

    /// Whether the session's restrictions hold: from began until ended,
    /// including while interrupted and ending.
    public var isActive: Bool {
        switch state {
        case .active, .interrupted, .ending: return true
        case .idle, .beginning, .ended, .failed: return false
        }
    }

    /// Whether the session was interrupted and has not ended yet.
    public var isInterrupted: Bool {
        state == .interrupted || (state == .ending && wasInterrupted)
    }
    private var wasInterrupted = false

    // MARK: Requests

    /// Asks the compositor to begin the session. Answered by exactly one of
    /// did begin and failed to begin. Only the first call has an effect.
    public func begin() {
        guard state == .idle else { return }
        do {
            try configuration.validate()
        } catch {
            state = .failed
            deliver(.failed(error as! AssessmentError))
            return
        }
        if let refusal = versionRefusal(configuration, instead: "begin without participants or use a newer Carrel") {
            state = .failed
            deliver(.failed(refusal))
            return
        }
        state = .beginning
        manager.begin(self)
    }

    /// Ends the session; did end follows once everything is restored.
    /// Before began, withdraws the session instead (see the type's notes).
    public func end() {
        switch state {
        case .active, .interrupted:
            state = .ending
            manager.end(self)
        case .beginning:
            // The protocol forbids end before began; destroying the session
            // object ends a pending session at once, without an event.
            manager.release(id)
            state = .failed
            deliver(.failed(AssessmentError(
                .cancelled, message: "end() was called before the session began, so the session was withdrawn")))
        case .idle, .ending, .ended, .failed:
            break
        }
    }

    /// Asks the compositor to replace the configuration of the active
    /// session. Answered by did update (the new configuration holds in full)
    /// or failed to update (nothing changed), in the order of the calls,
    /// unless the session ends first.
    public func update(to newConfiguration: AssessmentConfiguration) {
        guard state == .active || state == .interrupted else {
            deliver(.updateFailed(newConfiguration, AssessmentError(
                .notActive, message: "update(to:) needs an active session, but the session is \(state); "
                    + "update after did begin and before end()")))
            return
        }
        do {
            try newConfiguration.validate()
        } catch {
            deliver(.updateFailed(newConfiguration, error as! AssessmentError))
            return
        }
        if !manager.supportsConfigurationUpdates {
            deliver(.updateFailed(newConfiguration, AssessmentError(
                .configurationUpdatesNotSupported,
                message: "this lockdown cannot update a session (protocol version \(manager.protocolVersion.map(String.init) ?? "none")); "
                    + "end the session and begin one with the new configuration")))
            return
        }
        if let refusal = versionRefusal(newConfiguration, instead: "update without participants") {
            deliver(.updateFailed(newConfiguration, refusal))
            return
        }
        // An interrupted session is still sent the update: the compositor
        // refuses it (interrupted) in order with any earlier updates.
        pendingUpdates.append(newConfiguration)
        manager.update(self, to: newConfiguration)
    }

    /// What the lockdown's protocol version cannot carry, checked before a
    /// begin or update is sent: participants before version 2 (it could not
    /// say why one failed to start; `instead` says what to do), and network
    /// taken away before version 3, which has no request for it — fail
    /// rather than begin with more network than the app asked for.
    private func versionRefusal(_ configuration: AssessmentConfiguration, instead: String) -> AssessmentError? {
        guard let version = manager.protocolVersion else { return nil }
        if !configuration.participants.isEmpty, !AssessmentProtocol.supportsMultipleParticipants(version: version) {
            return AssessmentError(
                .multipleParticipantsNotSupported,
                message: "the configuration names participants (\(configuration.distinctParticipants.joined(separator: ", "))), "
                    + "but the compositor speaks protocol version \(version), which cannot start them; \(instead)")
        }
        guard configuration.deniesNetwork, !AssessmentProtocol.supportsNetworkDenial(version: version) else { return nil }
        return AssessmentError(
            .unsupportedConfiguration,
            message: "the configuration sets allowsNetworkAccess = false, but the compositor speaks protocol version \(version), "
                + "which leaves the network to its policy and cannot take it away; allow network access or use a newer Carrel")
    }

    /// Asks the compositor for a statement about this session, signed with
    /// the machine's attestation key, carrying `nonce` (the exam server's,
    /// 16 to 256 bytes). `completion` is called once, from within dispatch,
    /// in the order of the calls: with the statement, or with why there is
    /// none (the session is not affected either way). Called at once with
    /// `notActive` when the session has not begun or is over. Ask just
    /// before `end()`, once the answers are final: that statement is the
    /// closing one, with the blocked attempts of the whole session.
    public func requestAttestation(nonce: [UInt8], completion: @escaping (Result<SessionAttestation, AttestationError>) -> Void) {
        guard state == .active || state == .interrupted else {
            completion(.failure(AttestationError(
                .notActive, message: "requestAttestation(nonce:) needs an active session, but the session is \(state)")))
            return
        }
        pendingAttestations.append(completion)
        manager.requestAttestation(self, nonce: nonce)
    }

    /// Ends the session with a closing statement: the request and `end` go
    /// out back to back, so the compositor signs the statement as it ends the
    /// session (every blocked attempt counted, the chain head before `ended`).
    /// `completion` is called before did end. Before began this withdraws
    /// the session like `end()`, and `completion` hears `notActive`.
    public func end(attestingWith nonce: [UInt8], completion: @escaping (Result<SessionAttestation, AttestationError>) -> Void) {
        requestAttestation(nonce: nonce, completion: completion)
        end()
    }

    /// `requestAttestation(nonce:completion:)` for `await`: the statement, or
    /// throws ``AttestationError``. The answer arrives from within dispatch,
    /// so the thread that dispatches the display must keep dispatching.
    public func attestation(nonce: [UInt8]) async throws -> SessionAttestation {
        try await withCheckedThrowingContinuation { continuation in
            requestAttestation(nonce: nonce) { continuation.resume(with: $0) }
        }
    }

    /// Completions of requestAttestation not yet answered, oldest first.
    private var pendingAttestations: [(Result<SessionAttestation, AttestationError>) -> Void] = []

    private func answerAttestation(_ result: Result<SessionAttestation, AttestationError>) {
        guard !pendingAttestations.isEmpty else { return }
        pendingAttestations.removeFirst()(result)
    }

    /// The session is over: requests still waiting will not be answered.
    private func failPendingAttestations() {
        let waiting = pendingAttestations
        pendingAttestations.removeAll()
        for completion in waiting {
            completion(.failure(AttestationError(.notActive, message: "the session ended before the statement arrived")))
        }
    }

    // MARK: Reports from the manager

    /// What a manager tells a session; the session decides what the app hears.
    enum Report {
        case began
        case failed(AssessmentError)
        case interrupted(AssessmentError)
        case ended
        case updated
        case updateFailed(AssessmentError)
        /// The connection to the compositor is gone, and with it the session.
        case connectionLost(String)
        case attestation(SessionAttestation)
        case attestationFailed(AttestationError)
    }

    /// Applies a report from the manager. Reports that do not fit the state
    /// (which a correct compositor never sends) are dropped.
    func receive(_ report: Report) {
        defer { if state == .ended || state == .failed { failPendingAttestations() } }
        switch (report, state) {
        case (.attestation(let attestation), _):
            answerAttestation(.success(attestation))
        case (.attestationFailed(let error), _):
            answerAttestation(.failure(error))
        case (.began, .beginning):
            state = .active
            deliver(.began)
        case (.failed(let error), .beginning):
            state = .failed
            deliver(.failed(error))
        case (.interrupted(let error), .active), (.interrupted(let error), .interrupted):
            state = .interrupted
            wasInterrupted = true
            deliver(.interrupted(error))
        case (.interrupted(let error), .ending):
            // Sent before the compositor saw end; the app still hears it.
            wasInterrupted = true
            deliver(.interrupted(error))
        case (.ended, .ending):
            // Outstanding updates are never answered after end.
            pendingUpdates.removeAll()
            state = .ended
            deliver(.ended)
        case (.ended, .active), (.ended, .interrupted):
            // Unasked: an administrator ended the session by force (after
            // interrupted(administrative)); everything is restored already.
            pendingUpdates.removeAll()
            state = .ended
            deliver(.ended)
        case (.updated, .active), (.updated, .interrupted), (.updated, .ending):
            guard !pendingUpdates.isEmpty else { return }
            configuration = pendingUpdates.removeFirst()
            deliver(.updated(configuration))
        case (.updateFailed(let error), .active), (.updateFailed(let error), .interrupted),
             (.updateFailed(let error), .ending):
            guard !pendingUpdates.isEmpty else { return }
            deliver(.updateFailed(pendingUpdates.removeFirst(), error))
        case (.connectionLost(let message), .beginning):
            state = .failed
            deliver(.failed(AssessmentError(.connection, message: message)))
        case (.connectionLost(let message), .active), (.connectionLost(let message), .interrupted),
             (.connectionLost(let message), .ending):
            // The compositor ended the session when the connection closed.
            // The app first hears that the session is no longer whole, so it
            // hides its content, then that it is over.
            pendingUpdates.removeAll()
            if state != .ending {
                wasInterrupted = true
                state = .interrupted
                deliver(.interrupted(AssessmentError(.connection, message: message)))
            }
            state = .ended
            deliver(.ended)
        default:
            break
        }
    }

    private func deliver(_ event: AssessmentEvent) {
        // The stream first: a delegate that reacts with a call that is refused
        // at once must not put that refusal ahead of this event.
        continuation.yield(event)
        if event.isTerminal { continuation.finish() }
        if let delegate {
            switch event {
            case .began: delegate.assessmentSessionDidBegin(self)
            case .failed(let error): delegate.assessmentSession(self, failedToBeginWithError: error)
            case .interrupted(let error): delegate.assessmentSession(self, wasInterruptedWithError: error)
            case .ended: delegate.assessmentSessionDidEnd(self)
            case .updated: delegate.assessmentSessionDidUpdate(self)
            case .updateFailed(let configuration, let error):
                delegate.assessmentSession(self, failedToUpdateTo: configuration, error: error)
            }
        }
    }
}
