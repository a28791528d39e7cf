/// `carrel --assessment -- APP`: a session Carrel begins on behalf of an app
/// that does not speak carrel-assessment-v1. It goes through the same
/// `Invigilator` as a protocol `begin` (so `began` still waits for a presented
/// frame with the restrictions up); this value decides only when to begin and
/// what each outcome means for Carrel and the app.
///
/// - Begin once, when the app's first app-role toplevel maps; its client owns
///   the session (other clients' windows, even the app's helpers on other
///   connections, are hidden like any other).
/// - `began`, `interrupted` and `ended` are logged; an interrupted session
///   keeps its restrictions until the app exits, as the protocol's does.
/// - A session that fails to begin ends the app: it must not go on without
///   the restrictions it was started for (fail closed).
/// - When the app exits, the session ends and Carrel exits with its status.
public struct OnBehalfSession: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        /// No app window yet.
        case waitingForWindow
        /// `begin` went to the Invigilator; no answer yet.
        case beginning
        case begun
        /// Interrupted (time limit, integrity, …): restrictions still hold.
        case interrupted
        /// Failed or ended: nothing more happens.
        case over
    }

    /// What Carrel does about an event on the session.
    public struct Reaction: Sendable, Equatable {
        public var log: SessionLogEntry
        /// End the app and Carrel (with status 1): the session cannot protect it.
        public var endApp: Bool
    }

    /// How the app is named in log lines (its command).
    public let appName: String
    public let configuration: AssessmentConfiguration
    public private(set) var phase: Phase = .waitingForWindow

    public init(appName: String, configuration: AssessmentConfiguration) {
        self.appName = appName
        self.configuration = configuration
    }

    /// A toplevel of `role` mapped: whether to begin the session now.
    public mutating func toplevelMapped(role: Role) -> Bool {
        guard phase == .waitingForWindow, role == .app else { return false }
        phase = .beginning
        return true
    }

    /// The Invigilator sent `event` on the session.
    public mutating func heard(_ event: SessionEvent) -> Reaction? {
        switch event {
        case .began where phase == .beginning:
            phase = .begun
            return Reaction(log: SessionLogEntry(.notice, "session began (on behalf of \(appName))"), endApp: false)
        case .failed(let reason, let message) where phase == .beginning:
            phase = .over
            return Reaction(log: SessionLogEntry(.error, "session failed to begin (on behalf of \(appName)): \(reason): \(message); ending \(appName), which must not run without its restrictions"), endApp: true)
        case .interrupted(let reason, let message) where phase == .begun || phase == .beginning:
            phase = .interrupted
            return Reaction(log: SessionLogEntry(.warning, "session interrupted (on behalf of \(appName)): \(reason): \(message); restrictions stay until \(appName) exits"), endApp: false)
        case .ended where phase != .over:
            phase = .over
            return Reaction(log: SessionLogEntry(.notice, "session ended (on behalf of \(appName))"), endApp: false)
        default:
            return nil
        }
    }

    /// The app exited: whether there is a session to end.
    public mutating func appExited() -> Bool {
        switch phase {
        case .beginning, .begun, .interrupted: return true
        case .waitingForWindow:
            phase = .over
            return false
        case .over: return false
        }
    }
}
