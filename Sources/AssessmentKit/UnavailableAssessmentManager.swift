/// The lockdown to use when there is none, e.g. when
/// ``WaylandAssessmentManager``'s constructor threw `notAvailable`: every
/// begin fails with that error, so the app's usual failure path (an error
/// screen) handles it.
///
/// ```swift
/// let lockdown: any AssessmentManaging
/// do { lockdown = try WaylandAssessmentManager(display: display, surface: surface) }
/// catch let error as AssessmentError { lockdown = UnavailableAssessmentManager(error: error) }
/// ```
///
/// Unlike the others it answers at once: failed to begin is called from
/// within `begin()`, as there is no connection to dispatch.
public final class UnavailableAssessmentManager: AssessmentManaging {
    public let error: AssessmentError

    public init(error: AssessmentError) {
        self.error = error
    }

    public var features: [AssessmentFeature: AssessmentEnforcement] { [:] }
    public var lockState: AssessmentLockState { .inactive }
    /// No compositor answered, so no version.
    public var protocolVersion: UInt32? { nil }

    public func begin(_ session: AssessmentSession) {
        session.receive(.failed(error))
    }

    // A session that never began is never sent these.
    public func end(_ session: AssessmentSession) {}
    public func update(_ session: AssessmentSession, to configuration: AssessmentConfiguration) {}
    public func release(_ session: AssessmentSession.ID) {}
}
