/// A point on the compositor's monotonic clock (CLOCK_MONOTONIC), in
/// nanoseconds.
///
/// Core never reads a clock: the compositor passes `now` into every decision
/// that depends on time and arms real timers for the deadlines Core returns.
/// Tests pass whatever instants they like, so time limits and bounded waits
/// are tested without sleeping.
///
/// ```swift
/// let start = Instant(nanoseconds: 1_000)
/// start.advanced(by: .seconds(3))      // 3_000_001_000 ns
/// start.advanced(bySeconds: 60)        // a time limit's deadline
/// ```
public struct Instant: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    public static let zero = Instant(nanoseconds: 0)

    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }

    /// This instant moved by `duration`; saturates instead of trapping, since
    /// a deadline far in the future is as good as "never".
    public func advanced(by duration: Duration) -> Instant {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (delta, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow || overflow2 { return seconds < 0 ? .zero : Instant(nanoseconds: .max) }
        if delta >= 0 {
            let (sum, over) = nanoseconds.addingReportingOverflow(UInt64(delta))
            return Instant(nanoseconds: over ? .max : sum)
        }
        let magnitude = delta.magnitude
        return Instant(nanoseconds: nanoseconds > magnitude ? nanoseconds - magnitude : 0)
    }

    /// This instant moved by whole seconds, the unit of the protocol's time limit.
    public func advanced(bySeconds seconds: UInt32) -> Instant {
        advanced(by: .seconds(Int64(seconds)))
    }

    /// How long after `earlier` this instant is; zero if it is not later.
    public func duration(since earlier: Instant) -> Duration {
        guard nanoseconds > earlier.nanoseconds else { return .zero }
        return .nanoseconds(Int64(clamping: nanoseconds - earlier.nanoseconds))
    }

    public var description: String {
        let millis = nanoseconds / 1_000_000
        return "t=\(millis / 1000).\(String(millis % 1000).leftPadded(to: 3))s"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
