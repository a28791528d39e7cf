/// What Single App Mode shows while its app is away: between the app's exit
/// (or the loss of its last window) and its relaunched process mapping a
/// toplevel, and before the first launch maps one. Never an unlocked desktop:
/// only app-role windows may be shown (children the app left behind are still
/// the app), no untrusted window is rendered or focused, and every output
/// shows a plain colour under whatever app window appears.
public enum KioskScreen {
    /// Whether Single App Mode is in a gap: enabled, and no app-role window
    /// is mapped. `mappedRoles` are the roles of the mapped toplevels.
    public static func isGap(kiosk: Bool, mappedRoles: [Role]) -> Bool {
        kiosk && !mappedRoles.contains(.app)
    }
}

/// Every reason a window may have to stay out of the scene, combined: a
/// session's restrictions and Single App Mode's gap. The compositor asks this
/// one value, so a window is shown only when neither hides it.
public struct ScreenRules: Sendable, Hashable {
    /// The restrictions of the session pending or active, if any.
    public var restrictions: RestrictionSet?
    /// Single App Mode's app is away (see `KioskScreen.isGap`).
    public var kioskGap: Bool

    public init(restrictions: RestrictionSet? = nil, kioskGap: Bool = false) {
        self.restrictions = restrictions
        self.kioskGap = kioskGap
    }

    /// Whether a window of `owner` may be rendered, focused and given input.
    public func shows(_ owner: WindowOwner) -> Bool {
        if kioskGap, owner.role != .app { return false }
        return restrictions?.shows(owner) ?? true
    }

    /// Whether the untrusted layer as a whole is out of the scene.
    public var hidesUntrustedLayer: Bool {
        kioskGap || (restrictions?.hideUntrustedWindows ?? false)
    }

    /// Whether input and focus are confined to the windows shown.
    public var confinesInput: Bool {
        kioskGap || (restrictions?.inputOnlyToSession ?? false)
    }

    /// Whether untrusted windows may take keyboard focus at all.
    public var untrustedMayFocus: Bool {
        restrictions == nil && !kioskGap
    }

    /// Whether output `index` (0 is the primary) shows the plain curtain:
    /// during a session every output but the primary; in a kiosk gap all.
    public func curtainUp(outputIndex index: Int) -> Bool {
        kioskGap || (restrictions != nil && index > 0)
    }
}

extension SceneAudit {
    /// Windows that are enabled although `rules` hide them.
    public static func violations(_ entries: [Entry], under rules: ScreenRules) -> [WindowID] {
        entries.filter { $0.isEnabled && !rules.shows($0.owner) }.map(\.window)
    }
}
