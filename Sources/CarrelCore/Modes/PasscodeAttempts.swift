/// Rate limiting of Guided Access passcode attempts: a few free tries, then a
/// wait that doubles with every further wrong passcode, up to a ceiling. A
/// right passcode resets it. Pure: the compositor passes the time and whether
/// the passcode matched; this decides whether the attempt may be checked at
/// all and what to log.
///
/// ```swift
/// var attempts = PasscodeAttempts()
/// attempts.admit(at: now)            // .allowed
/// attempts.record(success: false, at: now)
/// ```
public struct PasscodeAttempts: Sendable, Equatable {
    /// Wrong passcodes in a row allowed without waiting.
    public var freeAttempts: Int
    /// The first wait after the free attempts are spent; doubles after that.
    public var initialDelay: Duration
    public var maximumDelay: Duration

    /// Wrong passcodes since the last right one.
    public private(set) var consecutiveFailures = 0
    /// Every wrong passcode ever, for the log and `carrelctl status`.
    public private(set) var totalFailures = 0
    /// No attempt is checked before this instant.
    public private(set) var lockedUntil: Instant?

    public enum Admission: Sendable, Equatable {
        case allowed
        /// Too many wrong passcodes: try again after this long.
        case tooSoon(retryAfter: Duration)
    }

    public init(freeAttempts: Int = 3, initialDelay: Duration = .seconds(30), maximumDelay: Duration = .seconds(15 * 60)) {
        self.freeAttempts = freeAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// Whether an attempt at `now` may be checked. A refused attempt is not
    /// counted (the passcode is never looked at).
    public func admit(at now: Instant) -> Admission {
        guard let until = lockedUntil, now < until else { return .allowed }
        return .tooSoon(retryAfter: .nanoseconds(Int64(until.nanoseconds - now.nanoseconds)))
    }

    /// Records the result of a checked attempt.
    public mutating func record(success: Bool, at now: Instant) {
        if success {
            consecutiveFailures = 0
            lockedUntil = nil
            return
        }
        consecutiveFailures += 1
        totalFailures += 1
        let beyond = consecutiveFailures - freeAttempts
        guard beyond >= 0 else { return }
        var delay = initialDelay
        for _ in 0..<min(beyond, 32) where delay < maximumDelay { delay *= 2 }
        lockedUntil = now.advanced(by: min(delay, maximumDelay))
    }
}
