/// text-input-v3's content hints as the input method sees them: the ones a
/// session's denied features forbid are stripped before Carrel relays them,
/// so the engine is not asked to complete, correct or check spelling.
public struct ContentHints: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The protocol's `completion`: suggest completions.
    public static let completion = ContentHints(rawValue: 0x1)
    /// `spellcheck`: suggest corrections of misspelt words.
    public static let spellcheck = ContentHints(rawValue: 0x2)
    /// `auto_capitalization`: change case on its own (a kind of autocorrect).
    public static let autoCapitalization = ContentHints(rawValue: 0x4)

    /// What may reach the input method: `completion` only if predictive text
    /// is allowed, `spellcheck` only if spell check is, `auto_capitalization`
    /// only if autocorrect is. Outside a session (`restrictions` nil) the
    /// client's hints pass unchanged.
    public static func relayed(_ hints: UInt32, under restrictions: RestrictionSet?) -> UInt32 {
        guard let allowed = restrictions?.allowedFeatures else { return hints }
        var stripped = ContentHints()
        if !allowed.contains(.predictiveText) { stripped.insert(.completion) }
        if !allowed.contains(.spellCheck) { stripped.insert(.spellcheck) }
        if !allowed.contains(.autocorrect) { stripped.insert(.autoCapitalization) }
        return hints & ~stripped.rawValue
    }
}
