/// Reading and writing key combinations as the policy spells them.
///
/// ```swift
/// try KeyCombination(parsing: "ctrl+alt+shift+Escape")  // Ctrl+Alt+Shift+Escape
/// try KeyCombination(parsing: "Ctrl+Q")  // throws .tooFewModifiers: one slip would fire it
/// ```
extension KeyCombination: CustomStringConvertible {
    /// Fewer modifiers than this and a combination is one slip of the hand
    /// away from ending a session or opening the passcode entry.
    public static let minimumModifiers = 2

    /// Modifiers as written: case-insensitive, `Control` and `Super` accepted
    /// for the names other tools use.
    static let modifierNames: [String: Modifier] = [
        "ctrl": .ctrl, "control": .ctrl, "alt": .alt, "shift": .shift, "logo": .logo, "super": .logo,
    ]

    /// `Ctrl+Alt+Shift+Escape`: modifiers in a fixed order, then the key.
    public var description: String {
        let names: [Modifier: String] = [.ctrl: "Ctrl", .alt: "Alt", .shift: "Shift", .logo: "Logo"]
        return (modifiers.sorted().map { names[$0]! } + [keyName]).joined(separator: "+")
    }

    /// Modifiers joined by `+`, the key name last. The key name must look like
    /// an xkb keysym name (letters, digits, `_`); whether xkb knows it is
    /// checked where the keymap is, not here.
    public init(parsing text: String) throws(ParseError) {
        let parts = text.split(separator: "+", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: " \t") }
        guard !parts.contains(where: \.isEmpty) else { throw .emptyPart }
        guard let key = parts.last, Self.modifierNames[key.lowercased()] == nil else { throw .noKey }
        guard key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw .badKeyName(key)
        }
        var modifiers: Set<Modifier> = []
        for name in parts.dropLast() {
            guard let modifier = Self.modifierNames[name.lowercased()] else { throw .unknownModifier(name) }
            guard modifiers.insert(modifier).inserted else { throw .repeatedModifier(name) }
        }
        guard modifiers.count >= Self.minimumModifiers else { throw .tooFewModifiers(modifiers.count) }
        self.init(modifiers: modifiers, keyName: key)
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case emptyPart
        case noKey
        case badKeyName(String)
        case unknownModifier(String)
        case repeatedModifier(String)
        case tooFewModifiers(Int)

        static let allowed = "modifiers Ctrl, Alt, Shift, Logo joined by + and a key name last, e.g. \"Ctrl+Alt+Shift+Escape\""

        public var description: String {
            switch self {
            case .emptyPart: "has an empty part (a doubled or trailing +); write \(Self.allowed)"
            case .noKey: "names no key after the modifiers; write \(Self.allowed)"
            case .badKeyName(let name): "key name \"\(name)\" is not an xkb keysym name (letters, digits and _ only, e.g. Escape, F12, q)"
            case .unknownModifier(let name): "unknown modifier \"\(name)\"; the modifiers are Ctrl, Alt, Shift and Logo"
            case .repeatedModifier(let name): "repeats the modifier \"\(name)\""
            case .tooFewModifiers(let count): "needs at least \(KeyCombination.minimumModifiers) modifiers so it cannot be pressed by accident, got \(count)"
            }
        }
    }
}

extension Substring {
    /// Without leading and trailing characters from `set`; CarrelCore has no Foundation.
    func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
