extension Duration {
    /// Whole milliseconds, rounded down (negative durations toward zero),
    /// saturating: the unit wl_event_loop timers, policy files and log lines
    /// use. The one conversion every caller shares.
    ///
    /// ```swift
    /// Duration.seconds(1.25).wholeMilliseconds   // 1250
    /// ```
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }

    /// "1.250s": how log lines show a duration.
    public var secondsText: String {
        let millis = wholeMilliseconds
        let sign = millis < 0 ? "-" : ""
        let magnitude = millis.magnitude
        let fraction = String(magnitude % 1000)
        return "\(sign)\(magnitude / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)s"
    }
}
