/// Receives an ``AssessmentSession``'s lifecycle, with the names exam
/// developers know from AEAssessmentSessionDelegate. Every method has an
/// empty default.
///
/// Called on the thread that dispatches the Wayland display, from within
/// `wl_display_dispatch` (or ``InMemoryAssessmentManager/dispatch()`` in
/// tests); local refusals (see ``AssessmentSession``) are called from within
/// the method that caused them.
public protocol AssessmentSessionDelegate: AnyObject {
    /// Every restriction holds and only the session's windows are shown.
    func assessmentSessionDidBegin(_ session: AssessmentSession)
    /// The session did not begin; nothing stays restricted. Last callback.
    func assessmentSession(_ session: AssessmentSession, failedToBeginWithError error: AssessmentError)
    /// A restriction stopped holding, or the time limit passed. Restrictions
    /// stay: hide the exam content now, save progress, then call `end()`.
    func assessmentSession(_ session: AssessmentSession, wasInterruptedWithError error: AssessmentError)
    /// Everything restricted for the session is restored. Last callback.
    func assessmentSessionDidEnd(_ session: AssessmentSession)
    /// The configuration passed to the oldest unanswered `update(to:)` holds in full.
    func assessmentSessionDidUpdate(_ session: AssessmentSession)
    /// The update was refused; the previous configuration still holds.
    func assessmentSession(_ session: AssessmentSession, failedToUpdateTo configuration: AssessmentConfiguration,
                           error: AssessmentError)
}

extension AssessmentSessionDelegate {
    public func assessmentSessionDidBegin(_ session: AssessmentSession) {}
    public func assessmentSession(_ session: AssessmentSession, failedToBeginWithError error: AssessmentError) {}
    public func assessmentSession(_ session: AssessmentSession, wasInterruptedWithError error: AssessmentError) {}
    public func assessmentSessionDidEnd(_ session: AssessmentSession) {}
    public func assessmentSessionDidUpdate(_ session: AssessmentSession) {}
    public func assessmentSession(_ session: AssessmentSession, failedToUpdateTo configuration: AssessmentConfiguration,
                                  error: AssessmentError) {}
}
