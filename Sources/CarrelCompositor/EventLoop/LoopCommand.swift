import CarrelShim
import CarrelSystem
import Glibc

/// A helper program (nft) run from the event loop without waiting for it:
/// started at once, its output read as the loop hears it, reaped when it
/// has closed its output and ended, and killed at `timeout`. `done` runs
/// once, on the loop, with the result or why there is none; `cancel()`
/// before that kills the program and drops the result.
///
/// While it runs its pid is in `LoopCommand.running`, so that Carrel, its
/// subreaper, never takes it for an orphan to end.
final class LoopCommand {
    /// The pids of the commands now running (the loop's thread only).
    private(set) static var running: Set<pid_t> = []

    private let started: BoundedCommand.Started
    private let timeout: Double
    private var done: ((Result<BoundedCommand.Result, BoundedCommand.Failure>) -> Void)?
    private var sources: [Int32: EventLoopFDSource] = [:]
    private var output: [UInt8] = []
    private var errors: [UInt8] = []
    private var timer: EventLoopTimer?
    private var reapTimer: EventLoopTimer?
    private let deadline: Double

    /// Starts `argv`; a program that cannot be started is reported through
    /// `done` from the loop too, never before this returns.
    static func start(_ argv: [String], input: String = "", timeout: Double, loop: OpaquePointer,
                      done: @escaping (Result<BoundedCommand.Result, BoundedCommand.Failure>) -> Void) -> LoopCommand? {
        let started: BoundedCommand.Started
        do {
            started = try BoundedCommand.start(argv, input: input)
        } catch {
            if let later = LaterCall(loop: loop, { done(.failure(error)) }) {
                later.arm()
            } else {
                done(.failure(error))  // no timer to be called from: now, rather than never
            }
            return nil
        }
        return LoopCommand(started, timeout: timeout, loop: loop, done: done)
    }

    private init(_ started: BoundedCommand.Started, timeout: Double, loop: OpaquePointer,
                 done: @escaping (Result<BoundedCommand.Result, BoundedCommand.Failure>) -> Void) {
        self.started = started
        self.timeout = timeout
        self.done = done
        deadline = monotonicSeconds() + timeout
        Self.running.insert(started.pid)
        for fd in [started.stdout, started.stderr] {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            sources[fd] = EventLoopFDSource(loop: loop, fd: fd) { [unowned self] _ in readable(fd) }
        }
        timer = EventLoopTimer(loop: loop) { [unowned self] in expire() }
        reapTimer = EventLoopTimer(loop: loop) { [unowned self] in reap() }
        timer?.arm(after: .milliseconds(Int64(timeout * 1000)))
        if sources.values.count != 2 || timer == nil || reapTimer == nil {
            // No loop source (out of fds): bounded in place rather than never heard.
            reapTimer?.arm(after: .milliseconds(1))
        }
    }

    private func readable(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return }
        if count <= 0 {
            sources.removeValue(forKey: fd)?.cancel()
            close(fd)
            if sources.isEmpty { reap() }
            return
        }
        if fd == started.stdout { output += buffer[0..<count] } else { errors += buffer[0..<count] }
        // The command's output is a table listing: bounded like the files Carrel reads.
        if output.count + errors.count > Self.outputLimit { expire() }
    }

    /// Both pipes closed: the program has ended or is about to.
    private func reap() {
        guard done != nil else { return }
        var status: Int32 = 0
        if waitpid(started.pid, &status, WNOHANG) == started.pid {
            finish(.success(BoundedCommand.result(status: status, output: output, errors: errors)))
        } else if monotonicSeconds() >= deadline {
            expire()
        } else {
            reapTimer?.arm(after: .milliseconds(2))
        }
    }

    private func expire() {
        guard done != nil else { return }
        kill(started.pid, SIGKILL)
        var status: Int32 = 0
        waitpid(started.pid, &status, 0)  // SIGKILL: it ends now
        finish(.failure(.timedOut(started.program, timeout)))
    }

    private func finish(_ result: Result<BoundedCommand.Result, BoundedCommand.Failure>) {
        let done = self.done
        self.done = nil
        release()
        done?(result)
    }

    private func release() {
        Self.running.remove(started.pid)
        for (fd, source) in sources {
            source.cancel()
            close(fd)
        }
        sources.removeAll()
        timer?.cancel()
        reapTimer?.cancel()
    }

    /// Kills the program and drops its result.
    func cancel() {
        guard done != nil else { return }
        done = nil
        kill(started.pid, SIGKILL)
        var status: Int32 = 0
        waitpid(started.pid, &status, 0)
        release()
    }

    deinit { cancel() }

    private static let outputLimit = 16 << 20
}

/// A closure run once from the loop, soon (a one-shot timer that keeps
/// itself until it has fired).
final class LaterCall {
    private var timer: EventLoopTimer?
    private var keep: LaterCall?
    private let body: () -> Void

    init?(loop: OpaquePointer, _ body: @escaping () -> Void) {
        self.body = body
        timer = EventLoopTimer(loop: loop) { [unowned self] in fire() }
        if timer == nil { return nil }
    }

    func arm() {
        keep = self
        timer?.arm(after: .milliseconds(1))
    }

    private func fire() {
        let body = self.body
        timer?.cancel()
        keep = nil
        body()
    }
}
