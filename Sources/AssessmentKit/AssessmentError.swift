/// Why a session failed to begin, was interrupted, or failed to update.
///
/// The codes mirror the reasons of carrel-assessment-v1 (`failure_reason`
/// and `interruption_reason`), plus the few that arise in the client:
/// ``Code/connection``, ``Code/notAvailable``, ``Code/notActive``,
/// ``Code/multipleParticipantsNotSupported`` and ``Code/configurationUpdatesNotSupported``.
///
/// Apple's `AEAssessmentErrorCode` names work too, each standing for the
/// Carrel code that means the same:
///
/// | Apple's | Carrel's |
/// |---|---|
/// | `unknown` | ``Code/other`` |
/// | `unsupportedPlatform` | ``Code/notAvailable`` |
/// | `multipleParticipantsNotSupported` | ``Code/multipleParticipantsNotSupported`` |
/// | `configurationUpdatesNotSupported` | ``Code/configurationUpdatesNotSupported`` |
/// | `requiredParticipantsNotAvailable` | ``Code/participantUnavailable`` |
/// The message is for logs and people; base decisions on ``code`` only.
///
/// ```swift
/// func assessmentSession(_ session: AssessmentSession, failedToBeginWithError error: AssessmentError) {
///     if error.code == .alreadyActive { showRetryLater() } else { showError(error.message) }
/// }
/// ```
public struct AssessmentError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Hashable, Sendable, CaseIterable {
        /// A reason not listed here, including reasons of later protocol versions.
        case other

        // failure_reason: failed and update_failed.
        /// Another session, of this or another app, is pending or active.
        case alreadyActive
        /// The compositor's policy does not entitle this app to begin sessions.
        case notEntitled
        /// A denied feature nobody can enforce, a participant the policy does not
        /// know, or a time limit above the policy's maximum (or below one second).
        case unsupportedConfiguration
        /// The session's toplevel was not mapped yet: draw the window first.
        case surfaceNotReady
        /// No frame showing only the session's windows was presented in time.
        case timeout
        /// A restriction could not be applied; everything applied was undone.
        case restrictionFailed
        /// The compositor met an internal error.
        case `internal`
        /// The session was interrupted and can only be ended (update failures only).
        case interrupted
        /// The compositor stopped beginning the session (administrator, shutdown),
        /// or the app called `end()` before the session began.
        case cancelled
        /// The machine does not meet the administrator's preconditions for
        /// sessions; another configuration would fail the same way (protocol version 2).
        case preconditionsUnmet
        /// A participant the configuration names could not be started; nothing
        /// was left applied (protocol version 2).
        case participantUnavailable

        // interruption_reason: interrupted.
        /// A restriction stopped holding.
        case integrity
        /// An administrator interrupted the session.
        case administrative
        /// The session's time limit has passed.
        case timeLimit
        /// The compositor is shutting down.
        case shutdown

        // Arising in the client.
        /// The connection to the compositor failed; the compositor ended any session.
        case connection
        /// The compositor does not offer carrel_assessment_manager_v1 to this app.
        case notAvailable
        /// `update(to:)` was called on a session that is not active.
        case notActive
        /// The configuration names participants, but the compositor's
        /// protocol version cannot take them (it offers version 1).
        case multipleParticipantsNotSupported
        /// `update(to:)` was called, but the lockdown cannot update a session.
        case configurationUpdatesNotSupported

        // Apple's AEAssessmentErrorCode names.
        /// Apple's `unknown`: a reason not listed here.
        public static let unknown = Code.other
        /// Apple's `unsupportedPlatform`: no compositor offers assessment sessions to this app.
        public static let unsupportedPlatform = Code.notAvailable
        /// Apple's `requiredParticipantsNotAvailable`: a participant could not be started.
        public static let requiredParticipantsNotAvailable = Code.participantUnavailable

        /// The code for a wire `failure_reason`; unknown values are `.other`.
        public init(failureReason value: UInt32) {
            self.init(FailureReason(wireValue: value))
        }

        /// The code for a wire `interruption_reason`; unknown values are `.other`.
        public init(interruptionReason value: UInt32) {
            self.init(InterruptionReason(wireValue: value))
        }

        /// The code for a failure reason.
        public init(_ reason: FailureReason) {
            switch reason {
            case .other: self = .other
            case .alreadyActive: self = .alreadyActive
            case .notEntitled: self = .notEntitled
            case .unsupportedConfiguration: self = .unsupportedConfiguration
            case .surfaceNotReady: self = .surfaceNotReady
            case .timeout: self = .timeout
            case .restrictionFailed: self = .restrictionFailed
            case .internal: self = .internal
            case .interrupted: self = .interrupted
            case .cancelled: self = .cancelled
            case .preconditionsUnmet: self = .preconditionsUnmet
            case .participantUnavailable: self = .participantUnavailable
            }
        }

        /// The code for an interruption reason.
        public init(_ reason: InterruptionReason) {
            switch reason {
            case .other: self = .other
            case .integrity: self = .integrity
            case .administrative: self = .administrative
            case .timeLimit: self = .timeLimit
            case .shutdown: self = .shutdown
            }
        }

        /// The failure reason this code stands for, if it is one.
        public var failureReason: FailureReason? {
            FailureReason.allCases.first { Code($0) == self }
        }

        /// The interruption reason this code stands for, if it is one
        /// (`.other` is both a failure and an interruption reason).
        public var interruptionReason: InterruptionReason? {
            InterruptionReason.allCases.first { Code($0) == self }
        }

        /// The reason's name in the protocol XML (`already_active`,
        /// `time_limit`, ...); client-side codes get names in the same style.
        public var protocolName: String {
            if let reason = failureReason { return reason.protocolName }
            if let reason = interruptionReason { return reason.protocolName }
            switch self {
            case .connection: return "connection"
            case .notAvailable: return "not_available"
            case .notActive: return "not_active"
            case .multipleParticipantsNotSupported: return "multiple_participants_not_supported"
            case .configurationUpdatesNotSupported: return "configuration_updates_not_supported"
            default: return "other"
            }
        }
    }

    public var code: Code
    /// What happened, for logs; never parse it.
    public var message: String

    public init(_ code: Code, message: String = "") {
        self.code = code
        self.message = message
    }

    public var description: String {
        message.isEmpty ? code.protocolName : "\(code.protocolName): \(message)"
    }
}
