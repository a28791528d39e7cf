/// A key from a real keyboard, as the compositor resolved it with
/// xkbcommon, before any client sees it.
public struct KeyPress: Sendable, Hashable, CustomStringConvertible {
    /// Pressed (true) or released.
    public var pressed: Bool
    /// Every keysym the key produces, lower-cased (Core's matchers take these).
    public var keysyms: [UInt32]
    /// The one keysym xkbcommon gives for the key in its current state
    /// (Enter, Escape, Backspace for the passcode entry).
    public var keysym: UInt32
    /// The modifiers held.
    public var modifiers: Set<KeyCombination.Modifier>
    /// The UTF-8 text the key types ("" for none).
    public var text: String
    /// The key as the compositor would hand it on: what Core gives back
    /// when it held the key while the input method was away.
    public var stroke: KeyStroke?

    public init(pressed: Bool, keysyms: [UInt32], keysym: UInt32? = nil,
                modifiers: Set<KeyCombination.Modifier> = [], text: String = "", stroke: KeyStroke? = nil) {
        self.pressed = pressed
        self.keysyms = keysyms
        self.keysym = keysym ?? keysyms.first ?? 0
        self.modifiers = modifiers
        self.text = text
        self.stroke = stroke
    }

    public var description: String {
        let symbols = keysyms.map { "0x" + String($0, radix: 16) }.joined(separator: ",")
        return "\(pressed ? "press" : "release") [\(symbols)] \(modifiers.map(\.rawValue).sorted())"
    }
}
