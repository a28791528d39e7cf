import CarrelCore
import Logging

/// One kind of per-session deadline (presentation, time limit, confirmation,
/// banner): at most one `EventLoopTimer` per session, armed for an instant.
final class SessionTimers {
    private let loop: OpaquePointer
    private let name: String
    private let logger: Logger
    private var timers: [SessionID: EventLoopTimer] = [:]
    /// Timers that fired: kept until no callback runs, since a timer must
    /// not be freed from inside its own callback.
    private var spent: [EventLoopTimer] = []
    private var firing = false

    init(loop: OpaquePointer, name: String, logger: Logger) {
        self.loop = loop
        self.name = name
        self.logger = logger
    }

    /// Fires `fire` once at `deadline` (at once if it has passed), replacing
    /// any earlier timer of this kind for `id`. The timer is spent when it fires.
    func arm(_ id: SessionID, at deadline: Instant, now: Instant, fire: @escaping () -> Void) {
        disarm(id)
        guard let timer = EventLoopTimer(loop: loop, { [weak self] in
            guard let self else { return }
            firing = true
            defer { firing = false }
            if let timer = timers.removeValue(forKey: id) {
                timer.cancel()
                spent.append(timer)
            }
            fire()
        }) else {
            logger.error("assessment: could not create the \(name) timer for \(id)")
            return
        }
        timers[id] = timer
        timer.arm(after: deadline.duration(since: now))
    }

    func disarm(_ id: SessionID) {
        timers.removeValue(forKey: id)?.cancel()
        if !firing { spent.removeAll() }
    }

    func isArmed(_ id: SessionID) -> Bool { timers[id] != nil }

    func cancelAll() {
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
        if !firing { spent.removeAll() }
    }
}
