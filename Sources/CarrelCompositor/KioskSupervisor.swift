import CarrelCore
import CarrelShim
import Logging

/// Single App Mode's effects: measures how long each run of the app lived,
/// asks `RelaunchSchedule` what to do about its exit, and arms a
/// wl_event_loop timer to launch it again — or gives up. What the screen shows
/// meanwhile is the Server's business (the kiosk gap), not this type's.
final class KioskSupervisor {
    private var schedule: RelaunchSchedule
    private let display: OpaquePointer
    private let logger: Logger
    private let launch: () throws -> Void
    private let giveUp: (Int32) -> Void
    private var launchedAt: Instant
    private var timer: OpaquePointer?
    /// The status Carrel ends with if it gives up: the last run's, or 1 when
    /// that run exited 0 (giving up is never success).
    private var lastStatus: Int32 = 1

    /// `launch` starts the app again; `giveUp` ends Carrel with a status. The
    /// app's first run was launched just before this is made.
    init(policy: KioskPolicy, display: OpaquePointer, logger: Logger,
         launch: @escaping () throws -> Void, giveUp: @escaping (Int32) -> Void) {
        schedule = RelaunchSchedule(policy: policy)
        self.display = display
        self.logger = logger
        self.launch = launch
        self.giveUp = giveUp
        launchedAt = AssessmentService.now()
        logger.notice("kiosk: Single App Mode on: relaunching the app up to \(schedule.maximumRelaunches) times in a row, back-off \(Self.seconds(schedule.initialBackoff)) doubling to \(Self.seconds(schedule.maximumBackoff))")
    }

    /// The app exited or was killed.
    func appExited(_ exit: AppExit) {
        lastStatus = exit.carrelExitStatus == 0 ? 1 : exit.carrelExitStatus
        decide(lived: AssessmentService.now().duration(since: launchedAt), why: exit.description)
    }

    private func decide(lived: Duration, why: String) {
        switch schedule.appExited(lived: lived) {
        case .relaunch(let delay, let attempt):
            logger.notice("kiosk: app ended (\(why)) after \(Self.seconds(lived)); relaunching in \(Self.seconds(delay)) (relaunch \(attempt) of at most \(schedule.maximumRelaunches) in a row)")
            arm(after: delay)
        case .giveUp(let relaunches):
            logger.error("kiosk: giving up: the app ended (\(why)) within \(Self.seconds(schedule.stabilityWindow)) of launch after \(relaunches) relaunches in a row; exiting with status \(lastStatus)")
            giveUp(lastStatus)
        }
    }

    private func arm(after delay: Duration) {
        if timer == nil {
            let loop = wl_display_get_event_loop(display)
            timer = wl_event_loop_add_timer(loop, { data in
                Unmanaged<KioskSupervisor>.fromOpaque(data!).takeUnretainedValue().relaunch()
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        guard let timer else {
            logger.error("kiosk: could not create a timer; giving up")
            giveUp(lastStatus)
            return
        }
        let (seconds, attoseconds) = delay.components
        // 0 would disarm the timer.
        let milliseconds = max(1, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        wl_event_source_timer_update(timer, milliseconds)
    }

    private func relaunch() {
        launchedAt = AssessmentService.now()
        do {
            try launch()
        } catch {
            // A launch that fails counts as a run that died at once.
            lastStatus = 1
            decide(lived: .zero, why: "could not launch: \(error)")
        }
    }

    /// Carrel is shutting down: no more relaunches.
    func cancel() {
        if let timer { wl_event_source_remove(timer) }
        timer = nil
    }

    /// "1.250s": durations in log lines.
    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let millis = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)s"
    }
}
