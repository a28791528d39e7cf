import CarrelCore
import CarrelMedia
import CarrelShim
import Glibc

/// `media`: MPRIS players on the session bus are paused at began; one that
/// reports (PropertiesChanged) or is found (each verify) playing during the
/// session is paused again. Nothing is resumed at the end. The players are
/// asked without waiting (a run of asynchronous calls, each bounded at 2 s,
/// answered as the bus's fd wakes the loop), the first pause at apply too
/// (`prepareApply`), so a player slow to answer never holds up the exam's
/// frames, and one that does not answer within the bound fails the begin.
/// The connection at begin does not wait either: the bus daemon's
/// authentication, Hello and AddMatch are answered through the bus's fd like
/// the players, and a daemon silent for 2 s fails the begin.
final class MediaProvider: RestrictionProvider, VerifiedAhead, AppliedAhead {
    let name = ProvidersPolicy.media
    let recoveryToken = ""
    private let address: String?
    private let loop: OpaquePointer
    private let logger: (String) -> Void
    private var connection: OpaquePointer?
    private var source: EventLoopFDSource?
    static let timeoutMicroseconds: UInt64 = 2_000_000

    init(address: String?, loop: OpaquePointer, logger: @escaping (String) -> Void) {
        self.address = address
        self.loop = loop
        self.logger = logger
    }

    /// What the first pause, run ahead of `apply`, came to; taken by `apply`.
    private var prepared: Reading?
    /// The first pause under way: `ready` of `prepareApply`.
    private var firstReady: (() -> Void)?

    /// Connects and watches the bus, then starts pausing every player, none
    /// of it waiting (the calls are queued until the bus daemon has let
    /// Carrel in); `ready` runs on the loop once every player answered or
    /// the run failed (a player silent for 2 s, or the bus daemon silent
    /// for 2 s while connecting).
    /// Already up (an update): nothing to do.
    func prepareApply(_ set: RestrictionSet, _ ready: @escaping () -> Void) {
        prepared = nil
        guard connection == nil else { return later(ready) }
        var error = [CChar](repeating: 0, count: 512)
        do throws(ProviderError) {
            try connect()
        } catch {
            prepared = .failed(error)
            return later(ready)
        }
        guard let connection, carrel_media_pause_start(connection, 1, &error, error.count) == 0 else {
            prepared = .failed(ProviderError(String(cString: error)))
            return later(ready)
        }
        firstReady = ready
        running = .first
        armTimeout()
        watchWrites()
        // sd-bus bounds its calls only once connected (the authentication's
        // own bound is far longer): the connection gets the calls' bound.
        if carrel_media_ready(connection) == 0 {
            connectTimer = EventLoopTimer(loop: loop) { [unowned self] in connectOverdue() }
            connectTimer?.arm(after: .milliseconds(Int64(Self.timeoutMicroseconds / 1000)))
        }
    }

    /// The bus daemon has not let Carrel in within the bound: the first
    /// pause fails (and with it the begin), the connection goes with it.
    private func connectOverdue() {
        guard let connection, case .first? = running, carrel_media_ready(connection) == 0 else { return }
        running = nil
        timeoutTimer?.disarm()
        let seconds = Double(Self.timeoutMicroseconds) / 1_000_000
        finished(.first, .failed(ProviderError("the session bus did not answer within \(seconds) s")), paused: "")
    }

    /// Asks the loop for writability while sd-bus has something queued it
    /// could not write (connecting, or a full socket buffer), readability always.
    private func watchWrites() {
        guard let connection else { return }
        let writable = carrel_media_wants_write(connection) != 0
        source?.watch(UInt32(WL_EVENT_READABLE) | (writable ? UInt32(WL_EVENT_WRITABLE) : 0))
    }

    /// `ready` from the loop, never before `prepareApply` returns.
    private func later(_ ready: @escaping () -> Void) {
        if let call = LaterCall(loop: loop, ready) { call.arm() } else { ready() }
    }

    func discardPrepared() {
        // Not taken by an apply (an earlier provider failed): the connection goes.
        guard prepared != nil || firstReady != nil else { return }
        try? revert()
    }

    func stopAhead() {
        guard firstReady != nil else { return }
        try? revert()
    }

    private func connect() throws(ProviderError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let media = carrel_media_connect(address, Self.timeoutMicroseconds, &error, error.count) else {
            throw ProviderError(String(cString: error))
        }
        connection = media
        guard carrel_media_watch(media, &error, error.count) == 0 else {
            throw ProviderError(String(cString: error))
        }
        // Answers, and players that start playing, wake the loop.
        source = EventLoopFDSource(loop: loop, fd: carrel_media_fd(media)) { [unowned self] _ in busReadable() }
    }

    func apply(_ set: RestrictionSet) throws(ProviderError) {
        if let reading = prepared {
            prepared = nil
            if case .failed(let problem) = reading { throw problem }
            return
        }
        // Not prepared: connected and paused here, waiting for the players.
        try connect()
        try pause(all: true)
    }

    func verify() throws(ProviderError) {
        let reading = self.reading
        self.reading = nil
        switch reading {
        case .paused?: break
        case .failed(let problem)?: throw problem
        case nil: try pause(all: false)  // not asked ahead: ask now
        }
    }

    func revert() throws(ProviderError) {
        prepared = nil
        firstReady = nil
        cancelVerify()
        reactiveWanted = false
        running = nil
        source?.cancel()
        source = nil
        timeoutTimer?.cancel()
        timeoutTimer = nil
        connectTimer?.cancel()
        connectTimer = nil
        if let connection { carrel_media_close(connection) }
        connection = nil
    }

    private func busReadable() {
        guard let connection else { return }
        guard carrel_media_process(connection) == 0, carrel_media_connected(connection) != 0 else {
            // The bus went away: stop watching (the fd would stay readable);
            // the next verify reports it, and a run out ends with it.
            source?.cancel()
            source = nil
            collect()
            return
        }
        if carrel_media_take_playing(connection) != 0 {
            reactiveWanted = true
            startNextRun()
        }
        collect()
        watchWrites()
    }

    // MARK: - Runs without waiting

    private enum Reading {
        case paused
        case failed(ProviderError)
    }
    /// What a run is for: the verify asked for as `asked` (only its own
    /// run answers a verify: one started before was asked before it), or a
    /// player said to play.
    private enum Purpose { case verify(asked: Int), reactive, first }
    /// Counts verifies asked for and dropped.
    private var asked = 0

    /// What the run made for the next verify found; taken by `verify`.
    private var reading: Reading?
    /// The verify waiting for its run (its run may not have started yet).
    private var verifyReady: (() -> Void)?
    /// A player said it plays: a run to pause it is wanted.
    private var reactiveWanted = false
    /// What the run now out is for (nil: none is out).
    private var running: Purpose?
    private var timeoutTimer: EventLoopTimer?
    /// The bound on the bus daemon's answer while connecting ahead.
    private var connectTimer: EventLoopTimer?

    /// Asks the players without waiting; `ready` runs on the loop when the
    /// answers are in (or the run failed), for `verify` to judge.
    func prepareVerify(_ ready: @escaping () -> Void) {
        reading = nil
        asked += 1
        guard connection != nil else { ready(); return }  // verify fails on its own
        verifyReady = ready
        startNextRun()
    }

    func cancelVerify() {
        asked += 1
        verifyReady = nil
        reading = nil
    }

    /// Starts the run wanted next, if none is out: the verify's first.
    private func startNextRun() {
        guard running == nil, let connection else { return }
        let purpose: Purpose
        if verifyReady != nil {
            purpose = .verify(asked: asked)
        } else if reactiveWanted {
            purpose = .reactive
            reactiveWanted = false
        } else {
            return
        }
        var error = [CChar](repeating: 0, count: 512)
        guard carrel_media_pause_start(connection, 0, &error, error.count) == 0 else {
            finished(purpose, .failed(ProviderError(String(cString: error))), paused: "")
            return
        }
        running = purpose
        armTimeout()
    }

    /// Handles what the bus has (answers, and calls that timed out) and a
    /// run whose last answer is in.
    private func collect() {
        guard let connection, let purpose = running else { return }
        _ = carrel_media_process(connection)
        var error = [CChar](repeating: 0, count: 512)
        var paused = [CChar](repeating: 0, count: 1024)
        let taken = carrel_media_pause_take(connection, &paused, paused.count, &error, error.count)
        guard taken != 0 else {
            armTimeout()
            return
        }
        running = nil
        timeoutTimer?.disarm()
        var result: Reading = taken > 0 ? .paused : .failed(ProviderError(String(cString: error)))
        // The watch was asked for without waiting: a refusal fails the first pause.
        if case .first = purpose, case .paused = result,
           carrel_media_watch_problem(connection, &error, error.count) != 0 {
            result = .failed(ProviderError(String(cString: error)))
        }
        finished(purpose, result, paused: String(cString: paused))
    }

    private func finished(_ purpose: Purpose, _ result: Reading, paused: String) {
        if !paused.isEmpty {
            if case .first = purpose { logger("media: paused \(paused)") } else {
                logger("media: paused \(paused) (it started playing during the session)")
            }
        }
        switch purpose {
        case .verify(let forAsked):
            guard forAsked == asked, let ready = verifyReady else { break }  // dropped, or asked again since
            verifyReady = nil
            reading = result
            ready()
        case .reactive:
            if case .failed(let problem) = result { logger("media: \(problem.message)") }
        case .first:
            guard let ready = firstReady else { break }
            firstReady = nil
            prepared = result
            ready()
        }
        startNextRun()
    }

    /// Calls out time out by the bus's own clock: sd-bus reports them when
    /// processed, so the loop processes it then.
    private func armTimeout() {
        guard let connection else { return }
        let left = carrel_media_next_timeout_usec(connection)
        guard left != UInt64.max else { return }
        if timeoutTimer == nil {
            timeoutTimer = EventLoopTimer(loop: loop) { [unowned self] in collect() }
        }
        timeoutTimer?.arm(after: .milliseconds(Int64(left / 1000) + 1))
    }

    private func pause(all: Bool) throws(ProviderError) {
        guard let connection else { throw ProviderError("no session bus connection") }
        var error = [CChar](repeating: 0, count: 512)
        var paused = [CChar](repeating: 0, count: 1024)
        let count = carrel_media_pause(connection, all ? 1 : 0, &paused, paused.count, &error, error.count)
        if count > 0 {
            logger("media: paused \(String(cString: paused))\(all ? "" : " (it started playing during the session)")")
        }
        guard count >= 0 else { throw ProviderError(String(cString: error)) }
        // Signals that arrived during the calls are queued, not readable.
        if carrel_media_process(connection) == 0, carrel_media_take_playing(connection) != 0, !all {
            _ = carrel_media_pause(connection, 0, &paused, paused.count, &error, error.count)
        }
    }
}
