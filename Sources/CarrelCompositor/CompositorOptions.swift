import CarrelCore
import Logging

/// What the composition root hands the compositor.
public struct CompositorOptions {
    /// The exam app and its arguments; empty runs the compositor alone.
    public var app: [String]
    /// Written with the public socket name once clients can connect.
    public var readyFD: Int32?
    /// Which globals each role sees.
    public var access: GlobalAccess
    public var logLevel: Logger.Level
    /// Size of outputs that have no modes of their own (a window on X11 or
    /// Wayland, headless outputs).
    public var windowSize: Size
    /// The administrator's policy, validated (`--policy`).
    public var policy: Policy
    /// Who may lock, time limits, participants, the bounded wait for `began`:
    /// the policy's `session`.
    public var sessionPolicy: SessionPolicy {
        get { policy.session }
        set { policy.session = newValue }
    }
    /// Single App Mode: relaunch the app when it exits, never showing
    /// anything else in between (`--kiosk` or the policy's `[kiosk]`).
    public var kiosk: KioskPolicy {
        get { policy.kiosk }
        set { policy.kiosk = newValue }
    }
    /// `--assessment`: begin a session on the app's behalf when its first
    /// window maps, with this configuration; nil: off.
    public var assessmentMode: AssessmentConfiguration?
    /// Where the admin control socket lives and who may use it: the
    /// policy's `[control]`, or `--control-socket`.
    public var control: ControlPolicy {
        get { policy.control }
        set { policy.control = newValue }
    }
    /// Where the policy came from and how to read it again (`carrelctl
    /// reload`); nil: reload is refused.
    public var policySource: PolicySource?
    /// The policy file Carrel runs under (nil: the built-in policy), whose
    /// ownership is a precondition of every session.
    public var policyPath: String?
    /// Whether Carrel must stop when the control socket cannot be opened
    /// (a path given on the command line); otherwise it logs and runs without.
    public var requireControlSocket: Bool
    /// `--app-user`: the user the app is started as (Carrel must be root); nil: Carrel's own.
    public var appUser: String?
    /// `--privileged-helper`: the socket of `carrel-privileged`, through which
    /// the network table is loaded and the app started as its own user; Carrel
    /// then runs unprivileged. nil: Carrel does both itself (as root).
    public var privilegedHelper: String?
    /// Carrel's version, as signed statements name it.
    public var carrelVersion = "unknown"
    /// `--journal-socket`: journald's native socket for the audit records
    /// (nil: `/run/systemd/journal/socket` when it exists).
    public var journalSocket: String?
    /// `--trace FILE`: every Desk effect and the compositor's own decisions,
    /// one JSON object a line, for tests and debugging.
    public var tracePath: String?
    /// `--journal-export`: a FIFO or file the audit records are written to in
    /// the journal export format, for `systemd-journal-remote`.
    public var journalExport: String?
    /// App-requested lock (ASAM): allowlist, confirmation, banner: the
    /// policy's `[app_lock]` with the command line's overrides.
    public var appLock: AppLockPolicy {
        get { policy.appLock }
        set { policy.appLock = newValue }
    }
    /// Restriction providers beyond the display (network, media): the
    /// policy's `[providers]` with the command line's additions.
    public var providers: ProvidersPolicy {
        get { policy.providers }
        set { policy.providers = newValue }
    }

    public init(app: [String], readyFD: Int32?, access: GlobalAccess = .standard, logLevel: Logger.Level = .info,
                windowSize: Size = Size(width: 1280, height: 720), policy: Policy = .builtIn, requireControlSocket: Bool = false) {
        self.app = app
        self.readyFD = readyFD
        self.access = access
        self.logLevel = logLevel
        self.windowSize = windowSize
        self.policy = policy
        self.requireControlSocket = requireControlSocket
    }
}

/// The policy file Carrel started with, and a way to read and validate it
/// again (with the command line's overrides) for `carrelctl reload`.
public struct PolicySource: Sendable {
    /// The file, as the log and `carrelctl reload` name it.
    public var path: String
    /// The whole policy again, or every problem in one message.
    public var load: @Sendable () -> Result<Policy, ReloadFailure>

    public init(path: String, load: @escaping @Sendable () -> Result<Policy, ReloadFailure>) {
        self.path = path
        self.load = load
    }
}

/// Why a reload found no usable policy: the running one stays.
public struct ReloadFailure: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
