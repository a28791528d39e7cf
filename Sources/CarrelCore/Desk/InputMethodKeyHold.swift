/// A key as the compositor must hand it on later: its evdev code, press or
/// release, the keyboard's timestamp and the modifiers in effect when it
/// was typed (xkbcommon's masks). Core never interprets it; it carries it
/// so a held key is replayed exactly as it was typed.
public struct KeyStroke: Sendable, Hashable, CustomStringConvertible {
    public var keycode: UInt32
    public var pressed: Bool
    public var time: UInt32
    public var modifiers: Modifiers

    /// The keyboard's modifier state, as wl_keyboard.modifiers carries it.
    public struct Modifiers: Sendable, Hashable {
        public var depressed: UInt32
        public var latched: UInt32
        public var locked: UInt32
        public var group: UInt32

        public init(depressed: UInt32 = 0, latched: UInt32 = 0, locked: UInt32 = 0, group: UInt32 = 0) {
            self.depressed = depressed
            self.latched = latched
            self.locked = locked
            self.group = group
        }
    }

    public init(keycode: UInt32, pressed: Bool, time: UInt32, modifiers: Modifiers = Modifiers()) {
        self.keycode = keycode
        self.pressed = pressed
        self.time = time
        self.modifiers = modifiers
    }

    public var description: String { "\(pressed ? "press" : "release") \(keycode) at \(time)" }
}

/// Where held keys go when they are let go.
public enum HeldKeyDestination: Sendable, Hashable, CustomStringConvertible {
    /// The engine's keyboard grab, composing for this window (the one the
    /// keys were typed in).
    case inputMethod(WindowID)
    /// This window's keyboard, as plain keys (the window that had focus
    /// when they were typed).
    case window(WindowID)

    public var description: String {
        switch self {
        case .inputMethod(let window): return "the input method for \(window)"
        case .window(let window): return "\(window) as plain keys"
        }
    }
}

/// Keys typed for a window that would compose while the engine is starting,
/// restarting or gone: held in order, for at most `limit`, then given to the
/// engine when its keyboard grab is back, or to the window as plain keys.
///
/// Without it a key typed in that gap reached nobody (the grab was gone, so
/// nothing read it) — on a loaded machine foot got '어' for '한국어'. Every
/// held key leaves exactly once, in order, through one `release`.
///
/// All held keys share one window: the queue is let go (as plain keys, to
/// that window) before focus or the composition target moves, so a key is
/// always delivered to the window that had focus when it was typed.
public struct KeysAwaitingEngine: Sendable, Equatable {
    /// The longest a key waits for the engine. Long enough for fcitx5 to
    /// start on a busy machine (about 0.3 s idle), short enough that a
    /// student whose engine never comes back sees their typing soon.
    public static let limit: Duration = .seconds(2)

    /// The window the held keys were typed in.
    public private(set) var window: WindowID?
    public private(set) var keys: [KeyPress] = []
    /// When the first held key was typed (the bound counts from it).
    public private(set) var since: Instant?

    public init() {}

    public var isEmpty: Bool { keys.isEmpty }

    /// When the held keys must be let go, nil when none are held.
    public var deadline: Instant? { since.map { $0.advanced(by: Self.limit) } }

    /// Holds `keys` ahead of any held already (what a dead engine had not
    /// answered comes before what was typed since). True when the queue was
    /// empty (the caller arms the deadline).
    public mutating func holdFirst(_ earlier: [KeyPress], for window: WindowID, now: Instant) -> Bool {
        guard !earlier.isEmpty else { return false }
        precondition(keys.isEmpty || self.window == window, "held keys are let go before their window changes")
        keys = earlier + keys
        self.window = window
        guard since == nil else { return false }
        since = now
        return true
    }

    /// Holds `key`, typed for `window`. True when it is the first one held
    /// (the caller arms the deadline).
    public mutating func hold(_ key: KeyPress, for window: WindowID, now: Instant) -> Bool {
        precondition(keys.isEmpty || self.window == window, "held keys are let go before their window changes")
        keys.append(key)
        self.window = window
        guard since == nil else { return false }
        since = now
        return true
    }

    /// Every held key, in order, emptying the queue.
    public mutating func release() -> (window: WindowID, keys: [KeyPress])? {
        guard let window, !keys.isEmpty else { return nil }
        defer { self = KeysAwaitingEngine() }
        return (window, keys)
    }
}

/// Keys handed to the engine that it has not answered yet: what a killed
/// engine took with it. input-method-v2 has no acknowledgement, so an answer
/// is counted: fcitx5 answers each key press it is sent with one commit
/// that changes what the text input shows (`commitAnswersKey`) or one key
/// on its virtual keyboard (a key it does not consume), and passes on the
/// releases of keys it does not consume. It also commits when nothing
/// changes: an empty preedit before each key it passes on (hangul redraws
/// its panel for every press), the preedit it ends as committed text before
/// a key it passes on, an empty preedit when it is activated. Those answer
/// nothing: counted, each key passed on settled two presses, and a kill
/// while the engine had a backlog lost the keys it had not read yet.
/// Each answer settles the oldest key of its kind (see `answered`). When the engine goes, what is left is given to
/// its successor, so a key the dead engine never read is typed once, by the
/// next one. A key that gets no answer is taken as read after `limit`, once
/// the engine has been quiet that long too: an engine still answering is
/// working through a backlog (many keys given at once to an engine just
/// started, on a loaded machine), and what it has not answered it has not
/// read yet.
public struct KeysInEngine: Sendable, Equatable {
    /// A key sent, the window it was sent for (the composition target
    /// then) and when.
    public struct Sent: Sendable, Equatable {
        public var key: KeyPress
        public var window: WindowID
        var at: Instant
    }

    public private(set) var sent: [Sent] = []
    /// Answers still due for presses given away (`giveAway`): skipped, so
    /// they settle nothing sent since.
    private var answersToSkip = 0
    /// When the engine last answered a key (nil: not yet).
    private var lastAnswer: Instant?

    public init() {}

    public var keys: [KeyPress] { sent.map(\.key) }

    /// `keys` were sent to the engine for `window`.
    public mutating func sent(_ keys: [KeyPress], for window: WindowID, now: Instant) {
        // Keys older than the bound that got no answer were read silently,
        // unless the engine answered since (it is still working through them).
        while let first = sent.first, now.duration(since: max(first.at, lastAnswer ?? first.at)) > KeysAwaitingEngine.limit {
            sent.removeFirst()
        }
        sent += keys.map { Sent(key: $0, window: window, at: now) }
    }

    /// The engine answered a press: the oldest unanswered press, and any
    /// releases before it (read silently with their composed presses), are
    /// settled. It passed a release on: the oldest release, if no press is
    /// before it. A release it read silently stays unsettled until the next
    /// press is answered; if the engine dies first it is sent again, which
    /// a client takes as a no-op, where a lost one would leave a key
    /// repeating.
    public mutating func answered(press: Bool, now: Instant) {
        lastAnswer = now
        if press && answersToSkip > 0 {
            answersToSkip -= 1
            return
        }
        let settled: Int
        if press {
            guard let index = sent.firstIndex(where: \.key.pressed) else { return }
            settled = index + 1
        } else {
            guard let first = sent.first, !first.key.pressed else { return }
            settled = 1
        }
        sent.removeFirst(settled)
    }

    /// Whether an engine's commit answers a key: it changes what the text
    /// input shows (`shownPreedit` before it; committed text and the new
    /// preedit after), or deletes text. A commit that only ends the preedit
    /// as the same committed text, or that sends an empty preedit over none,
    /// answers nothing: fcitx5 sends those before passing a key on, whose
    /// key on the virtual keyboard is its answer. (An engine that ends its
    /// preedit on a key it consumes, mozc's Return, leaves that key
    /// unanswered: given to a successor again if it dies within the bound,
    /// which types it twice rather than never.)
    public static func commitAnswersKey(shownPreedit: String, preedit: String, committed: String,
                                        deletes: Bool) -> Bool {
        deletes || committed + preedit != shownPreedit
    }

    /// The engine showed life without answering a key (a commit that
    /// changes nothing): still working through what it was sent.
    public mutating func heard(now: Instant) {
        lastAnswer = now
    }

    /// Every unanswered key, in order, emptying the list (the engine is gone).
    public mutating func takeAll() -> [Sent] {
        defer { self = KeysInEngine() }
        return sent
    }

    /// The unanswered keys sent for `window`, taken to be delivered some
    /// other way; the engine's answers to them, when they come, are skipped.
    public mutating func giveAway(for window: WindowID) -> [KeyPress] {
        let given = sent.filter { $0.window == window }
        sent.removeAll { $0.window == window }
        answersToSkip += given.filter(\.key.pressed).count
        return given.map(\.key)
    }
}
