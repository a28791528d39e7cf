/// The lockdown an app's ``AssessmentSession``s go through: the seam between
/// an app's exam logic and the compositor.
///
/// Write exam logic against `any AssessmentManaging` and give it a
/// ``WaylandAssessmentManager`` in the app and an ``InMemoryAssessmentManager``
/// in tests, so the logic is tested without locking the machine:
///
/// ```swift
/// final class Exam: AssessmentSessionDelegate {
///     let lockdown: any AssessmentManaging
///     var session: AssessmentSession?
///     init(lockdown: any AssessmentManaging) { self.lockdown = lockdown }
///     func start() {
///         let session = AssessmentSession(configuration: .init(), manager: lockdown)
///         session.delegate = self
///         session.begin()
///         self.session = session
///     }
///     func assessmentSessionDidBegin(_ session: AssessmentSession) { showQuestions() }
/// }
/// ```
///
/// Apps call ``AssessmentSession``'s methods, which check the session's state
/// and then call the request methods here; the manager answers by reporting
/// events to the session. AssessmentKit ships both implementations.
///
/// Not thread-safe: use a manager and its sessions on the thread that
/// dispatches its Wayland display (for the in-memory one, the test's thread).
public protocol AssessmentManaging: AnyObject {
    /// The features the lockdown understands, and who keeps each off while it
    /// is denied. A denied feature the lockdown does not list makes begin fail
    /// with `unsupportedConfiguration`.
    var features: [AssessmentFeature: AssessmentEnforcement] { get }
    /// Whether some session (of any app) is pending or active, as last reported.
    var lockState: AssessmentLockState { get }
    /// The carrel-assessment-v1 version the lockdown speaks with the app,
    /// or nil when there is no compositor to speak to.
    var protocolVersion: UInt32? { get }

    /// Asks the lockdown to begin `session` with its configuration; the
    /// answer, exactly one of began and failed, is reported later.
    func begin(_ session: AssessmentSession)
    /// Asks the lockdown to end an active `session`; ended is reported later.
    func end(_ session: AssessmentSession)
    /// Asks the lockdown to replace the configuration of an active `session`;
    /// updated or update failed is reported later, in request order.
    func update(_ session: AssessmentSession, to configuration: AssessmentConfiguration)
    /// Forgets the session: a pending or active one ends at once, without any
    /// further event. Called when the session is released, or cancelled
    /// before it began; unknown ids are ignored.
    func release(_ session: AssessmentSession.ID)
    /// Asks for a signed statement about an active `session` carrying the
    /// exam server's `nonce`; attestation or attestation failed is reported
    /// later, in request order. The default answers unavailable at once.
    func requestAttestation(_ session: AssessmentSession, nonce: [UInt8])
}

extension AssessmentManaging {
    /// A lockdown that cannot sign (no compositor, or tests): unavailable.
    public func requestAttestation(_ session: AssessmentSession, nonce: [UInt8]) {
        session.receive(.attestationFailed(AttestationError(
            .unavailable, message: "this lockdown (\(type(of: self))) cannot sign statements; run the app inside Carrel")))
    }

    /// Whether some session (of any app) is pending or active, as last reported.
    public var isLocked: Bool { lockState == .active }

    /// Whether sessions through this lockdown may name participants: its
    /// protocol version is 2 or later (Apple's `supportsMultipleParticipants`).
    public var supportsMultipleParticipants: Bool {
        protocolVersion.map(AssessmentProtocol.supportsMultipleParticipants(version:)) ?? false
    }

    /// Whether an active session through this lockdown can be updated
    /// (Apple's `supportsConfigurationUpdates`).
    public var supportsConfigurationUpdates: Bool {
        protocolVersion.map(AssessmentProtocol.supportsConfigurationUpdates(version:)) ?? false
    }

    /// A new, not yet begun session whose requests go to this lockdown.
    public func makeSession(configuration: AssessmentConfiguration = AssessmentConfiguration()) -> AssessmentSession {
        AssessmentSession(configuration: configuration, manager: self)
    }
}
