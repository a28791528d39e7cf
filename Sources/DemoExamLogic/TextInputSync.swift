/// When the field's text-input-v3 object is enabled and when it sends its
/// state: enabled while the window has keyboard focus (enter, leave) and a
/// field is shown; the state goes with every enable (enable resets it on
/// the compositor's side) and again whenever it changes, except after a
/// `done` for an older commit, until a current one arrives.
public struct TextInputSync: Hashable, Sendable {
    /// Requests to send, in order, on the text input.
    public enum Request: Hashable, Sendable {
        case enable
        case disable
        /// set_surrounding_text, set_content_type and set_cursor_rectangle (when known).
        case state(TextInputFieldState)
        case commit
    }

    public private(set) var isEnabled = false
    private var hasFocus = false
    private var wanted: TextInputFieldState?
    private var sent: TextInputFieldState?
    private var maySendState = true

    public init() {}

    /// The field shown is now `state` (nil: none is shown).
    public mutating func show(_ state: TextInputFieldState?) -> [Request] {
        wanted = state
        return synchronise()
    }

    /// text-input-v3 enter: the window has keyboard focus.
    public mutating func enter() -> [Request] {
        hasFocus = true
        return synchronise()
    }

    /// text-input-v3 leave: the compositor stops sending; disable ours to match.
    public mutating func leave() -> [Request] {
        hasFocus = false
        return synchronise()
    }

    /// A `done` arrived; `isCurrent` from ``TextInputEvents/done(serial:)``.
    /// Record it before applying the done's update, whose new field state
    /// then goes out if it may; ``synchronise()`` after it sends what was held back.
    public mutating func done(isCurrent: Bool) {
        maySendState = isCurrent
    }

    /// The requests that bring the text input up to date.
    public mutating func synchronise() -> [Request] {
        guard hasFocus, let wanted else {
            guard isEnabled else { return [] }
            isEnabled = false
            sent = nil
            return [.disable, .commit]
        }
        var requests: [Request] = []
        if !isEnabled {
            isEnabled = true
            requests.append(.enable)
        } else if !maySendState || wanted == sent {
            return []
        }
        sent = wanted
        return requests + [.state(wanted), .commit]
    }
}
