/// What the administrator's policy says about assessment sessions: who may
/// begin one, how long it may last, which participants exist, which features
/// the compositor announces, and how long `begin` may wait for a frame.
///
/// ```swift
/// var policy = SessionPolicy()                  // app role, 8 h maximum
/// policy.knownParticipants = ["calculator"]
/// policy.defaultTimeLimit = 2 * 3600
/// policy.refusal(of: AssessmentConfiguration(participants: ["browser"]))
/// // "participant "browser" is not in the policy (known: calculator)"
/// ```
public struct SessionPolicy: Sendable, Equatable {
    /// Roles that may begin sessions (and so should see the manager global).
    public var entitledRoles: Set<Role>
    /// Seconds a session lasts when its configuration names no time limit;
    /// `nil` means the maximum.
    public var defaultTimeLimit: UInt32?
    /// The longest time limit a configuration may ask for; `nil` means
    /// `fallbackMaximumTimeLimit`.
    public var maximumTimeLimit: UInt32?
    /// Participant ids the administrator defined.
    public var knownParticipants: Set<String>
    /// Features the compositor announces on bind, with who enforces each.
    /// Leaving a feature denied that is not announced cannot be enforced by
    /// anyone, so such a configuration is refused.
    public var announcedFeatures: [AssessmentFeature: AssessmentFeature.Enforcement]
    /// How long a pending session may wait for a frame showing only the
    /// session on every enabled output before it fails with `timeout`.
    public var presentationTimeout: Duration
    /// Whether the network restriction (`providers.network`) holds in every
    /// session, so a configuration may take network away; without it a
    /// network denial is refused (nothing would enforce it). Set from the
    /// policy's providers (`Policy.sessionTerms`).
    public var networkRestricted = false

    /// Eight hours: the limit exam platforms put on a lock when nobody says otherwise.
    public static let fallbackMaximumTimeLimit: UInt32 = ConfigurationRule.fallbackMaximumTimeLimit

    /// Every feature, enforced as `AssessmentFeature.enforcement` says.
    public static let standardAnnouncements = FeatureRule.standardAnnouncements

    public init(
        entitledRoles: Set<Role> = [.app],
        defaultTimeLimit: UInt32? = nil,
        maximumTimeLimit: UInt32? = nil,
        knownParticipants: Set<String> = [],
        announcedFeatures: [AssessmentFeature: AssessmentFeature.Enforcement] = SessionPolicy.standardAnnouncements,
        presentationTimeout: Duration = .seconds(3)
    ) {
        self.entitledRoles = entitledRoles
        self.defaultTimeLimit = defaultTimeLimit
        self.maximumTimeLimit = maximumTimeLimit
        self.knownParticipants = knownParticipants
        self.announcedFeatures = announcedFeatures
        self.presentationTimeout = presentationTimeout
    }

    public func isEntitled(_ role: Role) -> Bool { entitledRoles.contains(role) }

    /// The maximum in force: the policy's, or eight hours.
    public var effectiveMaximumTimeLimit: UInt32 { maximumTimeLimit ?? Self.fallbackMaximumTimeLimit }

    /// The default in force, never above the maximum.
    public var effectiveDefaultTimeLimit: UInt32 {
        min(defaultTimeLimit ?? effectiveMaximumTimeLimit, effectiveMaximumTimeLimit)
    }

    /// The time limit, in seconds, a session with `configuration` runs under.
    public func timeLimit(for configuration: AssessmentConfiguration) -> UInt32 {
        configuration.timeLimit ?? effectiveDefaultTimeLimit
    }

    /// The announcements in protocol order: one `feature` event each on bind.
    public var announcements: [(feature: AssessmentFeature, enforcement: AssessmentFeature.Enforcement)] {
        announcedFeatures.sorted { $0.key < $1.key }.map { (feature: $0.key, enforcement: $0.value) }
    }

    /// The policy's side of ``ConfigurationRule``: what a configuration may contain.
    public var configurationTerms: ConfigurationRule.Terms {
        ConfigurationRule.Terms(knownParticipants: knownParticipants, maximumTimeLimit: effectiveMaximumTimeLimit,
                                announcedFeatures: announcedFeatures)
    }

    /// Why this policy cannot honour `configuration`, as a log message, or
    /// `nil` if it can (``ConfigurationRule``, the rule AssessmentKit's
    /// in-memory lockdown applies too). A refusal is `unsupported_configuration` on the wire.
    public func refusal(of configuration: AssessmentConfiguration) -> String? {
        if let problem = ConfigurationRule.refusal(participants: configuration.participants, timeLimit: configuration.timeLimit,
                                                   allowedFeatures: configuration.allowedFeatures, terms: configurationTerms) {
            return problem
        }
        return networkDenialRefusal(configuration)
    }

    /// A configuration that takes network away on a machine that restricts
    /// no one's: a restriction Carrel cannot guarantee fails the begin.
    private func networkDenialRefusal(_ configuration: AssessmentConfiguration) -> String? {
        guard !networkRestricted else { return nil }
        var denied = configuration.networkDeniedParticipants.intersection(configuration.participants).sorted()
            .map { "participant \($0.debugDescription)" }
        if configuration.ownerNetworkDenied { denied.insert("the session's owner", at: 0) }
        guard !denied.isEmpty else { return nil }
        return "the configuration keeps \(denied.joined(separator: " and ")) off the network, but this machine restricts no one's network (the policy's providers.network is off), so nothing would; turn the network provider on or leave the denial out"
    }
}
