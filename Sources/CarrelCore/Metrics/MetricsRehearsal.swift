/// A rehearsal of a room's metrics without a room: a script of session
/// transitions, one seat and one step a line, fed to each seat's
/// `SeatMetrics` through the same calls the compositor makes, so the files
/// the room's Prometheus scrapes are the ones real seats would write
/// (`carrel metrics-rehearse`, docs/FLEET.md).
///
/// ```
/// seat001 begin                 # begin accepted: pending
/// seat001 began 3600            # active, with a time limit of 3600 s (0: none)
/// seat001 blocked capture       # a blocked attempt of that audit kind
/// seat001 interrupted integrity # interrupted, by that cause
/// seat001 ended                 # the app ended it: idle
/// seat001 failed                # failed (before began): idle
/// seat001 destroyed             # its client went away: idle
/// seat001 stop                  # Carrel stops: the file is written once more, then goes stale
/// ```
public struct MetricsRehearsal: Sendable {
    /// One line of the script.
    public enum Step: Sendable, Equatable {
        case begin
        case began(timeLimitSeconds: Int64)
        case blocked(kind: String)
        case interrupted(InterruptionReason)
        case ended
        case failed
        case destroyed
        case stop
    }

    /// A seat's name: it becomes a directory, so one plain word.
    public static let maximumSeatName = 64

    /// Parses one line: `SEAT STEP [ARGUMENT]`; nil for an empty line or a comment.
    public static func parse(_ line: Substring) -> Result<(seat: String, step: Step), ControlFailure>? {
        let words = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?
            .split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
        guard let seat = words.first else { return nil }
        guard seat.utf8.count <= maximumSeatName,
              seat.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }) else {
            return .failure(ControlFailure(.badArgument, "\"\(ControlRequest.shown(seat))\" is not a seat name; use letters, digits, - and _ (at most \(maximumSeatName))"))
        }
        let usage = "expected SEAT begin | began SECONDS | blocked KIND | interrupted CAUSE | ended | failed | destroyed | stop"
        guard words.count >= 2 else {
            return .failure(ControlFailure(.badRequest, "\"\(ControlRequest.shown(String(line)))\" names no step; \(usage)"))
        }
        let argument = words.count > 2 ? words[2] : nil
        guard words.count <= 3 else {
            return .failure(ControlFailure(.badArgument, "\"\(ControlRequest.shown(String(line)))\" has words after the step; \(usage)"))
        }
        let step: Step
        switch (words[1], argument) {
        case ("begin", nil): step = .begin
        case ("began", let seconds?):
            guard let value = Int64(seconds), value >= 0 else {
                return .failure(ControlFailure(.badArgument, "began needs a time limit in whole seconds (0: none), not \"\(ControlRequest.shown(seconds))\""))
            }
            step = .began(timeLimitSeconds: value)
        case ("blocked", let kind?):
            guard AuditKind.all.contains(kind) else {
                return .failure(ControlFailure(.badArgument, "\"\(ControlRequest.shown(kind))\" is not a blocked kind; known: \(AuditKind.all.joined(separator: ", "))"))
            }
            step = .blocked(kind: kind)
        case ("interrupted", let cause?):
            guard let reason = InterruptionReason.allCases.first(where: { $0.protocolName == cause }) else {
                return .failure(ControlFailure(.badArgument, "\"\(ControlRequest.shown(cause))\" is not a cause; known: \(InterruptionReason.allCases.map(\.protocolName).joined(separator: ", "))"))
            }
            step = .interrupted(reason)
        case ("ended", nil): step = .ended
        case ("failed", nil): step = .failed
        case ("destroyed", nil): step = .destroyed
        case ("stop", nil): step = .stop
        default:
            return .failure(ControlFailure(.badArgument, "\"\(ControlRequest.shown(String(line)))\" is not a step; \(usage)"))
        }
        return .success((seat, step))
    }

    /// One seat's session as the script has driven it so far.
    public struct Seat: Sendable {
        public private(set) var metrics: SeatMetrics
        private var live: SessionID?
        private var phase: SessionPhase?
        private var deadline: Instant?
        private var nextSession: UInt64 = 1

        public init(metrics: SeatMetrics) { self.metrics = metrics }

        /// Carries out `step` at `now` (monotonic) and `unixNow` (wall clock,
        /// the same moment). Throws when the step cannot happen in the
        /// seat's state (began without begin, ...), changing nothing.
        public mutating func apply(_ step: Step, now: Instant, unixNow: Int64) throws(ControlFailure) {
            switch step {
            case .begin:
                guard live == nil else { throw refusal(step, "a session is live") }
                live = SessionID(nextSession)
                nextSession += 1
                phase = .restricting
                deadline = nil
            case .began(let seconds):
                guard let live, phase == .restricting else { throw refusal(step, "no session is pending") }
                phase = .active
                deadline = seconds > 0 ? now.advanced(by: .seconds(seconds)) : nil
                metrics.record(.began, session: live)
            case .blocked(let kind):
                metrics.blocked(kind)
            case .interrupted(let reason):
                guard let live, phase?.hasBegun == true else { throw refusal(step, "no session has begun") }
                phase = .interrupted(reason)
                metrics.record(.interrupted(reason, message: "rehearsal"), session: live)
            case .ended:
                guard let live, phase?.hasBegun == true else { throw refusal(step, "no session has begun") }
                metrics.record(.ended, session: live)
                self.live = nil
            case .failed:
                guard let live, phase == .restricting else { throw refusal(step, "no session is pending") }
                metrics.record(.failed(.restrictionFailed, message: "rehearsal"), session: live)
                self.live = nil
            case .destroyed:
                guard live != nil else { throw refusal(step, "no session is live") }
                live = nil
            case .stop:
                break
            }
            if live == nil {
                phase = nil
                deadline = nil
            }
            metrics.observe(live: live, phase: phase, timeLimitDeadline: deadline, now: now, unixNow: unixNow)
        }

        private func refusal(_ step: Step, _ why: String) -> ControlFailure {
            ControlFailure(.wrongState, "\(step) cannot happen now: \(why)")
        }
    }
}
