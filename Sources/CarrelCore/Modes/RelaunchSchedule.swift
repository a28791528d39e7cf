/// Single App Mode's decision when the app exits: relaunch it after a
/// back-off, or give up. A value that only decides; the compositor measures
/// how long each run lived, arms the timer and spawns.
///
/// The back-off starts at the policy's `initialBackoff` and doubles with each
/// relaunch in a row, up to `maximumBackoff`. A run that lived at least the
/// policy's `stabilityWindow` (30 s built in) was a working app, not a crash
/// loop: it resets the count and the back-off. After `maximumRelaunches`
/// relaunches in a row that each died within the window, the next exit gives up.
///
/// ```swift
/// var schedule = RelaunchSchedule(policy: KioskPolicy(maximumRelaunches: 2))
/// schedule.appExited(lived: .milliseconds(50))  // .relaunch(after: 250 ms, attempt: 1)
/// schedule.appExited(lived: .milliseconds(50))  // .relaunch(after: 500 ms, attempt: 2)
/// schedule.appExited(lived: .milliseconds(50))  // .giveUp(relaunches: 2)
/// ```
public struct RelaunchSchedule: Sendable, Equatable {
    /// What to do about an exit.
    public enum Decision: Sendable, Equatable, CustomStringConvertible {
        /// Launch the app again once `delay` has passed; `attempt` counts the
        /// relaunches since the last stable run, from 1.
        case relaunch(after: Duration, attempt: Int)
        /// Stop: `relaunches` relaunches in a row each died within the window.
        case giveUp(relaunches: Int)

        public var description: String {
            switch self {
            case .relaunch(let delay, let attempt): return "relaunch #\(attempt) after \(delay)"
            case .giveUp(let relaunches): return "give up after \(relaunches) relaunches"
            }
        }
    }

    public let maximumRelaunches: Int
    public let initialBackoff: Duration
    public let maximumBackoff: Duration
    public let stabilityWindow: Duration
    /// Relaunches since the last run that lived through the stability window.
    public private(set) var relaunchesInARow = 0

    public init(policy: KioskPolicy) {
        maximumRelaunches = max(0, policy.maximumRelaunches)
        // A zero or negative back-off would spin; a maximum below the initial
        // one is read as "never more than the initial one".
        initialBackoff = max(policy.initialBackoff, .milliseconds(1))
        maximumBackoff = max(policy.maximumBackoff, initialBackoff)
        stabilityWindow = max(policy.stabilityWindow, .zero)
    }

    /// The app exited (any status, or killed) after running for `lived`.
    public mutating func appExited(lived: Duration) -> Decision {
        if lived >= stabilityWindow { relaunchesInARow = 0 }
        guard relaunchesInARow < maximumRelaunches else {
            return .giveUp(relaunches: relaunchesInARow)
        }
        relaunchesInARow += 1
        return .relaunch(after: backoff(forAttempt: relaunchesInARow), attempt: relaunchesInARow)
    }

    /// initial × 2^(attempt−1), capped at the maximum (no overflow however
    /// many attempts).
    public func backoff(forAttempt attempt: Int) -> Duration {
        var delay = initialBackoff
        var doublings = attempt - 1
        while doublings > 0, delay < maximumBackoff {
            delay = delay * 2
            doublings -= 1
        }
        return min(delay, maximumBackoff)
    }
}
