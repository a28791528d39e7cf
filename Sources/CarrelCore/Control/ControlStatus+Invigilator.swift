// The control protocol's words are a module of their own (carrelctl links
// that and not the Desk); reading the Invigilator's state into a `status`
// report is a decision of the compositor's, so it stays here.
extension ControlStatus {
    /// The report for `invigilator`'s state at `now`. `owner` gives the pid
    /// and role of a session's client (the compositor knows them); `clients`
    /// counts connections by role.
    public init(mode: String, invigilator: Invigilator, now: Instant,
                owner: (ClientID) -> (pid: Int32?, role: Role?),
                clients: [Role: Int], metrics: Metrics? = nil) {
        let live = invigilator.liveSession
        let session = live.map { record in
            let info = owner(record.owner)
            var left: UInt64?
            if record.phase.hasBegun, let began = record.beganAt {
                let deadline = began.advanced(bySeconds: record.timeLimit)
                left = UInt64(deadline.duration(since: now).components.seconds)
            }
            return Session(id: record.id.raw, phase: record.phase.description,
                           app: App(client: record.owner.raw, pid: info.pid, role: info.role?.rawValue ?? "unknown"),
                           participants: record.configuration.participants,
                           timeLimitSeconds: record.timeLimit, addedSeconds: record.addedTime,
                           timeLeftSeconds: left)
        }
        var counts: [String: Int] = [:]
        for role in Role.allCases { counts[role.rawValue] = clients[role] ?? 0 }
        self.init(mode: mode, state: Self.state(of: live?.phase), session: session,
                  restrictions: invigilator.restrictionsInForce.map(Restrictions.init), clients: counts, metrics: metrics)
    }

    /// The coarse state an administrator sees for the live session's phase.
    public static func state(of phase: SessionPhase?) -> String {
        switch phase {
        case nil, .failed?, .ended?: return "none"
        case .restricting?, .awaitingConfirmation?, .awaitingPresentation?: return "beginning"
        case .active?: return "active"
        case .interrupted?: return "ending"
        }
    }
}

extension ControlStatus.Restrictions {
    /// The restriction set in force, as `status` shows it.
    public init(_ set: RestrictionSet) {
        self.init(hideUntrustedWindows: set.hideUntrustedWindows, refuseCapture: set.refuseCapture,
                  isolateClipboard: set.isolateClipboard, inputOnlyToSession: set.inputOnlyToSession,
                  allowedFeatures: set.allowedFeatures.sorted().map(\.protocolName),
                  compositorEnforcedDenials: set.compositorEnforcedDenials.sorted().map(\.protocolName),
                  participants: set.participants)
    }
}
