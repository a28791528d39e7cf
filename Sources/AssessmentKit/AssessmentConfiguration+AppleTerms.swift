/// The configuration in the terms of Apple's `AEAssessmentConfiguration`, so
/// an exam app written against Apple's API reads the same here. Every
/// property reads and writes one protocol feature in ``AssessmentConfiguration/allowedFeatures``:
///
/// | property | protocol feature |
/// |---|---|
/// | `allowsSpellCheck` | `spell_check` |
/// | `allowsPredictiveKeyboard` | `predictive_text` |
/// | `autocorrectMode` (not `.none`) | `autocorrect` |
/// | `allowsKeyboardShortcuts` | `keyboard_shortcuts` |
/// | `allowsAccessibilitySpeech` | `screen_reader` |
/// | `allowsInputMethods` (Carrel's own) | `input_method` |
/// | `allowsOnScreenKeyboard` (Carrel's own) | `on_screen_keyboard` |
/// | `allowsScreenMagnifier` (Carrel's own) | `screen_magnifier` |
///
/// Apple's `allowsContinuousPathKeyboard` (swipe typing) has no counterpart:
/// the protocol allows or denies the on-screen keyboard as a whole, never one
/// way of typing on it, so a Boolean here could not be kept. Apple's defaults
/// differ in places; Carrel's stay the most restrictive (everything `false`).
extension AssessmentConfiguration {
    /// Which automatic corrections may happen while typing, as in Apple's
    /// `AEAutocorrectMode`.
    ///
    /// The protocol has one `autocorrect` feature, covering both kinds: any
    /// mode but ``none`` allows it, so allowing `.punctuation` alone allows
    /// spelling correction too, and reading the mode back gives ``all``.
    public struct AutocorrectMode: OptionSet, Hashable, Sendable {
        public let rawValue: UInt

        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Corrects misspelt words.
        public static let spelling = AutocorrectMode(rawValue: 1 << 0)
        /// Smart quotes, dashes and the like.
        public static let punctuation = AutocorrectMode(rawValue: 1 << 1)
        /// No automatic correction: `autocorrect` stays denied.
        public static let none: AutocorrectMode = []
        /// What an allowed `autocorrect` feature permits.
        public static let all: AutocorrectMode = [.spelling, .punctuation]
    }

    /// Spell checking (`spell_check`; the app's own text widgets keep it off while denied).
    public var allowsSpellCheck: Bool {
        get { allows(.spellCheck) }
        set { set(.spellCheck, allowed: newValue) }
    }

    /// Word suggestions and completion (`predictive_text`).
    public var allowsPredictiveKeyboard: Bool {
        get { allows(.predictiveText) }
        set { set(.predictiveText, allowed: newValue) }
    }

    /// Automatic correction (`autocorrect`): ``AutocorrectMode/all`` when the
    /// feature is allowed, ``AutocorrectMode/none`` when denied. Setting any
    /// non-empty mode allows the whole feature (see ``AutocorrectMode``).
    public var autocorrectMode: AutocorrectMode {
        get { allows(.autocorrect) ? .all : .none }
        set { set(.autocorrect, allowed: !newValue.isEmpty) }
    }

    /// The desktop's shortcuts that Carrel otherwise reserves (`keyboard_shortcuts`).
    /// Carrel's only such shortcut, virtual-terminal switching, stays off in
    /// every session: allowing this turns nothing on.
    public var allowsKeyboardShortcuts: Bool {
        get { allows(.keyboardShortcuts) }
        set { set(.keyboardShortcuts, allowed: newValue) }
    }

    /// A screen reader speaking the screen (`screen_reader`), Apple's "accessibility speech".
    /// Client-enforced: a reader reads the app over AT-SPI, not through the
    /// compositor, so an app that leaves this denied keeps its accessibility
    /// tree from screen readers for the session (its toolkit's accessibility off).
    public var allowsAccessibilitySpeech: Bool {
        get { allows(.screenReader) }
        set { set(.screenReader, allowed: newValue) }
    }

    /// Input method composition, e.g. for Japanese, Korean or Chinese (`input_method`).
    /// Carrel's own: Apple's keyboards carry input methods within them.
    public var allowsInputMethods: Bool {
        get { allows(.inputMethod) }
        set { set(.inputMethod, allowed: newValue) }
    }

    /// An on-screen (virtual) keyboard (`on_screen_keyboard`). Carrel's own.
    /// Allowed, Carrel shows the policy's keyboard in a band at the bottom
    /// of the screen for the session and resizes the exam's window to the
    /// space above it; its keys reach only the session's focused window.
    public var allowsOnScreenKeyboard: Bool {
        get { allows(.onScreenKeyboard) }
        set { set(.onScreenKeyboard, allowed: newValue) }
    }

    /// A screen magnifier with colour filters (`screen_magnifier`), drawn by
    /// Carrel itself while the session allows it. Carrel's own.
    public var allowsScreenMagnifier: Bool {
        get { allows(.screenMagnifier) }
        set { set(.screenMagnifier, allowed: newValue) }
    }

    private func allows(_ feature: AssessmentFeature) -> Bool { allowedFeatures.contains(feature) }

    private mutating func set(_ feature: AssessmentFeature, allowed: Bool) {
        if allowed {
            allowedFeatures.insert(feature)
        } else {
            allowedFeatures.remove(feature)
        }
    }
}
