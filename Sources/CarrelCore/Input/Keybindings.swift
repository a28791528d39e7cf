/// What the compositor itself does with a key, before any client sees it.
public enum CompositorAction: Sendable, Equatable {
    /// Switch to virtual terminal N (1...12), as Ctrl+Alt+F<N> does on a
    /// Linux console.
    case switchToVirtualTerminal(Int)
    /// The policy's emergency binding was pressed during a session: the
    /// session is interrupted (`administrative`) at the machine.
    case emergencyInterrupt
}

/// The policy's emergency binding with its key resolved to a keysym by the
/// compositor (xkbcommon), lower-cased so Shift does not change the key.
public struct EmergencyBinding: Sendable, Equatable {
    public var modifiers: Set<KeyCombination.Modifier>
    public var keysym: UInt32
    public init(modifiers: Set<KeyCombination.Modifier>, keysym: UInt32) {
        self.modifiers = modifiers
        self.keysym = keysym
    }

    /// Whether a key with these (lower-cased) keysyms, pressed with exactly
    /// these modifiers held, is this combination. Also used for Guided
    /// Access's unlock keys.
    public func matches(keysyms: [UInt32], modifiers held: Set<KeyCombination.Modifier>) -> Bool {
        modifiers == held && keysyms.contains(keysym)
    }
}

/// Carrel's own keybindings: virtual-terminal switching on a real seat, and
/// the emergency binding when the policy defines one (off by default); the
/// magnifier's keys are `MagnifierKeys`, below. During
/// a session VT switching is off — leaving the exam for a console is exactly
/// the escape a session forbids — and the key goes to the exam instead; the
/// emergency binding works only during a session.
public enum Keybindings {
    /// xkbcommon's XF86Switch_VT_1, which the default keymaps produce for
    /// Ctrl+Alt+F1; the next eleven keysyms are VT 2...12.
    public static let switchVT1: UInt32 = 0x1008_FE01

    /// The action for a pressed key with these keysyms, or nil when the key is
    /// the client's.
    ///
    /// `keysyms` are lower-cased; `modifiers` are those held (exactly these
    /// must be held for the emergency binding: Ctrl+Alt+Shift+Escape does not
    /// fire on Ctrl+Alt+Shift+Logo+Escape).
    /// `virtualTerminals`: the policy's `kiosk.vt_switching`; false leaves the
    /// VT keys to the client outside a session too.
    public static func action(forPressed keysyms: [UInt32], modifiers: Set<KeyCombination.Modifier> = [],
                              restrictionsActive: Bool, emergency: EmergencyBinding? = nil,
                              virtualTerminals: Bool = true) -> CompositorAction? {
        if restrictionsActive {
            if let emergency, emergency.matches(keysyms: keysyms, modifiers: modifiers) {
                return .emergencyInterrupt
            }
            return nil
        }
        guard virtualTerminals else { return nil }
        for keysym in keysyms where keysym >= switchVT1 && keysym < switchVT1 + 12 {
            return .switchToVirtualTerminal(Int(keysym - switchVT1) + 1)
        }
        return nil
    }
}

/// What the policy's `[magnifier]` keys do.
public enum MagnifierAction: Sendable, Equatable, CaseIterable {
    case zoomIn
    case zoomOut
    case zoomOff
    case nextColourFilter
}

/// The policy's `[magnifier]` keys with their keys resolved to keysyms by
/// the compositor (xkbcommon), as `EmergencyBinding`s.
public struct MagnifierKeys: Sendable, Equatable {
    public var bindings: [MagnifierAction: EmergencyBinding]

    public init(_ bindings: [MagnifierAction: EmergencyBinding] = [:]) { self.bindings = bindings }

    /// The action of a pressed key, or nil when it is none of them.
    /// Matched only while the session allows `screen_magnifier`; otherwise
    /// these are ordinary keys and go to the exam like any other.
    public func action(forPressed keysyms: [UInt32], modifiers: Set<KeyCombination.Modifier>,
                       magnifierAllowed: Bool) -> MagnifierAction? {
        guard magnifierAllowed else { return nil }
        return MagnifierAction.allCases.first { bindings[$0]?.matches(keysyms: keysyms, modifiers: modifiers) ?? false }
    }
}
