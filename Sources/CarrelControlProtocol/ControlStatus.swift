/// The answer to `status`: the mode, the session (if any) with its app, time
/// and restrictions, and the connected Wayland clients by role. Encoded with
/// snake_case keys (see `ControlResponse.line`).
public struct ControlStatus: Sendable, Hashable, Codable {
    /// How Carrel runs: "standard" (an exam app that speaks the protocol).
    public var mode: String
    /// "none", "beginning" (pending), "active", or "ending" (interrupted:
    /// restrictions hold until the app ends the session).
    public var state: String
    public var session: Session?
    /// The restriction set in force; nil while none holds.
    public var restrictions: Restrictions?
    /// Connected Wayland clients per role ("app", "participant", "untrusted").
    public var clients: [String: Int]
    /// The metrics text file (`[metrics]`); nil when the policy asks for none.
    public var metrics: Metrics?

    /// Where the seat's metrics go and whether the last write reached them.
    public struct Metrics: Sendable, Hashable, Codable {
        /// The file node-exporter reads, e.g. /var/lib/prometheus/node-exporter/carrel.prom.
        public var textfile: String
        /// Why the last write failed (and what to do), nil when it succeeded.
        public var problem: String?

        public init(textfile: String, problem: String?) {
            self.textfile = textfile
            self.problem = problem
        }

        private enum CodingKeys: String, CodingKey { case textfile, problem }

        /// `problem` is `null` when there is none, never missing.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(textfile, forKey: .textfile)
            try container.encode(problem, forKey: .problem)
        }
    }

    public struct Session: Sendable, Hashable, Codable {
        /// The session's number, as in Carrel's log ("session 3").
        public var id: UInt64
        /// The exact phase, e.g. "active" or "interrupted(administrative)".
        public var phase: String
        public var app: App
        public var participants: [String]
        /// The time limit in seconds, extensions included.
        public var timeLimitSeconds: UInt32
        /// Seconds added by `extend`.
        public var addedSeconds: UInt32
        /// Seconds until the time limit passes; nil before `began`.
        public var timeLeftSeconds: UInt64?

        public init(id: UInt64, phase: String, app: App, participants: [String], timeLimitSeconds: UInt32,
                    addedSeconds: UInt32, timeLeftSeconds: UInt64?) {
            self.id = id
            self.phase = phase
            self.app = app
            self.participants = participants
            self.timeLimitSeconds = timeLimitSeconds
            self.addedSeconds = addedSeconds
            self.timeLeftSeconds = timeLeftSeconds
        }

        private enum CodingKeys: String, CodingKey {
            case id, phase, app, participants, timeLimitSeconds, addedSeconds, timeLeftSeconds
        }

        /// `time_left_seconds` is `null` before `began`, never missing.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(phase, forKey: .phase)
            try container.encode(app, forKey: .app)
            try container.encode(participants, forKey: .participants)
            try container.encode(timeLimitSeconds, forKey: .timeLimitSeconds)
            try container.encode(addedSeconds, forKey: .addedSeconds)
            try container.encode(timeLeftSeconds, forKey: .timeLeftSeconds)
        }
    }

    /// The client that owns the session.
    public struct App: Sendable, Hashable, Codable {
        /// Carrel's id for the Wayland connection.
        public var client: UInt64
        /// The process at the other end of the connection, if known.
        public var pid: Int32?
        /// The role its socket gave it ("unknown" if it is gone).
        public var role: String

        public init(client: UInt64, pid: Int32?, role: String) {
            self.client = client
            self.pid = pid
            self.role = role
        }

        private enum CodingKeys: String, CodingKey { case client, pid, role }

        /// `pid` is `null` when unknown, never missing.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(client, forKey: .client)
            try container.encode(pid, forKey: .pid)
            try container.encode(role, forKey: .role)
        }
    }

    public struct Restrictions: Sendable, Hashable, Codable {
        public var hideUntrustedWindows: Bool
        public var refuseCapture: Bool
        public var isolateClipboard: Bool
        public var inputOnlyToSession: Bool
        /// Features the session allows (protocol names).
        public var allowedFeatures: [String]
        /// Denied features the compositor itself keeps off.
        public var compositorEnforcedDenials: [String]
        public var participants: [String]

        public init(hideUntrustedWindows: Bool, refuseCapture: Bool, isolateClipboard: Bool, inputOnlyToSession: Bool,
                    allowedFeatures: [String], compositorEnforcedDenials: [String], participants: [String]) {
            self.hideUntrustedWindows = hideUntrustedWindows
            self.refuseCapture = refuseCapture
            self.isolateClipboard = isolateClipboard
            self.inputOnlyToSession = inputOnlyToSession
            self.allowedFeatures = allowedFeatures
            self.compositorEnforcedDenials = compositorEnforcedDenials
            self.participants = participants
        }
    }

    /// The report as the compositor fills it in (CarrelCore builds it from
    /// the Invigilator's state).
    public init(mode: String, state: String, session: Session?, restrictions: Restrictions?,
                clients: [String: Int], metrics: Metrics? = nil) {
        self.mode = mode
        self.state = state
        self.session = session
        self.restrictions = restrictions
        self.clients = clients
        self.metrics = metrics
    }

    private enum CodingKeys: String, CodingKey {
        case mode, state, session, restrictions, clients, metrics
    }

    /// Every key is always present: no session or no restrictions is `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mode, forKey: .mode)
        try container.encode(state, forKey: .state)
        try container.encode(session, forKey: .session)
        try container.encode(restrictions, forKey: .restrictions)
        try container.encode(clients, forKey: .clients)
        try container.encode(metrics, forKey: .metrics)
    }
}
