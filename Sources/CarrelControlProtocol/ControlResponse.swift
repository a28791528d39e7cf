import FoundationEssentials

/// Why the compositor refused a control request. Raw values are the `code`
/// of an error response.
public enum ControlFailureCode: String, Sendable, Hashable, Codable {
    /// Not a well-formed request line.
    case badRequest = "bad_request"
    /// A command this Carrel does not know.
    case unknownCommand = "unknown_command"
    /// An argument out of range or malformed.
    case badArgument = "bad_argument"
    /// The command needs a session and none is pending or active.
    case noSession = "no_session"
    /// The session is not in a state the command applies to.
    case wrongState = "wrong_state"
    /// `end` or `extend` named a session that is not the live one (it
    /// ended, or another began): nothing was done.
    case sessionChanged = "session_changed"
    /// The command would go beyond what the policy allows.
    case aboveMaximum = "above_maximum"
    /// Guided Access is off: the policy has no `guided_access.passcode_hash`.
    case notConfigured = "not_configured"
    /// No app window to pin (`lock`).
    case noApp = "no_app"
    /// `unlock` with a passcode that does not match.
    case wrongPasscode = "wrong_passcode"
    /// Too many wrong passcodes: the next attempt is not checked before a wait.
    case rateLimited = "rate_limited"
    /// `reload`: the policy file is unreadable or invalid; the running policy stays.
    case badPolicy = "bad_policy"
    /// The peer-credential check refused the connection.
    case permissionDenied = "permission_denied"
    /// Too many control connections, or one that said nothing for too long.
    case busy
    /// carrelctl only: Carrel's control socket could not be reached.
    case unavailable
    /// carrelctl only: the answer was not a response line.
    case badResponse = "bad_response"
}

/// A refusal: a code for scripts and a message for people.
public struct ControlFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public var code: ControlFailureCode
    public var message: String

    public init(_ code: ControlFailureCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// What `end` and `extend` did.
public struct ControlOutcome: Sendable, Hashable, Codable {
    /// The session acted on (its number, as in Carrel's log).
    public var session: UInt64
    /// For `end`: the message the app was sent.
    public var message: String?
    /// For `extend`: seconds added, and the new limit and time left.
    public var addedSeconds: UInt32?
    public var timeLimitSeconds: UInt32?
    public var timeLeftSeconds: UInt64?
    /// For `end --force`: the session ended, not just interrupted.
    public var forced: Bool?
    /// For `end --force`: seconds between SIGTERM and SIGKILL for the
    /// session's app (what was sent is in the audit log, `app_stop`).
    public var appStopGraceSeconds: UInt32?

    public init(session: UInt64, message: String? = nil, addedSeconds: UInt32? = nil,
                timeLimitSeconds: UInt32? = nil, timeLeftSeconds: UInt64? = nil,
                forced: Bool? = nil, appStopGraceSeconds: UInt32? = nil) {
        self.session = session
        self.forced = forced
        self.appStopGraceSeconds = appStopGraceSeconds
        self.message = message
        self.addedSeconds = addedSeconds
        self.timeLimitSeconds = timeLimitSeconds
        self.timeLeftSeconds = timeLeftSeconds
    }
}

/// What `reload` did: the tables now in effect and those waiting for a restart.
public struct ReloadOutcome: Sendable, Hashable, Codable {
    public var file: String
    public var applied: [String]
    public var needRestart: [String]
    public var message: String

    public init(file: String, applied: [String], needRestart: [String], message: String) {
        self.file = file
        self.applied = applied
        self.needRestart = needRestart
        self.message = message
    }
}

/// One response line: `{"ok":true,"command":…,"status"|"outcome"|"reload":…}` or
/// `{"ok":false,"error":{"code":…,"message":…}}`. Keys are snake_case.
public struct ControlResponse: Sendable, Hashable, Codable {
    public var ok: Bool
    public var command: String?
    public var error: ControlFailure?
    public var status: ControlStatus?
    public var outcome: ControlOutcome?
    public var reload: ReloadOutcome?

    public init(ok: Bool, command: String? = nil, error: ControlFailure? = nil,
                status: ControlStatus? = nil, outcome: ControlOutcome? = nil, reload: ReloadOutcome? = nil) {
        self.ok = ok
        self.command = command
        self.error = error
        self.status = status
        self.outcome = outcome
        self.reload = reload
    }

    public static func failure(_ failure: ControlFailure, command: String? = nil) -> ControlResponse {
        ControlResponse(ok: false, command: command, error: failure)
    }

    /// The wire form: one JSON object, no newline (JSON escapes any newline
    /// inside strings).
    public var line: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let data = (try? encoder.encode(self)) ?? Data(#"{"ok":false,"error":{"code":"bad_request","message":"response could not be encoded"}}"#.utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Parses a response line, as `carrelctl` does.
    public static func parse(_ line: some Collection<UInt8>) -> ControlResponse? {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try? decoder.decode(ControlResponse.self, from: Data(line))
    }
}
