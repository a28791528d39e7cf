/// The seat's one input method: which client Carrel listens to, whether it
/// holds the keyboard grab, and when to launch it again after it died.
///
/// wlroots lets any number of clients bind the input-method global; Carrel
/// pays attention to the first live one of the input-method role only, so a
/// second engine (or a hostile client that reached the socket) cannot take
/// over the composition of the focused window.
public struct InputMethodSeat: Sendable, Equatable {
    /// The input method Carrel listens to.
    public private(set) var engine: ClientID?
    /// The engine holds the keyboard grab: keys for a window that may
    /// compose go to it first.
    public private(set) var keyboardGrabbed = false
    /// When the engine dies: relaunched with a doubling back-off, given up
    /// after ten quick deaths in a row (the exam goes on without it).
    public private(set) var relaunches = RelaunchSchedule(policy: KioskPolicy(
        enabled: true, maximumRelaunches: 10, initialBackoff: .milliseconds(250),
        maximumBackoff: .seconds(8), stabilityWindow: .seconds(30)))
    private var launchedAt: Instant?
    /// Whether the running engine was launched with its own prediction on
    /// (nil: not running).
    public private(set) var launchedWithPrediction: Bool?
    /// The engine is on its way (launched, restarting, relaunching after a
    /// death, or its grab released while it lives) and has not taken the
    /// keyboard since: keys for a window that would compose wait for it
    /// (`KeysAwaitingEngine`). Cleared by the grab, by giving up, and when
    /// held keys outlived their bound (until the engine next shows life).
    public internal(set) var awaitingEngine = false
    /// Relaunching was given up; a disconnect then means nobody comes back.
    private var givenUp = false
    /// The prediction setting an engine the privileged helper is still
    /// starting was asked with (nil: no start in flight). Carrel does not
    /// wait for the helper's answer; until it comes the engine is on its way.
    public private(set) var startingWithPrediction: Bool?
    /// Keys held while the engine is away.
    public internal(set) var heldKeys = KeysAwaitingEngine()
    /// Keys sent to the engine it has not answered yet.
    public internal(set) var inEngine = KeysInEngine()

    public init() {}

    /// An input method bound the global: true when it is the one Carrel
    /// listens to (the role's first live one), false when it must be told
    /// it is unavailable.
    public mutating func bound(_ client: ClientID, role: Role) -> Bool {
        guard role == .inputMethod, engine == nil || engine == client else { return false }
        engine = client
        return true
    }

    /// The engine asked for the keyboard grab; false for anyone else or a
    /// second grab (refused: one grab per engine).
    public mutating func grabRequested(by client: ClientID) -> Bool {
        guard client == engine, !keyboardGrabbed else { return false }
        keyboardGrabbed = true
        awaitingEngine = false
        return true
    }

    /// The grab was released (or its resource destroyed). The engine lives
    /// and may grab again at once (fcitx5 does so when reactivated): keys
    /// wait for it, within the bound.
    public mutating func grabReleased(by client: ClientID) {
        guard client == engine, keyboardGrabbed else { return }
        keyboardGrabbed = false
        awaitingEngine = true
    }

    /// Carrel launched the engine's process, its prediction on or off.
    public mutating func launched(now: Instant, prediction: Bool) {
        launchedAt = now
        launchedWithPrediction = prediction
        givenUp = false
        awaitingEngine = true
    }

    /// Carrel asked the privileged helper to start the engine with
    /// `prediction`: it is on its way, as when launched.
    public mutating func starting(prediction: Bool) {
        startingWithPrediction = prediction
        awaitingEngine = true
    }

    /// The helper answered the start: the setting it was asked with, or nil
    /// when no start was in flight (an answer that is not ours). The start
    /// is no longer in flight either way.
    public mutating func startAnswered() -> Bool? {
        defer { startingWithPrediction = nil }
        return startingWithPrediction
    }

    /// Carrel is replacing the engine (its prediction setting changed).
    public mutating func restarting() {
        awaitingEngine = true
    }

    /// The engine's process ended: when to launch it again, or nil to give up.
    public mutating func processEnded(now: Instant) -> RelaunchSchedule.Decision {
        let lived = launchedAt.map { now.duration(since: $0) } ?? .zero
        launchedAt = nil
        launchedWithPrediction = nil
        let decision = relaunches.appExited(lived: lived)
        if case .giveUp = decision {
            givenUp = true
            awaitingEngine = false
        } else {
            awaitingEngine = true
        }
        return decision
    }

    /// The client went away: true when it was the engine (its grab goes with it).
    public mutating func gone(_ client: ClientID) -> Bool {
        guard client == engine else { return false }
        engine = nil
        keyboardGrabbed = false
        // Killed or crashed: relaunched unless Carrel gave up on it (the
        // exit may be reaped before or after its connection closes).
        awaitingEngine = !givenUp
        return true
    }
}
