import CarrelCore
import CarrelShim
import Glibc
import Logging

/// The participant programs of the live session, each launched by Carrel on
/// a socket of its own (`ClientRoles.openParticipantSocket`), so every
/// connection it makes has role `participant` with its id. They exist only
/// while their session does: started when its restrictions go up (or an
/// update names them), stopped — process terminated and reaped, clients
/// disconnected, socket removed — when the restrictions come down, which is
/// before the session's last event is sent.
final class Participants {
    private let roles: ClientRoles
    private let logger: Logger
    private var processes: [String: LaunchedApp] = [:]
    /// Participants stopped (SIGKILL sent) and not yet reaped.
    private var dying: [(id: String, process: LaunchedApp)] = []
    /// Spawns participant `id` through the body (inside its network cgroup
    /// when it keeps the network: `ProviderHost.launchParticipant`).
    var launch: (_ id: String, _ participant: ParticipantPolicy, _ body: () throws -> AppProcess) throws -> AppProcess = { try $2() }
    /// Set with the privileged helper: participant `id` is started by it, as
    /// its participant user, instead of by Carrel. Without waiting: `done`
    /// runs later, on the loop, with the helper's program or why not (a
    /// throw: it could not even be asked).
    var startThroughHelper: ((_ id: String, _ participant: ParticipantPolicy,
                              _ done: @escaping (Result<LaunchedApp, CompositorError>) -> Void) throws -> Void)?
    /// Participants the helper is starting (asked, not yet answered); what
    /// its answer means is Core's (`StartsInFlight`): one stopped meanwhile
    /// is killed as soon as the helper names it.
    private var starting = StartsInFlight<String>()
    /// Participant `id` is stopped and reaped.
    var stopped: (_ id: String) -> Void = { _ in }
    /// Participant `id` is being stopped: everything in its cgroup, if it
    /// has one, is killed too (what it started as another user, or moved
    /// out of its tree, which Carrel's own signals cannot reach).
    var killCgroup: (_ id: String) -> Void = { _ in }

    init(roles: ClientRoles, logger: Logger) {
        self.roles = roles
        self.logger = logger
    }

    /// The ids running now (and those the helper is starting).
    var running: Set<String> { Set(processes.keys).union(starting.wanted) }

    /// The participant id of each one that is Carrel's own child, by pid.
    var childPids: [pid_t: String] {
        var pids: [pid_t: String] = [:]
        for (id, process) in processes { if let pid = process.childPid { pids[pid] = id } }
        for (id, process) in dying { if let pid = process.childPid { pids[pid] = id } }
        return pids
    }

    /// Makes the running participants those of `wanted`, all or nothing:
    /// the missing ones are started; if one cannot be, the ones just started
    /// are stopped again and the message says which failed and why. Those no
    /// longer wanted are stopped only by `stop(except:)`, once everything
    /// else has been applied. Carrel starts them itself, at once (without
    /// the privileged helper; with it, the other `start` asks the helper).
    private func start(_ wanted: [String], policy: Policy, runtimeDirectory: String) -> String? {
        var started: [String] = []
        for id in wanted where processes[id] == nil {
            guard let participant = policy.participants[id] else {
                stop(started)
                return "participant \(id) is not in the policy in force; add [participants.\(id)] or leave it out of the configuration"
            }
            do {
                let socket = try roles.openParticipantSocket(id, runtimeDirectory: runtimeDirectory)
                processes[id] = try launch(id, participant) {
                    try AppProcess.launch(participant.command, appSocket: socket, logger: logger,
                                          label: "participant \(id)", ownProcessGroup: true)
                }
                started.append(id)
            } catch CompositorError.launch(let why) {
                roles.closeParticipantSocket(id)
                stop(started)
                return "participant \(id) could not be started: \(why)"
            } catch {
                roles.closeParticipantSocket(id)
                stop(started)
                return "participant \(id) could not be started: \(error)"
            }
        }
        return nil
    }

    /// How a `start(_:policy:runtimeDirectory:done:)` came out: known at
    /// once (nil, or why one could not be started), or `later`, through `done`.
    enum StartOutcome {
        case now(String?)
        case later
    }

    /// `start`, without waiting for the privileged helper: through it, the
    /// participants are asked for one at a time, each answer taken from the
    /// loop (bounded by the link's answer timeout: a silent helper is
    /// dropped, and the start fails), and `done` runs there with nil or
    /// why one failed (then, as with `start`, the ones just started are
    /// stopped again). Without the helper Carrel starts them itself, at once.
    func start(_ wanted: [String], policy: Policy, runtimeDirectory: String,
               done: @escaping (String?) -> Void) -> StartOutcome {
        guard startThroughHelper != nil else { return .now(start(wanted, policy: policy, runtimeDirectory: runtimeDirectory)) }
        let missing = wanted.filter { processes[$0] == nil && !starting.isInFlight($0) }
        if let id = missing.first(where: { policy.participants[$0] == nil }) {
            return .now("participant \(id) is not in the policy in force; add [participants.\(id)] or leave it out of the configuration")
        }
        guard !missing.isEmpty else { return .now(nil) }
        if let failure = startNext(missing[...], started: [], policy: policy, done: done) { return .now(failure) }
        return .later
    }

    /// Asks the helper for the first of `left`; the rest follow its answer.
    /// Why it failed when it could not even be asked (nothing left running
    /// of this start), else nil: `done` runs later.
    private func startNext(_ left: ArraySlice<String>, started: [String], policy: Policy,
                           done: @escaping (String?) -> Void) -> String? {
        guard let id = left.first, let participant = policy.participants[id], let startThroughHelper else {
            done(nil)
            return nil
        }
        starting.ask(id)
        do {
            try startThroughHelper(id, participant) { [weak self] result in
                guard let self else { return }
                let stoppedMeanwhile = starting.answered(id) == .stopAtOnce
                switch result {
                case .success(let program) where stoppedMeanwhile:
                    // Stopped while it was being started: it goes at once.
                    processes[id] = program
                    stop([id])
                    if let failure = startNext(left.dropFirst(), started: started, policy: policy, done: done) { done(failure) }
                case .success(let program):
                    processes[id] = program
                    if let failure = startNext(left.dropFirst(), started: started + [id], policy: policy, done: done) { done(failure) }
                case .failure(let error):
                    if stoppedMeanwhile { stopped(id) }
                    roles.closeParticipantSocket(id)
                    stop(started)
                    done(Self.startFailure(id, error))
                }
            }
            return nil
        } catch {
            _ = starting.answered(id)
            roles.closeParticipantSocket(id)
            stop(started)
            return Self.startFailure(id, error)
        }
    }

    private static func startFailure(_ id: String, _ error: any Error) -> String {
        if case CompositorError.launch(let why) = error { return "participant \(id) could not be started: \(why)" }
        return "participant \(id) could not be started: \(error)"
    }

    /// Stops every running participant not in `kept`.
    func stop(except kept: [String] = []) {
        stop(running.filter { !kept.contains($0) }.sorted())
    }

    /// Stops these participants (those not running are only forgotten):
    /// their connections and sockets closed, then SIGKILL to each and all
    /// it started (its process tree, and its cgroup where it has one), at once and without waiting for it (a participant that
    /// ignores SIGTERM cannot hold up the session's end, and nothing of it
    /// runs on after `ended`); SIGCHLD reaps it (`reap`), and only then is
    /// it `stopped` (its network cgroup removed).
    func stop(_ ids: [String]) {
        for id in ids {
            roles.closeParticipantSocket(id)
            // The helper's answer is still to come: it is stopped then.
            if starting.stop(id) { continue }
            guard let process = processes.removeValue(forKey: id) else {
                stopped(id)
                continue
            }
            process.kill()
            killCgroup(id)
            dying.append((id, process))
            logger.notice("participant \(id) (\(process.label)) stopped: SIGKILL sent to it and everything it started")
        }
    }

    /// The helper said its program `id` ended: the participant it was, if any, hears it.
    func helperProgramExited(_ id: UInt64, waitStatus: Int32) {
        // A stopped one too: its end is what lets `reap` finish its stop.
        for case let program as HelperLaunchedApp in Array(processes.values) + dying.map(\.process) where program.isProgram(id) {
            program.exited(waitStatus: waitStatus)
        }
    }

    /// Reaps participants that exited on their own; their sockets close
    /// (nothing else may take their place) and their ids are returned.
    func reap() -> [(id: String, exit: AppExit)] {
        // The stopped ones go quietly: Core already knows they were stopped.
        dying.removeAll { id, process in
            guard process.reap() != nil else { return false }
            process.endGroup()
            stopped(id)
            return true
        }
        var exited: [(String, AppExit)] = []
        for (id, process) in processes {
            guard let status = process.reap() else { continue }
            process.endGroup()
            processes[id] = nil
            roles.closeParticipantSocket(id)
            stopped(id)
            exited.append((id, status))
        }
        return exited.sorted { $0.0 < $1.0 }
    }
}
