/// What a person (or a script) asks the demo exam to do.
public enum ExamAction: Hashable, Sendable {
    /// Lock the machine and start (from the start or error screen).
    case begin
    /// Pick a choice (0-based) for the question shown.
    case choose(Int)
    /// Type text into the free-text question shown, as an input method's commit would.
    case write(String)
    case next
    case previous
    /// Hand in and unlock (or, while locking, withdraw).
    case end
    /// Leave the app (only when no session is pending or active).
    case quit
}

/// Raw input as values: the window turns Wayland events into these.
public enum ExamInput: Hashable, Sendable {
    /// A key: one of ``editingKeys`` by name, or else the text the key types
    /// ("b", "B", "3", "é"). On a free-text question text goes into the
    /// field; elsewhere "1"…"4", "b", "e", "n", "p", "q" are shortcuts.
    case key(String)
    /// A primary-button click at window coordinates.
    case click(x: Double, y: Double)

    /// Keys that are named, not typed.
    public static let editingKeys: Set<String> = [
        "enter", "return", "escape", "backspace", "delete", "left", "right", "home", "end", "tab",
    ]
}

extension ExamAction {
    /// The action a key stands for on `screen`, if any.
    public init?(key: String, on screen: ExamFlow.Screen) {
        switch key.lowercased() {
        case "1", "2", "3", "4":
            self = .choose(Int(key)! - 1)
        case "enter", "return":
            switch screen {
            case .start: self = .begin
            case .question: self = .next
            default: return nil
            }
        case "b": self = .begin
        case "e": self = .end
        case "n", "right": self = .next
        case "p", "left": self = .previous
        case "q", "escape": self = .quit
        default: return nil
        }
    }
}
