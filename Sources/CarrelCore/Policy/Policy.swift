/// Everything an administrator decides for a machine: the policy file
/// (`--policy PATH`, default `/etc/carrel/policy.toml`), validated as a whole
/// before anything starts. `Policy.builtIn` is what Carrel runs under when
/// there is no file; most of its keys, not all, are the most restrictive
/// choice (see `builtIn`).
public struct Policy: Sendable, Equatable {
    /// Who may begin sessions, time limits, participant ids.
    public var session: SessionPolicy

    /// `session` with what the rest of the policy decides for a begin:
    /// whether the network restriction holds.
    public var sessionTerms: SessionPolicy {
        var terms = session
        terms.networkRestricted = providers.network
        return terms
    }
    /// Participants by id: what Carrel launches and what each may do.
    public var participants: [String: ParticipantPolicy]
    /// The input method Carrel launches, if any.
    public var inputMethod: InputMethodPolicy?
    /// The on-screen keyboard Carrel launches for sessions that allow it.
    public var onScreenKeyboard: OnScreenKeyboardPolicy
    /// Screen capture outside sessions (never during one).
    public var capture: CapturePolicy
    /// A key combination that ends a session from the keyboard, if any.
    public var emergencyBinding: KeyCombination?
    /// What other outputs show and whether hot-plugging interrupts a session.
    public var outputs: OutputPolicy
    /// Single App Mode: relaunching the app.
    public var kiosk: KioskPolicy
    /// App-requested lock (ASAM): which apps may ask, confirmation, banner.
    public var appLock: AppLockPolicy
    /// Guided Access: pinning the current app with a passcode.
    public var guidedAccess: GuidedAccessPolicy
    /// The admin control socket (`carrelctl`).
    public var control: ControlPolicy
    /// Restrictions beyond the display (`[providers]`): network, media.
    public var providers: ProvidersPolicy
    /// What the machine must be before a session begins (`[preconditions]`).
    public var preconditions: PreconditionPolicy
    /// Where the audit log goes (`[audit]`).
    public var audit: AuditPolicy
    /// `[attestation]`: the key signed statements about sessions are made with.
    public var attestation: AttestationPolicy
    /// The magnifier's keys (`[magnifier]`), working only in sessions that allow it.
    public var magnifier: MagnifierPolicy
    /// `[metrics]`: the seat's state for Prometheus' node-exporter, if wanted.
    public var metrics: MetricsPolicy = MetricsPolicy()

    public init(
        session: SessionPolicy = SessionPolicy(),
        participants: [String: ParticipantPolicy] = [:],
        inputMethod: InputMethodPolicy? = nil,
        onScreenKeyboard: OnScreenKeyboardPolicy = OnScreenKeyboardPolicy(),
        capture: CapturePolicy = CapturePolicy(),
        emergencyBinding: KeyCombination? = nil,
        outputs: OutputPolicy = OutputPolicy(),
        kiosk: KioskPolicy = KioskPolicy(),
        appLock: AppLockPolicy = AppLockPolicy(),
        guidedAccess: GuidedAccessPolicy = GuidedAccessPolicy(),
        control: ControlPolicy = ControlPolicy(),
        providers: ProvidersPolicy = ProvidersPolicy(),
        preconditions: PreconditionPolicy = PreconditionPolicy(),
        audit: AuditPolicy = AuditPolicy(),
        attestation: AttestationPolicy = AttestationPolicy(),
        magnifier: MagnifierPolicy = MagnifierPolicy()
    ) {
        self.session = session
        self.participants = participants
        self.inputMethod = inputMethod
        self.onScreenKeyboard = onScreenKeyboard
        self.capture = capture
        self.emergencyBinding = emergencyBinding
        self.outputs = outputs
        self.kiosk = kiosk
        self.appLock = appLock
        self.guidedAccess = guidedAccess
        self.control = control
        self.providers = providers
        self.preconditions = preconditions
        self.audit = audit
        self.attestation = attestation
        self.magnifier = magnifier
    }

    /// What Carrel runs under with no policy file, and what a key a file
    /// leaves out falls back to. It must run wherever Carrel runs
    /// (unprivileged, nested, in CI), so not every key is at its most
    /// restrictive.
    ///
    /// Most restrictive: no participants, no input method, no capture, no
    /// emergency binding, hot-plugging interrupts, no app-requested lock,
    /// Guided Access off (no passcode, no unlock keys), control by root only,
    /// no precondition waived.
    ///
    /// Deliberately not, each one line of policy away:
    /// - `assessment.roles` is `["app"]`, not `[]`: the app must be able to
    ///   begin sessions, which is Carrel's job.
    /// - `kiosk.enabled` is false: without `--kiosk` Carrel ends with its app
    ///   and passes on its exit status, which scripts and tests rely on.
    /// - `app_lock.require_confirmation` is false: it acts only once an
    ///   executable is allowlisted, and would need someone at every machine.
    /// - `providers.network` and `providers.media` are off: the first needs
    ///   root, nftables and cgroup v2, the second a session bus; on by
    ///   default, every begin of an ordinary run would fail.
    /// - `preconditions.virtual_machine` is "report", not "refuse": the signs
    ///   of a VM are those of many legitimate machines; the finding is
    ///   always logged and audited.
    ///
    /// The rest are not restrictions (time limits, the curtain colour, the
    /// kiosk back-off, the banner, paths, the verify period). docs/POLICY.md
    /// has the table, and BuiltInPolicyTests pins every key of it.
    public static let builtIn = Policy()
}

/// One participant the policy defines (`[participants.ID]`).
public struct ParticipantPolicy: Sendable, Equatable {
    /// The command Carrel launches, program first.
    public var command: [String]
    /// Whether it may open network connections during a session (takes effect
    /// with the network restriction provider).
    public var network: Bool
    /// What its exit during a session means (`on_exit`).
    public var onExit: ParticipantExitPolicy

    public init(command: [String], network: Bool = false, onExit: ParticipantExitPolicy = .interrupt) {
        self.command = command
        self.network = network
        self.onExit = onExit
    }
}

/// `[participants.ID] on_exit`: what a participant's exit or crash during a
/// session means. Interrupting is the default: a session that promised a
/// calculator and lost it fails closed.
public enum ParticipantExitPolicy: String, Sendable, Equatable, CaseIterable {
    /// Launch it again at once; the session goes on.
    case relaunch
    /// Interrupt the session (`integrity`); the exam decides what to do.
    case interrupt
}

/// `[input_method]`: the only input method a session may use. Carrel
/// launches `command` on a socket of its own (the input-method role),
/// relaunches it if it dies, and gives it a configuration offering `engines`.
public struct InputMethodPolicy: Sendable, Equatable {
    /// Absolute program path, then arguments (fcitx5).
    public var command: [String]
    /// The engines the seat offers, first the one active at start: fcitx5
    /// input method names such as `mozc`, `hangul`, `pinyin`.
    public var engines: [String]

    /// The engines offered when the policy names none.
    public static let defaultEngines = ["mozc", "hangul", "pinyin"]

    public init(command: [String], engines: [String] = InputMethodPolicy.defaultEngines) {
        self.command = command
        self.engines = engines
    }
}

/// `[on_screen_keyboard]`: the program Carrel launches, on a socket of its
/// own, while a session allows `on_screen_keyboard` (never otherwise).
public struct OnScreenKeyboardPolicy: Sendable, Equatable {
    /// Program, then arguments; Debian's wvkbd by default.
    public var command: [String]

    /// wvkbd's international layout set, as Debian installs it.
    public static let defaultCommand = ["/usr/bin/wvkbd-mobintl"]

    public init(command: [String] = OnScreenKeyboardPolicy.defaultCommand) {
        self.command = command
    }
}

/// `[capture]`: capture is never available during a session; outside one
/// only to the roles named here, and only when enabled.
public struct CapturePolicy: Sendable, Equatable {
    public var enabledOutsideSessions: Bool
    public var roles: Set<Role>
    public init(enabledOutsideSessions: Bool = false, roles: Set<Role> = []) {
        self.enabledOutsideSessions = enabledOutsideSessions
        self.roles = roles
    }
}

/// A key with modifiers, as written in the policy: `"Ctrl+Alt+Shift+Escape"`.
public struct KeyCombination: Sendable, Equatable, Hashable {
    public enum Modifier: String, Sendable, CaseIterable, Hashable, Comparable {
        case ctrl, alt, shift, logo
        public static func < (a: Self, b: Self) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }
    public var modifiers: Set<Modifier>
    /// The xkb keysym name of the key, e.g. `Escape`, `F12`, `q`.
    public var keyName: String

    public init(modifiers: Set<Modifier>, keyName: String) {
        self.modifiers = modifiers
        self.keyName = keyName
    }
}

/// `[outputs]`: the exam is on the primary output; the others show a colour.
public struct OutputPolicy: Sendable, Equatable {
    /// Whether plugging an output in during a session is tolerated (it shows
    /// the curtain colour either way); when false it interrupts the session.
    public var allowHotplugDuringSession: Bool
    /// The curtain colour on every output but the primary, 0xRRGGBB.
    public var curtainColour: UInt32

    /// The curtain Carrel has always drawn: a dark grey rather than black, so
    /// a curtained output is told apart from one that shows nothing.
    public static let defaultCurtainColour: UInt32 = 0x14171C

    public init(allowHotplugDuringSession: Bool = false, curtainColour: UInt32 = OutputPolicy.defaultCurtainColour) {
        self.allowHotplugDuringSession = allowHotplugDuringSession
        self.curtainColour = curtainColour
    }

    /// `curtainColour` as opaque red, green, blue, alpha in 0...1, the form
    /// the renderer takes.
    public var curtainComponents: [Float] {
        [16, 8, 0].map { Float((curtainColour >> UInt32($0)) & 0xFF) / 255 } + [1]
    }
}

/// `[kiosk]`: Single App Mode relaunches the app when it exits.
public struct KioskPolicy: Sendable, Equatable {
    /// Whether Carrel runs in Single App Mode without `--kiosk`.
    public var enabled: Bool
    /// How many relaunches in a row before Carrel gives up and exits.
    public var maximumRelaunches: Int
    /// The first back-off; each further relaunch doubles it, up to the maximum.
    public var initialBackoff: Duration
    public var maximumBackoff: Duration
    /// A run that lived at least this long was no crash loop: it resets the
    /// relaunch count and the back-off.
    public var stabilityWindow: Duration
    /// `vt_switching`: whether Ctrl+Alt+F1–F12 switch virtual terminals
    /// outside a session (a console for the invigilator). Never during one.
    /// An exam machine's policy says no: then the machine's own keyboard
    /// reaches no console at all, and the keys go to the app.
    public var virtualTerminalSwitching = true

    public init(enabled: Bool = false, maximumRelaunches: Int = 5,
                initialBackoff: Duration = .milliseconds(250), maximumBackoff: Duration = .seconds(10),
                stabilityWindow: Duration = .seconds(30)) {
        self.enabled = enabled
        self.maximumRelaunches = maximumRelaunches
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.stabilityWindow = stabilityWindow
    }
}

/// `[app_lock]`: apps that may ask for a lock-only session (ASAM).
public struct AppLockPolicy: Sendable, Equatable {
    /// Absolute paths of executables allowed to ask, matched against the
    /// connecting process's `/proc/PID/exe` (never against what a client
    /// says about itself, such as its app id); empty: none.
    public var allowedExecutables: Set<String>
    /// Whether the person at the machine confirms on screen before `began`.
    public var requireConfirmation: Bool
    /// How long the banner naming the app and time limit shows at `began`; zero: no banner.
    public var bannerDuration: Duration

    public init(allowedExecutables: Set<String> = [], requireConfirmation: Bool = false,
                bannerDuration: Duration = .zero) {
        self.allowedExecutables = allowedExecutables
        self.requireConfirmation = requireConfirmation
        self.bannerDuration = bannerDuration
    }
}

/// `[magnifier]`: the keys that zoom the screen and cycle its colour
/// filter. They act only during a session that allows `screen_magnifier`;
/// otherwise they are ordinary keys and go to the focused window.
public struct MagnifierPolicy: Sendable, Equatable {
    public var zoomIn: KeyCombination
    public var zoomOut: KeyCombination
    public var zoomOff: KeyCombination
    public var colourFilter: KeyCombination

    /// Logo+Alt with `=` (in), `-` (out), `0` (off) and `c` (colour filter),
    /// as other desktops' magnifiers use Logo+Alt+= and Logo+Alt+-.
    public init(zoomIn: KeyCombination = KeyCombination(modifiers: [.logo, .alt], keyName: "equal"),
                zoomOut: KeyCombination = KeyCombination(modifiers: [.logo, .alt], keyName: "minus"),
                zoomOff: KeyCombination = KeyCombination(modifiers: [.logo, .alt], keyName: "0"),
                colourFilter: KeyCombination = KeyCombination(modifiers: [.logo, .alt], keyName: "c")) {
        self.zoomIn = zoomIn
        self.zoomOut = zoomOut
        self.zoomOff = zoomOff
        self.colourFilter = colourFilter
    }

    /// Each action's combination, with the policy key that sets it.
    public var combinations: [(action: MagnifierAction, key: String, combination: KeyCombination)] {
        [(.zoomIn, "zoom_in", zoomIn), (.zoomOut, "zoom_out", zoomOut), (.zoomOff, "zoom_off", zoomOff),
         (.nextColourFilter, "colour_filter", colourFilter)]
    }
}

/// `[guided_access]`: pin the current app; leaving needs the passcode.
public struct GuidedAccessPolicy: Sendable, Equatable {
    /// The passcode as a salted slow hash (`carrel hash-passcode` prints one);
    /// nil: Guided Access is off.
    public var passcodeHash: String?
    /// A key combination that opens the on-screen passcode entry, if any.
    public var unlockKeys: KeyCombination?

    public init(passcodeHash: String? = nil, unlockKeys: KeyCombination? = nil) {
        self.passcodeHash = passcodeHash
        self.unlockKeys = unlockKeys
    }
}

/// `[control]`: who may use `carrelctl`.
public struct ControlPolicy: Sendable, Equatable {
    /// The control socket's path.
    public var socketPath: String
    /// A group whose members may use it besides root; nil: root only.
    public var group: String?

    public static let defaultSocketPath = CarrelPaths.controlSocket

    public init(socketPath: String = ControlPolicy.defaultSocketPath, group: String? = nil) {
        self.socketPath = socketPath
        self.group = group
    }
}

/// `[audit]`: the tamper-evident log of sessions and blocked attempts.
public struct AuditPolicy: Sendable, Equatable {
    /// The JSON-lines file records are appended to.
    public var path: String

    public static let defaultPath = CarrelPaths.auditLog

    public init(path: String = AuditPolicy.defaultPath) {
        self.path = path
    }
}

/// `[metrics]`: the seat's session state and blocked attempts as a
/// Prometheus text file, for node-exporter's textfile collector to serve.
/// Carrel itself never listens on the network.
public struct MetricsPolicy: Sendable, Equatable {
    /// The directory `carrel.prom` is written to; nil (the default): none.
    public var textfileDirectory: String?

    /// Where Debian's prometheus-node-exporter reads text files from.
    public static let debianTextfileDirectory = "/var/lib/prometheus/node-exporter"

    public init(textfileDirectory: String? = nil) {
        self.textfileDirectory = textfileDirectory
    }
}

/// `[attestation]`: signed statements about sessions for exam servers.
public struct AttestationPolicy: Sendable, Equatable {
    /// The private key file `carrel keygen` wrote; nil: no statements
    /// (requests are answered with `attestation_failed(unavailable)`).
    public var keyPath: String?

    /// Where `carrel keygen` writes the key when not told otherwise.
    public static let defaultKeyDirectory = "/etc/carrel/attestation"

    public init(keyPath: String? = nil) {
        self.keyPath = keyPath
    }
}
