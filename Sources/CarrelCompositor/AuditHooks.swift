import CarrelAudit
import CarrelCore
import CarrelShim
import Glibc
import Logging

/// Where the compositor tells the audit log what happened, and the
/// preconditions check before a session's restrictions go up.
extension Server {
    /// Connects the audit log (opened first thing in init) to the clients and
    /// starts watching the requests that can be blocked attempts. Called
    /// once, before any client connects.
    func installAudit() {
        let log: AuditLog = audit
        log.subjectOf = { [unowned self] id in connectedClients().first { clientID($0) == id }.map(auditSubject) }
        log.liveSession = { [unowned self] in restrictionsSession }
        roles.clientGone = { [unowned self] client in
            audit.clientGone(auditSubject(client), session: restrictionsSession)
            if selectionRequester == client { selectionRequester = nil }
        }
        auditWatch = carrel_install_audit_watch(display, { data, client, kind, name in
            let server = Unmanaged<Server>.fromOpaque(data!).takeUnretainedValue()
            server.auditRequest(client: client!, kind: kind, name: String(cString: name!))
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Who `client` is, for a record.
    func auditSubject(_ client: OpaquePointer) -> AuditSubject {
        var pid: pid_t = 0
        wl_client_get_credentials(client, &pid, nil, nil)
        return AuditSubject(client: clientID(client), role: role(of: client).rawValue, pid: pid)
    }

    /// A request the C watch picked out; Core decides whether it is a blocked attempt.
    private func auditRequest(client: OpaquePointer, kind: Int32, name: String) {
        let request: WatchedRequest
        switch UInt32(kind) {
        case CARREL_AUDIT_BIND.rawValue: request = .bind(interface: name, visible: roles.mayBind(interface: name, client: client))
        case CARREL_AUDIT_RAISE.rawValue: request = .raise(request: name)
        case CARREL_AUDIT_SELECTION.rawValue:
            selectionRequester = client
            request = .selection(request: name)
        default: return
        }
        if let attempt = BlockedAttempt.of(request, from: clientID(client), restrictions: restrictions) {
            blocked(attempt.kind, client: client, attempt.detail)
        }
    }

    /// A blocked attempt by `client` (nil: unknown).
    func blocked(_ kind: String, client: OpaquePointer?, _ detail: String) {
        audit.blocked(kind, subject: client.map(auditSubject), session: restrictionsSession, detail: detail)
        attestor.countBlocked(kind, session: restrictionsSession)
        updateMetrics { $0.blocked(kind) }
    }

    /// The session whose restrictions are up, if any.
    var restrictionsSession: SessionID? { restrictions?.session }

    /// Checks the policy's preconditions for a session about to begin:
    /// nil when met (the notes are logged), else every unmet one.
    /// `inputHolders`: who holds the input devices, read just before.
    func unmetPreconditions(for session: SessionID, inputHolders: EnvironmentProbe.InputHolderReading) -> String? {
        let observation = environment.observe(auditLogProblem: audit.problem, privilegedHelperProblem: privilegedHelper?.problem,
                                              inputHolders: inputHolders)
        let report = Preconditions.evaluate(observation, policy: policy.preconditions)
        for note in report.notes { logger.info("preconditions for \(session): \(note)") }
        if report.isMet {
            audit.record("preconditions", session: session, reason: "met", detail: report.notes.joined(separator: "; "))
            return nil
        }
        logger.warning("preconditions for \(session): \(report.failureMessage)")
        audit.record("preconditions", session: session, reason: "unmet",
                     detail: report.failureMessage + (report.notes.isEmpty ? "" : "; notes: " + report.notes.joined(separator: "; ")))
        return report.failureMessage
    }

    /// One line for the `started` record.
    var auditStartDetail: String {
        let policy = options.policyPath ?? "built-in policy"
        let nested = environment.nestedIn.isEmpty ? "own display" : "nested in " + environment.nestedIn.joined(separator: ", ")
        return "carrel pid \(getpid()), \(policy), \(nested); \(environment.virtualMachine.summary)"
    }
}
