/// A lockdown that only pretends: tests script its answers and inspect what
/// it was asked, so exam logic is tested without a compositor.
///
/// Like the real one it answers later, never from within the request: events
/// wait in a queue until the test calls ``dispatch()`` (the counterpart of
/// `wl_display_dispatch`). It keeps the compositor's rules: at most one
/// session pending or active (a second begin fails with `alreadyActive`),
/// a configuration the policy it models cannot honour (a participant not in
/// ``knownParticipants``, a time limit above ``maximumTimeLimit``, a denied
/// feature not in ``features``) fails begin and update with
/// `unsupportedConfiguration` (CarrelWire's `ConfigurationRule`, the
/// compositor's own rule table, word for word), updates of an interrupted
/// session fail with `interrupted`, releasing a pending or active session
/// unlocks at once and drops its queued events.
///
/// ```swift
/// let lockdown = InMemoryAssessmentManager()
/// lockdown.nextBeginResult = .failed(.notEntitled)
/// exam.start()                 // calls session.begin()
/// lockdown.dispatch()          // delivers failed(not_entitled)
/// #expect(exam.screen == .error)
/// ```
public final class InMemoryAssessmentManager: AssessmentManaging {
    /// How the lockdown answers the next begin.
    public enum BeginResult: Hashable, Sendable {
        case began
        case failed(AssessmentError.Code, message: String = "scripted failure")
        /// No answer yet: the session stays pending (holding the lock) until
        /// ``answerBegin(_:)``.
        case pending
    }

    /// How the lockdown answers the next update (of a session not interrupted).
    public enum UpdateResult: Hashable, Sendable {
        case updated
        case failed(AssessmentError.Code, message: String = "scripted failure")
    }

    /// A request the lockdown received, in order.
    public enum Request: Hashable, Sendable {
        case begin(AssessmentConfiguration)
        case end
        case update(AssessmentConfiguration)
        /// A begun session was released (destroyed): by its last reference
        /// going away, or by `end()` before it began.
        case release
    }

    public var features: [AssessmentFeature: AssessmentEnforcement]
    /// The participant ids of the policy it models; nil (the default) takes
    /// every id a configuration names as defined.
    public var knownParticipants: Set<String>?
    /// The longest time limit, in seconds, of the policy it models (eight hours by default).
    public var maximumTimeLimit: UInt32 = ConfigurationRule.fallbackMaximumTimeLimit
    /// The protocol version it answers as (this build's, by default); set 1
    /// to see how an app meets an older compositor.
    public var protocolVersion: UInt32? = AssessmentProtocol.version
    /// Used by the next begin, then back to `.began`.
    public var nextBeginResult: BeginResult = .began
    /// Used by the next update, then back to `.updated`.
    public var nextUpdateResult: UpdateResult = .updated
    /// Every request, oldest first.
    public private(set) var requests: [Request] = []
    /// The configuration in force for the session holding the lock (pending
    /// or active), or nil when nothing is locked.
    public private(set) var lockedConfiguration: AssessmentConfiguration?

    /// The session holding the lock, whether its begin was answered yet, and
    /// why it was interrupted (nil while it was not).
    private var holder: (id: AssessmentSession.ID, began: Bool, interruption: InterruptionReason?)?
    private var sessions: [AssessmentSession.ID: WeakSession] = [:]
    private var queue: [(id: AssessmentSession.ID, report: AssessmentSession.Report)] = []

    /// Every feature, enforced as Carrel announces it, unless told otherwise.
    public init(features: [AssessmentFeature: AssessmentEnforcement] = FeatureRule.standardAnnouncements) {
        self.features = features
    }

    public var lockState: AssessmentLockState { holder == nil ? .inactive : .active }
    /// Whether a session of this lockdown has begun and not ended or been released.
    public var isSessionActive: Bool { holder?.began ?? false }
    /// Events waiting for ``dispatch()``.
    public var pendingEventCount: Int { queue.count }

    // MARK: AssessmentManaging

    public func begin(_ session: AssessmentSession) {
        requests.append(.begin(session.configuration))
        sessions[session.id] = WeakSession(session)
        let result = nextBeginResult
        nextBeginResult = .began
        if holder != nil {
            queue.append((session.id, .failed(AssessmentError(.alreadyActive, message: SessionAnswer.alreadyActive))))
            return
        }
        if let problem = refusal(of: session.configuration) {
            queue.append((session.id, .failed(AssessmentError(.unsupportedConfiguration, message: problem))))
            return
        }
        switch result {
        case .began:
            holder = (session.id, true, nil)
            lockedConfiguration = session.configuration
            queue.append((session.id, .began))
        case .pending:
            holder = (session.id, false, nil)
            lockedConfiguration = session.configuration
        case .failed(let code, let message):
            queue.append((session.id, .failed(AssessmentError(code, message: message))))
        }
    }

    public func end(_ session: AssessmentSession) {
        requests.append(.end)
        guard let holder, holder.id == session.id, holder.began else { return }
        unlock()
        queue.append((session.id, .ended))
    }

    public func update(_ session: AssessmentSession, to configuration: AssessmentConfiguration) {
        requests.append(.update(configuration))
        let result = nextUpdateResult
        nextUpdateResult = .updated
        guard let holder, holder.id == session.id, holder.began else { return }
        if let reason = holder.interruption {
            queue.append((session.id, .updateFailed(AssessmentError(
                .interrupted, message: SessionAnswer.updateOfInterruptedSession(reason)))))
            return
        }
        if let problem = refusal(of: configuration) {
            queue.append((session.id, .updateFailed(AssessmentError(.unsupportedConfiguration, message: problem))))
            return
        }
        switch result {
        case .updated:
            lockedConfiguration = configuration
            queue.append((session.id, .updated))
        case .failed(let code, let message):
            queue.append((session.id, .updateFailed(AssessmentError(code, message: message))))
        }
    }

    /// This lockdown cannot sign: each request is answered unavailable, from
    /// the queue like every other answer, in request order.
    public func requestAttestation(_ session: AssessmentSession, nonce: [UInt8]) {
        queue.append((session.id, .attestationFailed(AttestationError(
            .unavailable, message: "this lockdown (InMemoryAssessmentManager) cannot sign statements; run the app inside Carrel"))))
    }

    public func release(_ id: AssessmentSession.ID) {
        guard sessions.removeValue(forKey: id) != nil else { return }
        requests.append(.release)
        queue.removeAll { $0.id == id }
        if holder?.id == id { unlock() }
    }

    // MARK: Scripting

    /// Answers the pending begin (after `nextBeginResult = .pending`).
    /// Returns false when no session is pending.
    @discardableResult
    public func answerBegin(_ result: BeginResult) -> Bool {
        guard let pending = holder, !pending.began else { return false }
        switch result {
        case .began:
            holder?.began = true
            queue.append((pending.id, .began))
        case .failed(let code, let message):
            unlock()
            queue.append((pending.id, .failed(AssessmentError(code, message: message))))
        case .pending:
            break
        }
        return true
    }

    /// Interrupts the active session, as a restriction that stopped holding
    /// would (use an interruption code: `.integrity`, `.timeLimit`, ...).
    /// The session stays locked until it is ended. Returns false when no
    /// session is active.
    @discardableResult
    public func interrupt(_ code: AssessmentError.Code, message: String = "scripted interruption") -> Bool {
        guard let active = holder, active.began else { return false }
        // The latest reason counts, as in the compositor; a code that is no
        // interruption reason (a scripting slip) counts as `other`.
        holder?.interruption = code.interruptionReason ?? .other
        queue.append((active.id, .interrupted(AssessmentError(code, message: message))))
        return true
    }

    /// Ends the active session as an administrator's `carrelctl end --force`
    /// does: `interrupted(administrative)` with `message`, then `ended`
    /// without the app asking, and the lock is released. Returns false when
    /// no session is active.
    @discardableResult
    public func forceEnd(message: String = "scripted force end") -> Bool {
        guard let active = holder, active.began else { return false }
        queue.append((active.id, .interrupted(AssessmentError(.administrative, message: message))))
        queue.append((active.id, .ended))
        unlock()
        return true
    }

    /// Behaves as a closed connection: every session hears that the
    /// connection is gone, and the lock is released.
    public func loseConnection(message: String = "scripted connection loss") {
        for id in sessions.keys {
            queue.append((id, .connectionLost(message)))
        }
        unlock()
    }

    /// Delivers the queued events in order, including any queued while
    /// delivering; returns how many were delivered.
    @discardableResult
    public func dispatch() -> Int {
        var delivered = 0
        while !queue.isEmpty {
            let (id, report) = queue.removeFirst()
            guard let session = sessions[id]?.session else { continue }
            session.receive(report)
            delivered += 1
        }
        return delivered
    }

    /// The compositor's rule table on what the app would send: each
    /// participant once, the time limit in whole seconds.
    private func refusal(of configuration: AssessmentConfiguration) -> String? {
        let participants = configuration.distinctParticipants
        let terms = ConfigurationRule.Terms(knownParticipants: knownParticipants ?? Set(participants),
                                            maximumTimeLimit: maximumTimeLimit, announcedFeatures: features)
        return ConfigurationRule.refusal(participants: participants, timeLimit: (try? configuration.wireTimeLimit()) ?? nil,
                                         allowedFeatures: configuration.allowedFeatures, terms: terms)
    }

    private func unlock() {
        holder = nil
        lockedConfiguration = nil
    }
}

private struct WeakSession {
    weak var session: AssessmentSession?
    init(_ session: AssessmentSession) { self.session = session }
}
