/// What "restrictions active" means for one session: the compositor holds
/// exactly this while the session is pending with restrictions, active or
/// interrupted, and nothing once it has ended, failed or been destroyed.
///
/// Derived from the session and its configuration, so a change of
/// configuration (an update) is a change from one set to another.
public struct RestrictionSet: Sendable, Hashable, CustomStringConvertible {
    /// The session the restrictions serve.
    public var session: SessionID
    /// The client whose windows are the session's windows.
    public var owner: ClientID
    /// The owner's role: `.untrusted` for an app-requested lock (ASAM),
    /// whose windows live among the untrusted clients' windows.
    public var ownerRole: Role
    /// Windows of clients other than the owner and allowed participants are
    /// not shown (and are never put in a visible scene tree).
    public var hideUntrustedWindows: Bool
    /// Screen capture and recording of any kind are refused.
    public var refuseCapture: Bool
    /// The clipboard and primary selection reach only the session's clients.
    public var isolateClipboard: Bool
    /// Keyboard and pointer input reach only the session's windows.
    public var inputOnlyToSession: Bool
    /// Features the configuration allows.
    public var allowedFeatures: Set<AssessmentFeature>
    /// Denied features the compositor announced as compositor-enforced:
    /// the ones the compositor itself must keep off.
    public var compositorEnforcedDenials: Set<AssessmentFeature>
    /// Participant ids whose windows the session shows.
    public var participants: [String]
    /// Participants the configuration keeps off the network whatever the
    /// policy gives them.
    public var networkDeniedParticipants: Set<String>
    /// Whether the owner loses the network with everyone else.
    public var ownerNetworkDenied: Bool

    /// The restrictions for `session` of `owner` under `configuration`.
    /// Every session in this version hides, refuses capture, isolates the
    /// clipboard and confines input; only features and participants vary.
    public init(session: SessionID, owner: ClientID, ownerRole: Role = .app, configuration: AssessmentConfiguration,
                policy: SessionPolicy) {
        self.session = session
        self.owner = owner
        self.ownerRole = ownerRole
        hideUntrustedWindows = true
        refuseCapture = true
        isolateClipboard = true
        inputOnlyToSession = true
        allowedFeatures = configuration.allowedFeatures
        compositorEnforcedDenials = configuration.deniedFeatures.filter { policy.announcedFeatures[$0] == .compositor }
        participants = configuration.participants
        networkDeniedParticipants = configuration.networkDeniedParticipants
        ownerNetworkDenied = configuration.ownerNetworkDenied
    }

    /// Whether the layer that holds untrusted clients' windows stays in the
    /// scene. It leaves it whole while untrusted windows are hidden, unless
    /// the session's own windows are untrusted (an app-requested lock): then
    /// the layer stays and every window in it but the owner's is hidden one
    /// by one (`shows`).
    public var showsUntrustedLayer: Bool { !hideUntrustedWindows || ownerRole == .untrusted }

    public var description: String {
        var parts: [String] = []
        if hideUntrustedWindows { parts.append("hide-untrusted") }
        if refuseCapture { parts.append("refuse-capture") }
        if isolateClipboard { parts.append("isolate-clipboard") }
        if inputOnlyToSession { parts.append("input-only-to-session") }
        parts.append("deny=[\(compositorEnforcedDenials.sorted().map(\.protocolName).joined(separator: ","))]")
        parts.append("participants=[\(participants.joined(separator: ","))]")
        let denied = networkDeniedParticipants.intersection(participants).sorted() + (ownerNetworkDenied ? ["owner"] : [])
        if !denied.isEmpty { parts.append("network-denied=[\(denied.joined(separator: ","))]") }
        return "\(session) of \(owner)\(ownerRole == .app ? "" : " (\(ownerRole))"): " + parts.joined(separator: " ")
    }
}
