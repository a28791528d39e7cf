import CarrelCore
import CarrelPasscode
import CarrelShim
import Logging

/// The one place the compositor carries out `Desk`'s decisions. Inputs go in
/// through `drive` (or `decide`, when the caller wants the effects back to
/// queue them itself); every effect is done here, in order, and the reports
/// it makes go back to the Desk and are done in turn.
extension Server {
    /// Gives the Desk an input and carries out what it decides. Returns the
    /// effects of the input itself (e.g. whether a key was delivered).
    @discardableResult
    func drive(_ input: (inout Desk) -> [DeskEffect]) -> [DeskEffect] {
        let effects = decide(input)
        carryOut(effects)
        return effects
    }

    /// Does `effects` in order; the effects of each report come after the
    /// ones already queued.
    func carryOut(_ effects: [DeskEffect]) {
        var queue = effects[...]
        while let effect = queue.popFirst() {
            if let trace { trace.write(desk.trace(effect)) }
            queue.append(contentsOf: perform(effect))
        }
        updateMetrics()
    }

    private func perform(_ effect: DeskEffect) -> [DeskEffect] {
        switch effect {
        case .session(let sessionEffect):
            return assessment.perform(sessionEffect)
        case .recordOwnBegin(let id, let owner, let detail):
            audit.record("begin", session: id, subject: waylandClient(owner).map(auditSubject), detail: detail)
        case .deliverKey, .consumeKey, .acceptSelection, .deliverKeyToInputMethod, .relayComposition, .holdKey:
            break  // The seat and the relay do these with the event in hand (a held key: nothing, Core has it).
        case .releaseHeldKeys(let keys, let destination):
            input.releaseHeldKeys(keys, to: destination)
        case .armHeldKeyDeadline(let delay):
            textInput?.armHeldKeyDeadline(after: delay)
        case .commitPreedit:
            textInput?.commitPreedit()
        case .cancelComposition:
            textInput?.cancelComposition()
        case .relaunchInputMethod(let delay):
            relaunchInputMethod(after: delay)
        case .restartInputMethod:
            restartInputMethod()
        case .focus(let target):
            focus(target)
            return decide { $0.focusMoved(to: target) }
        case .raiseWindow(let id):
            raise(id)
        case .relaunchParticipant(let id):
            // Through the privileged helper its answer comes later, from the loop.
            let outcome = participants.start([id], policy: policy, runtimeDirectory: runtimeDirectory) { [unowned self] failure in
                if let failure { drive { $0.participantLaunchFailed(id, failure) } }
            }
            if case .now(let failure?) = outcome {
                return decide { $0.participantLaunchFailed(id, failure) }
            }
        case .setWindowShown(let id, let shown):
            setWindowShown(id, shown)
        case .applyScreenRules(let rules):
            applyScreenRules(rules)
        case .showPrompt(let text):
            if !showOverlay(.prompt, text: text) { logger.error("guided access: the passcode entry could not be drawn") }
        case .hidePrompt:
            hideOverlay(.prompt)
        case .checkPasscode(let passcode):
            // Checked before the Desk is asked: the check reads the policy in force.
            let matched = passcodeMatches(passcode)
            return decide { $0.passcodeChecked(matched: matched, now: AssessmentService.now()) }.1
        case .refuseSelection(_, let detail):
            if let detail, let client = selectionRequester { blocked(AuditKind.clipboard, client: client, detail) }
        case .recordBlocked(let kind, let client, let detail):
            blocked(kind, client: waylandClient(client), detail)
        case .relaunchApp(let delay):
            relaunchApp(after: delay)
        case .stop(let status):
            stop(status: status)
        case .stopApp(let owner, let notice, let grace, let why):
            stopApp(of: owner, notice: notice, grace: grace, why: why)
        case .switchVirtualTerminal(let vt):
            // Core asks only when the seat has terminals (a real session).
            if let session { wlr_session_change_vt(session, UInt32(vt)) }
        case .drawMagnifier:
            drawMagnifier()
        case .log(let entry):
            log(entry)
        }
        return []
    }

    /// Slow on purpose (PBKDF2); Core bounds how often it runs. The passcode
    /// itself is never logged.
    func passcodeMatches(_ passcode: String) -> Bool {
        (try? PasscodeHash.verify(passcode: passcode, against: policy.guidedAccess.passcodeHash ?? "")) ?? false
    }

    func log(_ entry: SessionLogEntry, prefix: String = "") {
        let message = Logger.Message(stringLiteral: prefix + entry.message)
        switch entry.level {
        case .info: logger.info(message)
        case .notice: logger.notice(message)
        case .warning: logger.warning(message)
        case .error: logger.error(message)
        }
    }
}
