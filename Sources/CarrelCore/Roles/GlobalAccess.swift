/// The one place that decides which Wayland globals each role may see.
///
/// Every global Carrel creates must be classified here; a global nobody
/// classified is hidden from every role (fail closed), and the compositor
/// treats meeting one as a programming error in debug builds.
///
/// ```swift
/// let access = GlobalAccess.standard
/// access.decision(interface: "xdg_wm_base", role: .untrusted)   // .visible
/// access.decision(interface: "zwlr_virtual_keyboard_manager_v1", role: .app) // .hidden(.privileged)
/// ```
public struct GlobalAccess: Sendable, Equatable {
    /// What a global is, for access purposes.
    public enum Class: String, Sendable, Equatable, CaseIterable {
        /// Plain desktop globals every client needs to show a window.
        case desktop
        /// Globals of our assessment protocol: only entitled roles.
        case assessment
        /// Screen capture: created only when the policy enables it outside
        /// sessions, for the roles it names, and hidden from everyone while
        /// a session holds restrictions.
        case capture
        /// Injection, overlays, other clients' windows, display control:
        /// never created unless a feature needs one, never for untrusted.
        case privileged
        /// Text input (composed text from the input method): the roles
        /// whose windows a session can show, never untrusted clients.
        case textInput
        /// The input method's side: composing for the focused window and
        /// its candidate popup; only the input-method role.
        case inputMethod
        /// Typing through a virtual keyboard: the input method (keys it does
        /// not consume) and the on-screen keyboard; keys reach only the
        /// window the Desk allows.
        case virtualKeyboard
        /// The on-screen keyboard's band at the bottom of the output (layer
        /// shell): only the on-screen-keyboard role, one surface, one layer.
        case onScreenKeyboard
    }

    /// The verdict for one global and one role.
    public enum Decision: Sendable, Equatable {
        case visible
        case hidden(Reason)

        public enum Reason: String, Sendable, Equatable {
            /// The global is classified, but not for this role.
            case notForRole
            /// The global is privileged (capture, injection, ...).
            case privileged
            /// No one classified this global: hidden by default.
            case unclassified
            /// Capture, while a session holds restrictions.
            case duringSession
        }

        public var isVisible: Bool { self == .visible }
    }

    /// Interface name → class.
    public let classes: [String: Class]
    /// Which roles may see globals of each class.
    public let rolesByClass: [Class: Set<Role>]

    public init(classes: [String: Class], rolesByClass: [Class: Set<Role>]) {
        self.classes = classes
        self.rolesByClass = rolesByClass
    }

    /// Whether `role` may see (and so bind) the global `interface`;
    /// `sessionActive`: whether a session holds restrictions right now;
    /// `appLockEntitled`: whether the client's executable (read from
    /// `/proc/PID/exe` when it connected) is on the policy's app-lock
    /// allowlist — such a client also sees the assessment globals, to ask
    /// for a lock-only session. It grants nothing else.
    public func decision(interface: String, role: Role, sessionActive: Bool = false,
                         appLockEntitled: Bool = false) -> Decision {
        guard let cls = classes[interface] else { return .hidden(.unclassified) }
        if cls == .assessment && appLockEntitled { return .visible }
        guard rolesByClass[cls, default: []].contains(role) else {
            return .hidden(cls == .privileged ? .privileged : .notForRole)
        }
        return cls == .capture && sessionActive ? .hidden(.duringSession) : .visible
    }

    /// This table with capture given to the roles `policy` names, if it
    /// enables capture outside sessions; otherwise to nobody.
    public func applying(_ policy: CapturePolicy) -> GlobalAccess {
        var roles = rolesByClass
        roles[.capture] = policy.enabledOutsideSessions ? policy.roles : []
        return GlobalAccess(classes: classes, rolesByClass: roles)
    }

    /// The table as an administrator's policy shapes it: capture per its
    /// `[capture]`, the assessment global to the roles its session entitles,
    /// text input and the input method's globals only when it names an
    /// input method (Carrel creates them only then); the on-screen
    /// keyboard's always (the role exists only while a session allows it).
    public func applying(_ policy: Policy) -> GlobalAccess {
        var roles = applying(policy.capture).rolesByClass
        roles[.assessment] = policy.session.entitledRoles
        if policy.inputMethod == nil {
            roles[.textInput] = []
            roles[.inputMethod] = []
            roles[.virtualKeyboard, default: []].remove(.inputMethod)
        }
        return GlobalAccess(classes: classes, rolesByClass: roles)
    }

    /// The interfaces a role sees, sorted; what `wayland-info` should list.
    public func visibleInterfaces(for role: Role) -> [String] {
        classes.keys.filter { decision(interface: $0, role: role).isVisible }.sorted()
    }

    /// Plain desktop globals, served by wlroots 0.15 as Carrel configures it.
    public static let desktopInterfaces: [String] = [
        "wl_compositor", "wl_subcompositor", "wl_shm", "wl_seat", "wl_output",
        "wl_data_device_manager", "zwp_primary_selection_device_manager_v1",
        "xdg_wm_base", "zxdg_decoration_manager_v1", "zxdg_output_manager_v1",
        "wp_presentation", "wp_viewporter", "zwp_idle_inhibit_manager_v1",
        "zwp_linux_dmabuf_v1", "wl_drm",
    ]

    /// Globals that must never reach an untrusted client. Listed
    /// so that, should one ever be created, it is hidden for a stated reason.
    public static let privilegedInterfaces: [String] = [
        "zwlr_export_dmabuf_manager_v1",
        "zwlr_data_control_manager_v1",
        "zwlr_virtual_pointer_manager_v1",
        "zwlr_foreign_toplevel_manager_v1", "zwlr_gamma_control_manager_v1",
        "zwlr_output_manager_v1", "zwlr_output_power_manager_v1",
        "zwlr_input_inhibit_manager_v1", "zwp_keyboard_shortcuts_inhibit_manager_v1",
        "zwp_virtual_keyboard_v1", "ext_session_lock_manager_v1",
    ] + newerWlrootsPrivilegedInterfaces

    /// Globals wlroots 0.19 and 0.20 can serve that would capture the screen
    /// or a window (ext-image-copy-capture and its capture sources), read or
    /// set the clipboard (ext-data-control), list every client's windows
    /// (ext-foreign-toplevel-list), or lift a client's restrictions by
    /// vouching for it (security-context, since 0.17). Carrel creates none of
    /// them with any wlroots; they are privileged, not capture, so no
    /// `[capture]` policy can hand them out: Carrel fails capture frames at a
    /// session's begin only for screencopy.
    public static let newerWlrootsPrivilegedInterfaces: [String] = [
        "ext_image_copy_capture_manager_v1",
        "ext_output_image_capture_source_manager_v1",
        "ext_foreign_toplevel_image_capture_source_manager_v1",
        "ext_data_control_manager_v1",
        "ext_foreign_toplevel_list_v1",
        "wp_security_context_manager_v1",
    ]

    /// Text input for the windows of the app and participants (wlroots'
    /// text-input-v3), created when the policy names an input method.
    public static let textInputInterfaces: [String] = ["zwp_text_input_manager_v3"]

    /// The input method's globals: composing (input-method-v2, with its
    /// keyboard grab and candidate popup).
    public static let inputMethodInterfaces: [String] = ["zwp_input_method_manager_v2"]

    /// The virtual keyboard: fcitx5 binds it to pass on keys it does not
    /// consume, the on-screen keyboard to type.
    public static let virtualKeyboardInterfaces: [String] = ["zwp_virtual_keyboard_manager_v1"]

    /// The layer shell, through which the on-screen keyboard asks for its
    /// band (wlroots' wlr-layer-shell).
    public static let onScreenKeyboardInterfaces: [String] = ["zwlr_layer_shell_v1"]

    /// Capture globals Carrel can create when the policy enables capture
    /// (wlroots' screencopy; export-dmabuf stays privileged and is never created).
    public static let captureInterfaces: [String] = ["zwlr_screencopy_manager_v1"]

    /// Our assessment protocol's globals.
    public static let assessmentInterfaces: [String] = ["carrel_assessment_manager_v1"]

    /// The table Carrel runs with unless a policy says otherwise: every role
    /// gets the desktop, only the app may lock, nobody gets privileged globals,
    /// text input is the app's and participants', the input method's globals its own role's,
    /// the virtual keyboard the input method's and the on-screen keyboard's, the layer shell the latter's.
    public static let standard: GlobalAccess = {
        var classes: [String: Class] = [:]
        for name in desktopInterfaces { classes[name] = .desktop }
        for name in privilegedInterfaces { classes[name] = .privileged }
        for name in assessmentInterfaces { classes[name] = .assessment }
        for name in captureInterfaces { classes[name] = .capture }
        for name in textInputInterfaces { classes[name] = .textInput }
        for name in inputMethodInterfaces { classes[name] = .inputMethod }
        for name in virtualKeyboardInterfaces { classes[name] = .virtualKeyboard }
        for name in onScreenKeyboardInterfaces { classes[name] = .onScreenKeyboard }
        return GlobalAccess(
            classes: classes,
            rolesByClass: [
                .desktop: Set(Role.allCases),
                .assessment: [.app],
                .capture: [],
                .privileged: [],
                .textInput: [.app, .participant],
                .inputMethod: [.inputMethod],
                .virtualKeyboard: [.inputMethod, .onScreenKeyboard],
                .onScreenKeyboard: [.onScreenKeyboard],
            ]
        )
    }()
}
