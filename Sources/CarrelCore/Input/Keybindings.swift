/// What the compositor itself does with a key, before any client sees it.
public enum CompositorAction: Sendable, Equatable {
    /// Switch to virtual terminal N (1...12), as Ctrl+Alt+F<N> does on a
    /// Linux console.
    case switchToVirtualTerminal(Int)
}

/// Carrel's own keybindings. Carrel has one: virtual-terminal switching on a
/// real seat. During a session it is off — leaving the exam for a console is
/// exactly the escape a session forbids — and the key goes to the exam instead.
public enum Keybindings {
    /// xkbcommon's XF86Switch_VT_1, which the default keymaps produce for
    /// Ctrl+Alt+F1; the next eleven keysyms are VT 2...12.
    public static let switchVT1: UInt32 = 0x1008_FE01

    /// The action for a pressed key with these keysyms, or nil when the key is
    /// the client's.
    public static func action(forPressed keysyms: [UInt32], restrictionsActive: Bool) -> CompositorAction? {
        guard !restrictionsActive else { return nil }
        for keysym in keysyms where keysym >= switchVT1 && keysym < switchVT1 + 12 {
            return .switchToVirtualTerminal(Int(keysym - switchVT1) + 1)
        }
        return nil
    }
}
