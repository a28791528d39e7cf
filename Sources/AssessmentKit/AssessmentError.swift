/// Why a session failed to begin, was interrupted, or failed to update.
///
/// The codes mirror the reasons of carrel-assessment-v1 (`failure_reason`
/// and `interruption_reason`), plus the few that arise in the client:
/// ``Code/connection``, ``Code/notAvailable`` and ``Code/notActive``.
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

        /// The code for a wire `failure_reason`; unknown values are `.other`.
        public init(failureReason value: UInt32) {
            let table: [UInt32: Code] = [
                1: .alreadyActive, 2: .notEntitled, 3: .unsupportedConfiguration, 4: .surfaceNotReady,
                5: .timeout, 6: .restrictionFailed, 7: .internal, 8: .interrupted, 9: .cancelled,
            ]
            self = table[value] ?? .other
        }

        /// The code for a wire `interruption_reason`; unknown values are `.other`.
        public init(interruptionReason value: UInt32) {
            let table: [UInt32: Code] = [1: .integrity, 2: .administrative, 3: .timeLimit, 4: .shutdown]
            self = table[value] ?? .other
        }

        /// The reason's name in the protocol XML (`already_active`,
        /// `time_limit`, ...); client-side codes get names in the same style.
        public var protocolName: String {
            switch self {
            case .other: return "other"
            case .alreadyActive: return "already_active"
            case .notEntitled: return "not_entitled"
            case .unsupportedConfiguration: return "unsupported_configuration"
            case .surfaceNotReady: return "surface_not_ready"
            case .timeout: return "timeout"
            case .restrictionFailed: return "restriction_failed"
            case .internal: return "internal"
            case .interrupted: return "interrupted"
            case .cancelled: return "cancelled"
            case .integrity: return "integrity"
            case .administrative: return "administrative"
            case .timeLimit: return "time_limit"
            case .shutdown: return "shutdown"
            case .connection: return "connection"
            case .notAvailable: return "not_available"
            case .notActive: return "not_active"
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
