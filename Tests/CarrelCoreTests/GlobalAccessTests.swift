import CarrelCore
import Testing

/// The role table: every global classified, fail closed for the rest,
/// privileged globals for nobody, the assessment global for the app. The
/// expected names are written out here, per role, not taken from the table.
@Suite("Global access by role")
struct GlobalAccessTests {
    let access = GlobalAccess.standard

    /// What every role needs to show a window (the last two only exist with a GPU renderer).
    static let desktop = [
        "wl_compositor", "wl_subcompositor", "wl_shm", "wl_seat", "wl_output",
        "wl_data_device_manager", "zwp_primary_selection_device_manager_v1",
        "xdg_wm_base", "zxdg_decoration_manager_v1", "zxdg_output_manager_v1",
        "wp_presentation", "wp_viewporter", "zwp_idle_inhibit_manager_v1",
        "zwp_linux_dmabuf_v1", "wl_drm",
    ]

    /// Each role's whole global list under the standard table, sorted.
    static let visibleByRole: [(Role, [String])] = [
        (.app, (desktop + ["carrel_assessment_manager_v1", "zwp_text_input_manager_v3"]).sorted()),
        (.participant, (desktop + ["zwp_text_input_manager_v3"]).sorted()),
        (.untrusted, desktop.sorted()),
        (.inputMethod, (desktop + ["zwp_input_method_manager_v2", "zwp_virtual_keyboard_manager_v1"]).sorted()),
        (.onScreenKeyboard, (desktop + ["zwlr_layer_shell_v1", "zwp_virtual_keyboard_manager_v1"]).sorted()),
    ]

    /// Text input: the app's and participants' windows, never untrusted clients.
    static let textInput = ["zwp_text_input_manager_v3"]
    /// The input method's side: its own role only.
    static let inputMethod = ["zwp_input_method_manager_v2"]
    /// The virtual keyboard: the input method's and the on-screen keyboard's.
    static let virtualKeyboard = ["zwp_virtual_keyboard_manager_v1"]
    /// The layer shell: the on-screen keyboard's alone.
    static let onScreenKeyboard = ["zwlr_layer_shell_v1"]

    /// Injection, overlays, other clients' windows, display control: nobody's.
    static let privileged = [
        "zwlr_export_dmabuf_manager_v1", "zwlr_data_control_manager_v1",
        "zwlr_virtual_pointer_manager_v1",
        "zwlr_foreign_toplevel_manager_v1",
        "zwlr_gamma_control_manager_v1", "zwlr_output_manager_v1",
        "zwlr_output_power_manager_v1", "zwlr_input_inhibit_manager_v1",
        "zwp_keyboard_shortcuts_inhibit_manager_v1",
        "zwp_virtual_keyboard_v1", "ext_session_lock_manager_v1",
    ] + newerWlroots

    /// What wlroots 0.19/0.20 add for capture, the clipboard and the window
    /// list, and security-context (0.17+): nobody's, whatever the policy says.
    static let newerWlroots = [
        "ext_image_copy_capture_manager_v1", "ext_output_image_capture_source_manager_v1",
        "ext_foreign_toplevel_image_capture_source_manager_v1", "ext_data_control_manager_v1",
        "ext_foreign_toplevel_list_v1", "wp_security_context_manager_v1",
    ]

    /// Names nobody classified: a global a future wlroots might add, one of
    /// ours not yet listed, a near miss of a known name, and the empty name.
    static let unclassified = [
        "ext_workspace_manager_v1", "xdg_toplevel_icon_manager_v1", "ext_image_copy_capture_manager_v2",
        "carrel_assessment_manager_v2", "WL_COMPOSITOR", "xdg_wm_base ", "",
    ]

    @Test("Unclassified globals are hidden from every role", arguments: unclassified, Role.allCases)
    func unclassifiedIsHidden(interface: String, role: Role) {
        #expect(access.decision(interface: interface, role: role) == .hidden(.unclassified))
    }

    @Test("Privileged globals are hidden from every role",
          arguments: privileged, Role.allCases)
    func privilegedIsHidden(interface: String, role: Role) {
        #expect(access.decision(interface: interface, role: role) == .hidden(.privileged))
    }

    @Test("Desktop globals are visible to every role",
          arguments: desktop, Role.allCases)
    func desktopIsVisible(interface: String, role: Role) {
        #expect(access.decision(interface: interface, role: role) == .visible)
    }

    @Test("Only the app sees the assessment manager", arguments: [
        (Role.app, GlobalAccess.Decision.visible),
        (.participant, .hidden(.notForRole)),
        (.untrusted, .hidden(.notForRole)),
    ])
    func assessmentManager(role: Role, expected: GlobalAccess.Decision) {
        #expect(access.decision(interface: "carrel_assessment_manager_v1", role: role) == expected)
    }

    @Test("Text input goes to the app and participants only", arguments: Role.allCases)
    func textInputForSessionRoles(role: Role) {
        let expected: GlobalAccess.Decision = (role == .app || role == .participant) ? .visible : .hidden(.notForRole)
        #expect(access.decision(interface: "zwp_text_input_manager_v3", role: role) == expected)
        #expect(access.decision(interface: "zwp_text_input_manager_v3", role: role, sessionActive: true) == expected)
    }

    /// Once privileged for everyone; now the input method's role's alone.
    @Test("The input method manager goes to the input-method role only",
          arguments: inputMethod, Role.allCases)
    func inputMethodForItsRole(interface: String, role: Role) {
        let expected: GlobalAccess.Decision = role == .inputMethod ? .visible : .hidden(.notForRole)
        #expect(access.decision(interface: interface, role: role) == expected)
        #expect(access.decision(interface: interface, role: role, sessionActive: true) == expected)
        #expect(access.decision(interface: interface, role: role, appLockEntitled: true) == expected)
    }

    @Test("The virtual keyboard manager goes to the input method and the on-screen keyboard only",
          arguments: virtualKeyboard, Role.allCases)
    func virtualKeyboardForItsRoles(interface: String, role: Role) {
        let expected: GlobalAccess.Decision = role == .inputMethod || role == .onScreenKeyboard ? .visible : .hidden(.notForRole)
        #expect(access.decision(interface: interface, role: role) == expected)
        #expect(access.decision(interface: interface, role: role, sessionActive: true) == expected)
        #expect(access.decision(interface: interface, role: role, appLockEntitled: true) == expected)
    }

    /// Once privileged for everyone; now the on-screen keyboard's alone.
    @Test("The layer shell goes to the on-screen-keyboard role only", arguments: onScreenKeyboard, Role.allCases)
    func layerShellForTheKeyboard(interface: String, role: Role) {
        let expected: GlobalAccess.Decision = role == .onScreenKeyboard ? .visible : .hidden(.notForRole)
        #expect(access.decision(interface: interface, role: role) == expected)
        #expect(access.decision(interface: interface, role: role, sessionActive: true) == expected)
        #expect(access.decision(interface: interface, role: role, appLockEntitled: true) == expected)
        #expect(access.applying(Policy.builtIn).decision(interface: interface, role: role) == expected)
    }

    @Test("An untrusted client's global list is exactly the desktop")
    func untrustedSeesOnlyTheDesktop() {
        let visible = access.visibleInterfaces(for: .untrusted)
        #expect(visible == Self.desktop.sorted())
        #expect(!visible.contains("carrel_assessment_manager_v1"))
    }

    @Test("The app's global list is the desktop plus the assessment manager and text input")
    func appSeesDesktopAndAssessment() {
        let expected = (Self.desktop + ["carrel_assessment_manager_v1", "zwp_text_input_manager_v3"]).sorted()
        #expect(access.visibleInterfaces(for: .app) == expected)
    }

    @Test("Each role's global list is exactly the one written here", arguments: visibleByRole)
    func eachRoleSeesItsList(role: Role, expected: [String]) {
        #expect(access.visibleInterfaces(for: role) == expected)
    }

    @Test("The table classifies exactly the globals written here, screencopy as capture")
    func tableClassifiesThePinnedGlobals() {
        let pinned = Set(Self.desktop + Self.privileged + Self.textInput + Self.inputMethod
                         + Self.virtualKeyboard + Self.onScreenKeyboard
                         + ["carrel_assessment_manager_v1", "zwlr_screencopy_manager_v1"])
        #expect(Set(access.classes.keys) == pinned)
        #expect(access.classes["zwlr_screencopy_manager_v1"] == .capture)
        #expect(access.classes["carrel_assessment_manager_v1"] == .assessment)
    }

    @Test("No interface is listed in two classes")
    func classListsAreDisjoint() {
        // The standard table is built from these lists into a dictionary; an
        // interface in two lists would silently take the last class.
        let all = GlobalAccess.desktopInterfaces + GlobalAccess.privilegedInterfaces
            + GlobalAccess.assessmentInterfaces + GlobalAccess.captureInterfaces
            + GlobalAccess.textInputInterfaces + GlobalAccess.inputMethodInterfaces
            + GlobalAccess.virtualKeyboardInterfaces + GlobalAccess.onScreenKeyboardInterfaces
        #expect(Set(all).count == all.count)
        #expect(access.classes.count == all.count)
    }

    @Test("No role is granted privileged or capture globals in the standard table")
    func privilegedClassHasNoRoles() {
        #expect(access.rolesByClass[.privileged, default: []].isEmpty)
        #expect(access.rolesByClass[.capture, default: []].isEmpty)
    }

    @Test("Capture goes to the policy's roles outside sessions, to nobody during one", arguments: Role.allCases)
    func captureFollowsPolicyAndSession(role: Role) {
        let screencopy = "zwlr_screencopy_manager_v1"
        let enabled = access.applying(CapturePolicy(enabledOutsideSessions: true, roles: [.participant]))
        #expect(enabled.decision(interface: screencopy, role: role).isVisible == (role == .participant))
        #expect(enabled.decision(interface: screencopy, role: role, sessionActive: true).isVisible == false)
        if role == .participant {
            #expect(enabled.decision(interface: screencopy, role: role, sessionActive: true) == .hidden(.duringSession))
        }
        let disabled = access.applying(CapturePolicy(enabledOutsideSessions: false, roles: [.participant]))
        #expect(disabled.decision(interface: screencopy, role: role) == .hidden(.notForRole))
        // Export-dmabuf is never handed out, whatever the capture policy says.
        #expect(enabled.decision(interface: "zwlr_export_dmabuf_manager_v1", role: role) == .hidden(.privileged))
    }

    @Test("wlroots 0.19/0.20's capture, data-control, toplevel-list and security-context globals reach nobody, even when the policy enables capture for every role",
          arguments: newerWlroots, Role.allCases)
    func newerWlrootsGlobalsAreNobodys(interface: String, role: Role) {
        #expect(access.classes[interface] == .privileged)
        let everyone = CapturePolicy(enabledOutsideSessions: true, roles: Set(Role.allCases))
        for table in [access, access.applying(everyone), access.applying(Policy.builtIn)] {
            #expect(table.decision(interface: interface, role: role) == .hidden(.privileged))
            #expect(table.decision(interface: interface, role: role, sessionActive: true) == .hidden(.privileged))
            #expect(table.decision(interface: interface, role: role, appLockEntitled: true) == .hidden(.privileged))
        }
    }

    @Test("A class missing from rolesByClass is hidden from every role", arguments: Role.allCases)
    func classWithoutRolesIsHidden(role: Role) {
        let table = GlobalAccess(classes: ["wl_compositor": .desktop], rolesByClass: [:])
        #expect(table.decision(interface: "wl_compositor", role: role) == .hidden(.notForRole))
        #expect(table.visibleInterfaces(for: role).isEmpty)
    }
}

@Suite("Global access as the policy shapes it: the input method")
struct InputMethodGlobalAccessTests {
    @Test("Without an input method in the policy nobody sees text input or the input method's globals", arguments: Role.allCases)
    func noInputMethodNoGlobals(role: Role) {
        let table = GlobalAccess.standard.applying(Policy.builtIn)
        for name in ["zwp_text_input_manager_v3", "zwp_input_method_manager_v2"] {
            #expect(table.decision(interface: name, role: role) == .hidden(.notForRole))
        }
        // The virtual keyboard stays the on-screen keyboard's (launched only for a session allowing it).
        let keyboard: GlobalAccess.Decision = role == .onScreenKeyboard ? .visible : .hidden(.notForRole)
        #expect(table.decision(interface: "zwp_virtual_keyboard_manager_v1", role: role) == keyboard)
    }

    @Test("With one, text input is the app's and participants', the input method's globals its role's", arguments: Role.allCases)
    func withInputMethod(role: Role) {
        var policy = Policy.builtIn
        policy.inputMethod = InputMethodPolicy(command: ["/usr/bin/fcitx5"])
        let table = GlobalAccess.standard.applying(policy)
        #expect(table.decision(interface: "zwp_text_input_manager_v3", role: role).isVisible == (role == .app || role == .participant))
        #expect(table.decision(interface: "zwp_input_method_manager_v2", role: role).isVisible == (role == .inputMethod))
        #expect(table.decision(interface: "zwp_virtual_keyboard_manager_v1", role: role).isVisible
                == (role == .inputMethod || role == .onScreenKeyboard))
    }
}
