/// What one participant of a session may do, as Apple's
/// `AEAssessmentParticipantConfiguration` says it.
///
/// `allowsNetworkAccess` defaults to `true`, as Apple's does, and means "as
/// far as the administrator's policy allows": a participant's network is
/// its policy entry's `network` key (`[participants.ID] network = true`
/// puts it in a cgroup of its own that the session's ruleset lets through),
/// and the exam app's own (``AssessmentConfiguration/mainParticipantConfiguration``)
/// is the network provider's exemption of the session's owner. Setting it to
/// `false` takes that network away for the session
/// (`deny_participant_network`, `deny_owner_network`, protocol version 3);
/// no configuration can give more network than the policy does.
public struct AssessmentParticipantConfiguration: Hashable, Sendable {
    /// Whether the participant may reach the network during the session, as
    /// far as the policy allows; `false` keeps it off (see the type's notes).
    public var allowsNetworkAccess: Bool

    public init(allowsNetworkAccess: Bool = true) {
        self.allowsNetworkAccess = allowsNetworkAccess
    }
}
