/// A capability that is denied during an assessment session unless the
/// session's configuration allows it. Raw values are the entries of the
/// protocol's `carrel_assessment_manager_v1.feature` enum.
public enum AssessmentFeature: UInt32, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    case spellCheck = 0
    case predictiveText = 1
    case autocorrect = 2
    /// Input method composition, e.g. for CJK languages.
    case inputMethod = 3
    /// The policy's on-screen keyboard, which Carrel launches for the session.
    case onScreenKeyboard = 4
    /// Shortcuts the compositor reserves for itself (virtual-terminal
    /// switching); off during every session whatever the configuration.
    case keyboardShortcuts = 5
    case screenMagnifier = 6
    /// A screen reader reaching the app over AT-SPI; client-enforced.
    case screenReader = 7

    /// Who keeps a denied feature off; the protocol's `enforcement` enum.
    public enum Enforcement: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The compositor keeps the feature off while it is denied.
        case compositor = 0
        /// The compositor cannot: an app that leaves the feature denied must
        /// keep it off in its own windows for the whole session.
        case client = 1

        public var description: String { self == .compositor ? "compositor" : "client" }
    }

    /// Who enforces the denial in this version of Carrel. Spell check,
    /// prediction and autocorrect happen inside the client's own text
    /// widgets, where the compositor cannot see them. A screen reader (Orca)
    /// reads the app's accessibility tree over AT-SPI on D-Bus, a path that
    /// never passes through the compositor: only the app's toolkit can keep
    /// its tree from the reader (or expose it). The rest go through the
    /// compositor: the input method and the on-screen keyboard are programs
    /// Carrel launches only when allowed, and its own shortcuts (virtual
    /// terminal switching) are off during every session.
    public var enforcement: Enforcement {
        switch self {
        case .spellCheck, .predictiveText, .autocorrect, .screenReader: return .client
        case .inputMethod, .onScreenKeyboard, .keyboardShortcuts, .screenMagnifier:
            return .compositor
        }
    }

    /// The entry's name in the protocol XML, e.g. `spell_check`.
    public var protocolName: String {
        switch self {
        case .spellCheck: return "spell_check"
        case .predictiveText: return "predictive_text"
        case .autocorrect: return "autocorrect"
        case .inputMethod: return "input_method"
        case .onScreenKeyboard: return "on_screen_keyboard"
        case .keyboardShortcuts: return "keyboard_shortcuts"
        case .screenMagnifier: return "screen_magnifier"
        case .screenReader: return "screen_reader"
        }
    }

    /// Parses a protocol name (`spell_check`; `spell-check` is accepted too).
    public init?(protocolName: String) {
        let name = String(protocolName.lowercased().map { $0 == "-" ? "_" : $0 })
        guard let feature = Self.allCases.first(where: { $0.protocolName == name }) else { return nil }
        self = feature
    }

    public var description: String { protocolName }

    public static func < (a: AssessmentFeature, b: AssessmentFeature) -> Bool { a.rawValue < b.rawValue }
}
