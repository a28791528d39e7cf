/// Whether the next output frame waits for the composing window to redraw.
///
/// A composed key changes two windows: the app redraws its preedit, and the
/// engine redraws its candidate popup, a millisecond or two apart. On a
/// backend with no vertical blank to wait for (nested X11) each redraw would
/// be its own frame: two renders for every key. After Carrel relays
/// composed text to the app, frames wait for the app's redraw, never longer
/// than `limit`, so both changes reach the screen in one frame. The app's
/// glyph is not delayed: its redraw is what lets the frame go.
///
/// A wait's deadline never moves, and once a wait ended the next frame goes
/// before another can begin: an engine relaying without pause delays each
/// frame by at most `limit`, never starves the screen.
///
/// ```swift
/// var hold = CompositionFrameHold()
/// hold.relayed(at: now)                 // preedit sent to the app
/// hold.holds(at: now)                   // true: the popup's redraw waits
/// hold.release()                        // the app committed: render both
/// hold.frameRendered()                  // the next relay may wait again
/// ```
public struct CompositionFrameHold: Sendable, Equatable {
    /// The longest a frame waits: half a 60 Hz frame period, so an app slow
    /// to redraw costs the popup at most that, and the app nothing.
    public static let limit: Duration = .milliseconds(8)

    private enum State: Sendable, Equatable {
        case idle
        case waiting(until: Instant)
        /// The wait ended; the next frame goes whatever is relayed.
        case frameOwed
    }

    private var state = State.idle

    public init() {}

    /// When a running wait ends by itself (for the compositor's timer).
    public var deadline: Instant? {
        if case .waiting(let until) = state { return until }
        return nil
    }

    /// Composed text (preedit, commit or deletion) went to the app at `now`.
    /// Starts a wait unless one is running or a frame is owed; returns
    /// whether one began (the compositor then arms a timer for `deadline`).
    @discardableResult
    public mutating func relayed(at now: Instant) -> Bool {
        guard state == .idle else { return false }
        state = .waiting(until: now.advanced(by: Self.limit))
        return true
    }

    /// The composing window redrew, composition ended, or the engine or the
    /// app went away: frames go.
    public mutating func release() {
        if case .waiting = state { state = .frameOwed }
    }

    /// Whether a frame due at `now` waits.
    public func holds(at now: Instant) -> Bool {
        guard case .waiting(let until) = state else { return false }
        return now < until
    }

    /// A frame went out (or had nothing to draw): the next relay may wait.
    public mutating func frameRendered() {
        state = .idle
    }
}
