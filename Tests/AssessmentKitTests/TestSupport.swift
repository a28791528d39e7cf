import AssessmentKit

/// Records what a session tells its delegate, in order.
final class DelegateRecorder: AssessmentSessionDelegate {
    var events: [AssessmentEvent] = []
    /// Runs inside each callback, after recording (to react like an app would).
    var reaction: (AssessmentSession, AssessmentEvent) -> Void = { _, _ in }

    private func note(_ session: AssessmentSession, _ event: AssessmentEvent) {
        events.append(event)
        reaction(session, event)
    }

    func assessmentSessionDidBegin(_ session: AssessmentSession) { note(session, .began) }
    func assessmentSession(_ session: AssessmentSession, failedToBeginWithError error: AssessmentError) {
        note(session, .failed(error))
    }
    func assessmentSession(_ session: AssessmentSession, wasInterruptedWithError error: AssessmentError) {
        note(session, .interrupted(error))
    }
    func assessmentSessionDidEnd(_ session: AssessmentSession) { note(session, .ended) }
    func assessmentSessionDidUpdate(_ session: AssessmentSession) { note(session, .updated(session.configuration)) }
    func assessmentSession(_ session: AssessmentSession, failedToUpdateTo configuration: AssessmentConfiguration,
                           error: AssessmentError) {
        note(session, .updateFailed(configuration, error))
    }
}

/// A session on `lockdown` with a recorder attached (the recorder is
/// returned because the session holds its delegate weakly).
func makeSession(_ lockdown: InMemoryAssessmentManager,
                 _ configuration: AssessmentConfiguration = AssessmentConfiguration())
    -> (AssessmentSession, DelegateRecorder) {
    let session = AssessmentSession(configuration: configuration, manager: lockdown)
    let recorder = DelegateRecorder()
    session.delegate = recorder
    return (session, recorder)
}
