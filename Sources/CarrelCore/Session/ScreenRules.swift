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
        kioskGap || !(restrictions?.showsUntrustedLayer ?? true)
    }

    /// Whether input and focus are confined to the windows shown.
    public var confinesInput: Bool {
        kioskGap || (restrictions?.inputOnlyToSession ?? false)
    }

    /// Whether untrusted windows may take keyboard focus at all: not in a
    /// kiosk gap, and during a session only when the session's own windows
    /// are untrusted (an app-requested lock; `confinesInput` keeps the
    /// others out).
    public var untrustedMayFocus: Bool {
        !kioskGap && (restrictions?.showsUntrustedLayer ?? true)
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
