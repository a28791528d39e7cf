import CarrelAudit
import CarrelCore
import CarrelShim
import Glibc
import Logging

/// The compositor's side of `carrelctl`: opens the control socket the
/// options name and answers each request from the session state.
extension Server {
    /// The mode `status` reports: how Carrel was started.
    var controlMode: String { desk.controlMode }

    /// The control socket, or nil when it could not be opened and the
    /// options do not require it (logged: Carrel runs without).
    func openControlSocket() throws -> ControlSocket? {
        let control = policy.control
        do {
            let socket = try ControlSocket(path: control.socketPath, group: control.group, display: display,
                                           logger: logger) { [unowned self] request in answer(request) }
            socket.answered = { [unowned self] peer, pid, actor, request, response in
                // status only reads; every other command is recorded (never a passcode).
                guard request != .status else { return }
                audit.record(AuditEvent.admin, session: restrictionsSession,
                             subject: AuditSubject(client: ClientID(0), role: "admin", pid: pid),
                             reason: response.ok ? "done" : "refused",
                             detail: "carrelctl \(request.command) by \(peer)"
                                 + (response.error.map { ": \($0)" } ?? ""),
                             actor: actor)
            }
            return socket
        } catch {
            if options.requireControlSocket { throw error }
            logger.warning("\(error); carrelctl is unavailable (pass --control-socket PATH to choose a path)")
            return nil
        }
    }

    func answer(_ request: ControlRequest) -> ControlResponse {
        do throws(ControlFailure) {
            switch request {
            case .status:
                return ControlResponse(ok: true, command: request.command,
                                       status: assessment.controlStatus(mode: controlMode, clients: clientCounts(), metrics: metricsStatus))
            case .end(let reason, let session):
                return ControlResponse(ok: true, command: request.command,
                                       outcome: try administrativeEnd(reason: reason, expecting: session.map(SessionID.init)))
            case .forceEnd(let reason):
                return ControlResponse(ok: true, command: request.command, outcome: try administrativeForceEnd(reason: reason))
            case .extend(let minutes, let session):
                return ControlResponse(ok: true, command: request.command,
                                       outcome: try extendTimeLimit(byMinutes: minutes, expecting: session.map(SessionID.init)))
            case .lock:
                return ControlResponse(ok: true, command: request.command, outcome: try guidedLock())
            case .unlock(let passcode):
                return ControlResponse(ok: true, command: request.command, outcome: try guidedUnlock(passcode: passcode))
            case .reload:
                return ControlResponse(ok: true, command: request.command, reload: try reloadPolicy())
            }
        } catch {
            return .failure(error, command: request.command)
        }
    }

    /// `end --reason`: the live session hears `interrupted(administrative)`.
    func administrativeEnd(reason: String, expecting session: SessionID? = nil) throws(ControlFailure) -> ControlOutcome {
        let (result, effects) = decide { $0.administrativeEnd(reason: reason, expecting: session) }
        carryOut(effects)
        return try result.get()
    }

    /// `end --force --reason`: the session ends now and its app is stopped.
    func administrativeForceEnd(reason: String) throws(ControlFailure) -> ControlOutcome {
        let (result, effects) = decide { $0.administrativeForceEnd(reason: reason) }
        carryOut(effects)
        return try result.get()
    }

    /// Stops the process of `owner`, the app of a force-ended session, and
    /// records each step (the session is already over, so no session id).
    func stopApp(of owner: ClientID, notice: Duration, grace: Duration, why: String) {
        guard let client = waylandClient(owner) else {
            audit.record(AuditEvent.appStop, reason: "gone", detail: "\(why); \(owner) had already disconnected")
            return
        }
        let subject = auditSubject(client)
        // `ended` goes out before any signal could cut the client short.
        wl_client_flush(client)
        let record = { [unowned self] (step: String) in
            logger.notice("end --force: \(step)")
            audit.record(AuditEvent.appStop, subject: subject, reason: "stop", detail: "\(why); \(step)")
        }
        let loop = wl_display_get_event_loop(display)!
        // The privileged helper's app connects over a socket pair Carrel made: its pid reads as Carrel's.
        let stop = if subject.pid == getpid(), roles.role(of: client) == .app, let program = app as? HelperLaunchedApp {
            AppStop(program: program, notice: notice, grace: grace, loop: loop, record: record)
        } else {
            AppStop(pid: subject.pid, notice: notice, grace: grace, loop: loop, record: record)
        }
        guard let stop else { return }
        stop.finished = { [unowned self] finished in appStops.removeAll { $0 === finished } }
        appStops.append(stop)
    }

    /// `extend MINUTES`: more time for the active session.
    func extendTimeLimit(byMinutes minutes: Int, expecting session: SessionID? = nil) throws(ControlFailure) -> ControlOutcome {
        let (result, effects) = decide { $0.extendTimeLimit(byMinutes: minutes, now: AssessmentService.now(), expecting: session) }
        carryOut(effects)
        return try result.get()
    }

    /// Every connected Wayland client.
    func connectedClients() -> [OpaquePointer] {
        var clients: [OpaquePointer] = []
        let list = wl_display_get_client_list(display)!
        var link = list.pointee.next!
        while link != list {
            clients.append(wl_client_from_link(link))
            link = link.pointee.next
        }
        return clients
    }

    /// The connected client with this id, if it is still connected.
    func waylandClient(_ id: ClientID) -> OpaquePointer? {
        connectedClients().first { clientID($0) == id }
    }

    /// Connected Wayland clients by role.
    func clientCounts() -> [Role: Int] {
        connectedClients().reduce(into: [:]) { counts, client in counts[role(of: client), default: 0] += 1 }
    }

    /// `carrelctl reload`: reads the policy file again. Nothing changes unless
    /// all of it is valid (and its emergency key resolves); then what can
    /// change while running applies from the next session (`PolicyReload`).
    func reloadPolicy() throws(ControlFailure) -> ReloadOutcome {
        guard let source = options.policySource else {
            throw ControlFailure(.badPolicy, "this Carrel cannot re-read its policy; restart it to apply a new one")
        }
        let file: Policy
        switch source.load() {
        case .failure(let failure):
            logger.error("policy reload refused, the running policy stays: \(failure.message)")
            throw ControlFailure(.badPolicy, failure.message + "\nthe running policy stays; fix the file and reload again")
        case .success(let policy):
            file = policy
        }
        let reload = PolicyReload(running: policy, file: file)
        let binding: EmergencyBinding?, unlock: EmergencyBinding?, magnifierKeys: MagnifierKeys
        do {
            binding = try reload.policy.emergencyBinding.map { try Self.resolve($0, for: "emergency.binding") }
            unlock = try reload.policy.guidedAccess.unlockKeys.map { try Self.resolve($0, for: "guided_access.unlock_keys") }
            magnifierKeys = try Self.resolve(reload.policy.magnifier)
        } catch {
            logger.error("policy reload refused, the running policy stays: \(error)")
            throw ControlFailure(.badPolicy, "\(error); the running policy stays")
        }
        decide { $0.adopt(reload.policy, emergency: binding, unlockKeys: unlock, magnifierKeys: magnifierKeys) }
        roles.appLock = reload.policy.appLock
        attestor.policyReloaded()
        logger.notice("policy reloaded from \(source.path): \(reload.summary)")
        return ReloadOutcome(file: source.path, applied: reload.applied, needRestart: reload.needRestart,
                             message: reload.summary)
    }
}
