import AssessmentKit

/// What a free-text field tells the input method about itself
/// (text-input-v3's set_content_type), from the session's configuration:
/// help the session denies is not asked for.
public struct TextInputContentType: Hashable, Sendable {
    /// The protocol's `content_hint` bits.
    public struct Hints: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let completion = Hints(rawValue: 0x1)
        public static let spellcheck = Hints(rawValue: 0x2)
        public static let autoCapitalization = Hints(rawValue: 0x4)
    }

    public var hints: Hints
    /// The protocol's `content_purpose`; a free-text answer is `normal` (0).
    public var purpose: UInt32 = 0

    /// Word completion only with predictive text allowed, correction
    /// suggestions only with spell check allowed, automatic capitalization
    /// only with autocorrect allowed.
    public init(for configuration: AssessmentConfiguration) {
        var hints: Hints = []
        if configuration.allowsPredictiveKeyboard { hints.insert(.completion) }
        if configuration.allowsSpellCheck { hints.insert(.spellcheck) }
        if !configuration.autocorrectMode.isEmpty { hints.insert(.autoCapitalization) }
        self.hints = hints
    }
}
