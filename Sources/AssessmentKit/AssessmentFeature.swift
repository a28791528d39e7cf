/// A capability that an assessment session denies unless its configuration
/// allows it. Mirrors `carrel_assessment_manager_v1.feature`; the raw value
/// is the wire value.
public enum AssessmentFeature: UInt32, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case spellCheck = 0
    case predictiveText = 1
    case autocorrect = 2
    /// Input method composition, for example for CJK languages.
    case inputMethod = 3
    case onScreenKeyboard = 4
    /// Keyboard shortcuts the compositor reserves for itself.
    case keyboardShortcuts = 5
    case screenMagnifier = 6
    case screenReader = 7

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
}

/// Who keeps a denied feature off during a session
/// (`carrel_assessment_manager_v1.enforcement`).
public enum AssessmentEnforcement: Hashable, Sendable {
    /// The compositor keeps the feature off while it is denied.
    case compositor
    /// The compositor cannot: an app that leaves the feature denied must keep
    /// it off in its own windows for the whole session (e.g. its own spell checker).
    case client
}

/// Whether any client's session is pending or active
/// (`carrel_assessment_manager_v1.lock_state`). A hint, not a promise:
/// another client may begin in the meantime.
public enum AssessmentLockState: Hashable, Sendable {
    case inactive
    case active
}
