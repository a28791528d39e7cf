/// The key that moves keyboard focus between the windows a session shows
/// (the exam and its participants): Ctrl+Alt+Tab. It is fixed, not a policy
/// key, so every exam room teaches the same gesture; during a session
/// Carrel's other bindings are off, and this one only moves focus among the
/// session's own windows, so it opens no way out.
public enum SessionFocusSwitch {
    /// xkbcommon's Tab, and ISO_Left_Tab which some keymaps give for Tab
    /// with modifiers held.
    public static let keysyms: Set<UInt32> = [0xFF09, 0xFE20]
    public static let modifiers: Set<KeyCombination.Modifier> = [.ctrl, .alt]

    /// Whether a pressed key with these keysyms and exactly these modifiers
    /// held is the focus switch.
    public static func matches(keysyms pressed: [UInt32], modifiers held: Set<KeyCombination.Modifier>) -> Bool {
        held == modifiers && pressed.contains { keysyms.contains($0) }
    }
}
