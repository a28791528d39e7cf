import CarrelCore
import CarrelSystem
import Glibc

/// Stopping the app that owned a force-ended session (`carrelctl end
/// --force`): it is given `notice` to hear `ended` and exit by itself, then
/// SIGTERM, then SIGKILL once `grace` has passed if it is still there.
/// Unlike `AppProcess.terminate` it never blocks the event loop, and it
/// works for any client's process, not only the one Carrel launched: the
/// owner may be a child of the app.
///
/// A pid alone could name another process by the time a timer fires, so the
/// process is recognised by its pid and its start time (`ProcessTable`);
/// a process that is gone or not the same is left alone.
/// An app the privileged helper started is Carrel's neither by pid nor as a
/// child: it is signalled through the helper, by the id the helper gave it.
final class AppStop {
    let pid: pid_t
    private var startTime: UInt64 = 0
    /// Set when the app is the privileged helper's program.
    private var program: HelperLaunchedApp?
    private let grace: Duration
    private var timer: EventLoopTimer?
    private var terminated = false
    private let record: (String) -> Void
    /// Called once the stop is over (killed or found gone), so the owner can drop it.
    var finished: ((AppStop) -> Void)?

    /// Arms the stop of `pid`; nil (with the reason given to `record`) when
    /// there is no such process to stop.
    init?(pid: pid_t, notice: Duration, grace: Duration, loop: OpaquePointer, record: @escaping (String) -> Void) {
        self.pid = pid
        self.grace = grace
        self.record = record
        guard pid > 1, pid != getpid() else {
            // A client on a socket pair Carrel made shows Carrel's own pid.
            record("no process to stop: the client's pid \(pid) is \(pid == getpid() ? "Carrel's own" : "not an app's")")
            return nil
        }
        guard let startTime = ProcessTable.entry(pid)?.startTime else {
            record("no process to stop: pid \(pid) is not running")
            return nil
        }
        self.startTime = startTime
        timer = EventLoopTimer(loop: loop) { [unowned self] in fire() }
        guard let timer else {
            // No timer (out of resources): no notice and no grace, but it is stopped.
            kill(pid, SIGKILL)
            record("no timer for the grace period (out of resources): SIGKILL sent to pid \(pid) at once")
            return
        }
        timer.arm(after: notice)
    }

    /// Stops `program`, which the privileged helper started.
    init?(program: HelperLaunchedApp, notice: Duration, grace: Duration, loop: OpaquePointer, record: @escaping (String) -> Void) {
        pid = 0
        self.program = program
        self.grace = grace
        self.record = record
        guard !program.hasExited else {
            record("no process to stop: helper program \(program.id) has exited")
            return nil
        }
        timer = EventLoopTimer(loop: loop) { [unowned self] in fire() }
        guard let timer else {
            record("no timer for the grace period (out of resources): SIGKILL sent to helper program \(program.id) at once")
            _ = program.signal(.kill) { why in record("could not send SIGKILL to helper program \(program.id): \(why)") }
            return
        }
        timer.arm(after: notice)
    }

    private var name: String { program.map { "helper program \($0.id)" } ?? "pid \(pid)" }

    private var isGone: Bool {
        if let program { return program.hasExited }
        guard let entry = ProcessTable.entry(pid) else { return true }
        return entry.startTime != startTime || entry.isZombie
    }

    /// nil when sent, else why not. Through the helper its answer is not
    /// waited for: a SIGTERM the helper could not send ends the stop when
    /// it says so, as one that failed at once does.
    private func send(_ signal: PrivilegedRequest.StopSignal) -> String? {
        if let program {
            return program.signal(signal) { [weak self] why in
                guard let self, signal == .term, timer != nil else { return }
                record("could not send SIGTERM to \(name): \(why)")
                end()
            }
        }
        return kill(pid, signal == .term ? SIGTERM : SIGKILL) == 0 ? nil : SystemError.current
    }

    private func fire() {
        guard !isGone else {
            record("\(name) exited by itself\(terminated ? " after SIGTERM" : "")")
            end()
            return
        }
        if !terminated {
            terminated = true
            if let failure = send(.term) {
                record("could not send SIGTERM to \(name): \(failure)")
                end()
                return
            }
            record("SIGTERM sent to \(name); SIGKILL in \(grace.secondsText) if it is still running")
            timer?.arm(after: grace)
            return
        }
        _ = send(.kill)
        record("\(name) still running \(grace.secondsText) after SIGTERM: SIGKILL sent")
        end()
    }

    private func end() {
        cancel()
        finished?(self)
    }

    /// Ends the wait without a signal (Carrel is stopping).
    func cancel() {
        timer?.cancel()
        timer = nil
    }
}
