/// Another application an assessment may show beside the exam, as Apple's
/// `AEAssessmentApplication` names one.
///
/// Apple names an application by bundle and team identifier; Carrel names it
/// by the id the administrator's policy gives it under `[participants.ID]`
/// (`policyName`), which is the `add_participant` id on the wire. The exam
/// never names a program: the policy says which command that id runs, so an
/// app cannot start anything the administrator did not define.
///
/// ```swift
/// var configuration = AssessmentConfiguration()
/// configuration.setConfiguration(AssessmentParticipantConfiguration(),
///                                 for: AssessmentApplication(policyName: "calculator"))
/// ```
public struct AssessmentApplication: Hashable, Sendable, CustomStringConvertible {
    /// The participant's id in the administrator's policy (`[participants.ID]`).
    public var policyName: String

    public init(policyName: String) {
        self.policyName = policyName
    }

    public var description: String { policyName }
}
