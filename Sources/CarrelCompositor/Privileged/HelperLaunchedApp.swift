import CarrelCore
import Glibc
import Logging

/// A program the privileged helper started for Carrel, by the id the helper
/// gave it: it is the helper's child, so its end arrives as the helper's
/// `exited` event, and signals go through the helper.
final class HelperLaunchedApp: LaunchedApp {
    let id: UInt64
    /// Not Carrel's child: the helper started it.
    var childPid: pid_t? { nil }
    /// The helper connection that started it: a later one numbers its programs afresh.
    let generation: Int
    private let link: PrivilegedHelperLink
    private let logger: Logger
    private var exit: AppExit?
    private var reaped = false

    init(id: UInt64, link: PrivilegedHelperLink, logger: Logger) {
        self.id = id
        generation = link.generation
        self.link = link
        self.logger = logger
    }

    var label: String { "helper program \(id)" }

    /// The helper kills the rest of its group when it ends.
    func endGroup() {}

    /// Whether the helper said it ended.
    var hasExited: Bool { exit != nil }

    /// Sends `signal` through the helper without waiting for its answer
    /// (the loop goes on; the link bounds the wait for it): nil when sent,
    /// else why not. `failed` runs later, on the loop, if the helper could
    /// not signal it (its error, or no answer within the link's bound).
    func signal(_ signal: PrivilegedRequest.StopSignal, failed: @escaping (String) -> Void = { _ in }) -> String? {
        // Its id means another program to a helper connected since.
        guard generation == link.generation else { return "the privileged helper that started it is gone" }
        guard link.isConnected else { return link.problem ?? "the privileged helper is not connected" }
        link.send(.signal(id: id, signal: signal)) { answer in
            if case .failure(let error) = answer { failed(error.message) }
        }
        return nil
    }

    /// The helper said it ended.
    func exited(waitStatus: Int32) {
        exit = AppExit(waitStatus: waitStatus)
    }

    func reap() -> AppExit? {
        guard !reaped, let exit else { return nil }
        reaped = true
        return exit
    }

    /// Whether an event about program `id` of the link's current connection is about this one.
    func isProgram(_ id: UInt64) -> Bool { id == self.id && generation == link.generation }

    /// SIGKILL to its process group through the helper; its end comes as
    /// the helper's `exited` event. Not waited for: stopping a participant
    /// or the keyboard never holds up the loop (the request is written now,
    /// the helper's answer heard from the loop).
    func kill() {
        guard exit == nil else { return }
        let warn = { [logger, id] (why: String) in
            logger.warning("could not kill program \(id) through the privileged helper: \(why)")
        }
        if let problem = signal(.kill, failed: warn) { warn(problem) }
    }

    /// Carrel is stopping and its loop has ended: here waiting is what is
    /// wanted (the program must be gone before Carrel is), bounded by `grace`.
    func terminate(grace: Double) {
        guard exit == nil, generation == link.generation else { return }
        do {
            try link.request(.signal(id: id, signal: .term))
            if let status = link.awaitExit(of: id, timeout: grace) {
                exited(waitStatus: status)
                return
            }
            logger.warning("program \(id) ignored SIGTERM for \(grace)s; killing it")
            try link.request(.signal(id: id, signal: .kill))
            if let status = link.awaitExit(of: id, timeout: 1.0) { exited(waitStatus: status) }
        } catch {
            // Without the helper's connection the helper has killed it already.
            logger.warning("could not stop program \(id) through the privileged helper: \(error.message)")
        }
    }
}
