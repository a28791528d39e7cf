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
    /// its participant user, instead of by Carrel.
    var startThroughHelper: ((_ id: String, _ participant: ParticipantPolicy) throws -> LaunchedApp)?
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

    /// The ids running now.
    var running: Set<String> { Set(processes.keys) }

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
    /// else has been applied.
    func start(_ wanted: [String], policy: Policy, runtimeDirectory: String) -> String? {
        var started: [String] = []
        for id in wanted where processes[id] == nil {
            guard let participant = policy.participants[id] else {
                stop(started)
                return "participant \(id) is not in the policy in force; add [participants.\(id)] or leave it out of the configuration"
            }
            do {
                if let startThroughHelper {
                    processes[id] = try startThroughHelper(id, participant)
                    started.append(id)
                    continue
                }
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

    /// Stops every running participant not in `kept`.
    func stop(except kept: [String] = []) {
        stop(processes.keys.filter { !kept.contains($0) }.sorted())
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
