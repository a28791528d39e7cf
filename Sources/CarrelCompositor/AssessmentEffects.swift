import CarrelCore
import CarrelShim
import Logging

/// The Invigilator's effects, carried out on the protocol's objects, the
/// outputs and the timers. Reports go back to the Desk; their effects are
/// returned to be queued after the ones already waiting.
extension AssessmentService {
    func perform(_ effect: SessionEffect) -> [DeskEffect] {
        switch effect {
        case .send(let id, let event):
            if let object = sessions[id] {
                // A destroyed session object hears nothing more.
                guard let resource = object.resource else { return [] }
                auditTransition(id, event, client: wl_resource_get_client(resource))
                send(event, on: resource)
            } else {
                // A session Carrel began itself: no object, the Desk hears it.
                let owner = server.desk.invigilator.sessions[id].flatMap { server.waylandClient($0.owner) }
                auditTransition(id, event, client: owner)
            }
        case .protocolError(let violation):
            guard let object = sessions[violation.session] else { return [] }
            let target = violation.interface == "carrel_assessment_manager_v1" ? object.manager : object.resource
            if let target { carrel_resource_post_error(target, violation.code, violation.description) }
        case .applyRestrictions(let set):
            // Core hears the outcome now when it is known now, else later from the loop.
            return server.applyRestrictions(set)
        case .revertRestrictions(let id):
            return server.revertRestrictions(for: id)
        case .clearSelections:
            server.clearSelections()
        case .startPresentationWait(let id, let deadline):
            let outputs = server.enabledOutputs
            presentationWait = (id, Set(outputs.map(ObjectIdentifier.init)))
            presentationTimers.arm(id, at: deadline, now: Self.now()) { [unowned self] in
                presentationWait = nil
                server.drive { $0.presentationDeadlinePassed(id, now: Self.now()) }
            }
            if outputs.isEmpty {
                // No output, nothing anyone could see: nothing to wait for.
                presentationWait = nil
                return server.decide { $0.framePresented(id, now: Self.now()) }
            }
            for output in outputs { output.requestFullFrame() }
        case .stopPresentationWait(let id):
            if presentationWait?.session == id { presentationWait = nil }
            presentationTimers.disarm(id)
        case .armTimeLimit(let id, let deadline):
            timeLimitTimers.arm(id, at: deadline, now: Self.now()) { [unowned self] in
                server.drive { $0.timeLimitReached(id, now: Self.now()) }
            }
        case .disarmTimeLimit(let id):
            timeLimitTimers.disarm(id)
        case .askConfirmation(let id, let prompt, let deadline):
            if promptOnScreen != id {
                // Without the prompt on screen nobody can answer: fail closed.
                guard server.showOverlay(.prompt, text: prompt) else {
                    return server.decide { $0.confirmationUnavailable(id, "no output to draw it on, or out of memory") }
                }
                promptOnScreen = id
                server.decide { $0.confirmationShown(id) }
                for output in server.enabledOutputs { output.requestFullFrame() }
            }
            confirmationTimers.arm(id, at: deadline, now: Self.now()) { [unowned self] in
                server.drive { $0.confirmationDeadlinePassed(id, now: Self.now()) }
            }
        case .dismissConfirmation(let id):
            confirmationTimers.disarm(id)
            if promptOnScreen == id {
                promptOnScreen = nil
                server.hideOverlay(.prompt)
            }
        case .showBanner(let id, let text, let until):
            if server.showOverlay(.banner, text: text) {
                bannerTimers.arm(id, at: until, now: Self.now()) { [unowned self] in
                    server.hideOverlay(.banner)
                }
            } else {
                logger.warning("assessment: could not draw the banner for \(id)")
            }
        case .hideBanner(let id):
            if bannerTimers.isArmed(id) {
                bannerTimers.disarm(id)
                server.hideOverlay(.banner)
            }
        case .lockStateChanged(let state):
            for manager in managers {
                carrel_assessment_manager_v1_send_lock_state(manager.resource, state == .active ? 1 : 0)
                carrel_assessment_manager_v1_send_done(manager.resource)
            }
        case .log(let entry):
            server.log(entry, prefix: "assessment: ")
        }
        return []
    }

    /// On disk before the client hears it.
    private func auditTransition(_ id: SessionID, _ event: SessionEvent, client: OpaquePointer?) {
        let (name, reason, message) = event.parts
        server.audit.transition(name, session: id, subject: client.map(server.auditSubject), reason: reason, detail: message)
        if case .interrupted(let why, _) = event { server.attestor.noteInterruption(why, session: id) }
        server.updateMetrics { $0.record(event, session: id) }
        if event.isTerminal {
            server.attestor.forget(id)
            logger.notice("audit: \(id) \(name); chain head \(server.audit.head) at seq \(server.audit.seq)")
        }
    }

    private func send(_ event: SessionEvent, on resource: WlResource) {
        let version = UInt32(wl_resource_get_version(resource))
        switch event {
        case .began: carrel_assessment_session_v1_send_began(resource)
        case .failed(let reason, let message):
            carrel_assessment_session_v1_send_failed(resource, reason.wireValue(forVersion: version), message)
        case .interrupted(let reason, let message):
            carrel_assessment_session_v1_send_interrupted(resource, reason.wireValue(forVersion: version), message)
        case .ended: carrel_assessment_session_v1_send_ended(resource)
        case .updated: carrel_assessment_session_v1_send_updated(resource)
        case .updateFailed(let reason, let message):
            carrel_assessment_session_v1_send_update_failed(resource, reason.wireValue(forVersion: version), message)
        }
        wl_client_flush(wl_resource_get_client(resource))
    }
}
