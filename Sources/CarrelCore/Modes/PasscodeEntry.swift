/// Guided Access's on-screen passcode entry, opened at the machine with the
/// policy's `guided_access.unlock_keys` while a lock holds. It takes every
/// key until Enter (check the passcode) or Escape (close); nothing typed
/// reaches the app, and the screen shows one dot per character, never the
/// characters. Pure: the compositor turns key presses into `Key`s and does
/// what the answer says.
public struct PasscodeEntry: Sendable, Equatable {
    /// A key press, as the compositor resolved it with xkbcommon.
    public enum Key: Sendable, Equatable {
        case text(String)
        case backspace
        case enter
        case escape
        /// Anything else (a bare modifier, a function key): ignored.
        case other

        /// The key for an xkb keysym and the text xkbcommon gives for it.
        public init(keysym: UInt32, text: String) {
            switch keysym {
            case 0xff0d, 0xff8d: self = .enter  // Return, KP_Enter
            case 0xff1b: self = .escape
            case 0xff08: self = .backspace
            default: self = text.isEmpty ? .other : .text(text)
            }
        }
    }

    public enum Action: Sendable, Equatable {
        /// Redraw the prompt with this text.
        case show(String)
        /// Check this passcode (the entry stays open until told the result).
        case submit(String)
        /// Close the prompt; nothing to check.
        case close
    }

    public static let maximumLength = 128

    public private(set) var isOpen = false
    private var typed: [Character] = []
    private var note: String?

    public init() {}

    /// The unlock keys were pressed during a lock: open an empty entry.
    public mutating func open() -> Action {
        isOpen = true
        typed = []
        note = nil
        return .show(prompt)
    }

    /// A key while the entry is open.
    public mutating func key(_ key: Key) -> Action? {
        guard isOpen else { return nil }
        switch key {
        case .text(let text):
            let printable = text.filter { !$0.isNewline && $0.unicodeScalars.allSatisfy { $0.properties.generalCategory != .control } }
            guard !printable.isEmpty, typed.count + printable.count <= Self.maximumLength else { return nil }
            typed.append(contentsOf: printable)
            return .show(prompt)
        case .backspace:
            guard !typed.isEmpty else { return nil }
            typed.removeLast()
            return .show(prompt)
        case .enter:
            guard !typed.isEmpty else { return nil }
            let passcode = String(typed)
            typed = []
            return .submit(passcode)
        case .escape:
            close()
            return .close
        case .other:
            return nil
        }
    }

    /// The checked passcode was refused (wrong, or too soon): show why and
    /// let the person try again.
    public mutating func refused(_ message: String) -> Action? {
        guard isOpen else { return nil }
        note = message
        return .show(prompt)
    }

    /// The lock ended (unlocked, here or by `carrelctl unlock`): close.
    public mutating func close() {
        isOpen = false
        typed = []
        note = nil
    }

    /// What the prompt says: one dot per typed character, never the characters.
    public var prompt: String {
        let dots = String(repeating: "\u{25CF}", count: typed.count)
        let base = "Guided Access: enter the passcode, then Enter (Escape closes): \(dots.isEmpty ? "_" : dots)"
        return note.map { "\(base)  (\($0))" } ?? base
    }
}
