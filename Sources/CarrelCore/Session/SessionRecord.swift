/// What the Invigilator knows about one session object.
public struct SessionRecord: Sendable, Hashable {
    public let id: SessionID
    public let owner: ClientID
    public internal(set) var phase: SessionPhase
    /// The configuration in force (an update replaces it only once applied).
    public internal(set) var configuration: AssessmentConfiguration
    /// The resolved time limit in seconds (the policy's default if the
    /// configuration names none), extensions included.
    public internal(set) var timeLimit: UInt32
    /// Seconds an administrator added with `carrelctl extend`; kept across
    /// updates (they re-derive `timeLimit` from the configuration).
    public internal(set) var addedTime: UInt32 = 0
    /// When `began` was sent; the time limit counts from here.
    public internal(set) var beganAt: Instant?
    /// When the time limit passes, while its timer is armed; `nil` before
    /// `began`, after it fired and after the session ended.
    public internal(set) var timeLimitDeadline: Instant?
    /// The restriction change the compositor was asked for and has not yet
    /// confirmed, if any.
    public internal(set) var restrictionRequest: RestrictionRequest?
    /// The role of the client that began the session.
    public internal(set) var ownerRole: Role = .app
    /// For an app-requested lock (ASAM): the executable of the client that
    /// asked, as Carrel read it at connect; nil for every other session.
    public internal(set) var appLockExecutable: String? = nil
    /// Whether the banner was put up for this session.
    public internal(set) var bannerShown = false
    /// Ended by an administrator (`end --force`) without the client asking:
    /// one `end` the client may have sent before it heard `ended` is no
    /// protocol error.
    public internal(set) var endedUnasked = false
    /// Updates received while another was being applied, oldest first; each
    /// is answered in order.
    public internal(set) var queuedUpdates: [AssessmentConfiguration]

    /// An outstanding `.applyRestrictions` and what it is for.
    public enum RestrictionRequest: Sendable, Hashable {
        /// Restrictions for `begin`.
        case begin(RestrictionSet)
        /// Restrictions for an update to `configuration`.
        case update(AssessmentConfiguration, RestrictionSet)

        public var restrictions: RestrictionSet {
            switch self {
            case .begin(let set), .update(_, let set): return set
            }
        }
    }
}
