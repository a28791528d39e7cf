/// What one participant of a session may do, as Apple's
/// `AEAssessmentParticipantConfiguration` says it.
///
/// `allowsNetworkAccess` states what the exam expects; it is not sent,
/// because the protocol has no request for it: on Carrel the network is the
/// administrator's decision. A participant's network is its policy entry's
/// `network` key (`[participants.ID] network = true` puts it in a cgroup of
/// its own that the session's ruleset lets through), and the exam app's own
/// (``AssessmentConfiguration/mainParticipantConfiguration``) is the network
/// provider's rule for the app. Set it to what the policy says, so the
/// configuration reads true; the default is `false`, Carrel's most
/// restrictive choice, as everywhere in a configuration.
public struct AssessmentParticipantConfiguration: Hashable, Sendable {
    /// Whether the participant is expected to reach the network during the
    /// session; the policy decides (see the type's notes).
    public var allowsNetworkAccess: Bool

    public init(allowsNetworkAccess: Bool = false) {
        self.allowsNetworkAccess = allowsNetworkAccess
    }
}
