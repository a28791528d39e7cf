import CarrelCore
import CarrelPasscode

/// Guided Access: the effects of `GuidedAccess`'s decisions. The lock is a
/// full session begun on the pinned app's behalf (`beginOnBehalf`), so the
/// same restrictions hold before it counts as begun.
extension Server {
    /// `carrelctl lock`: pins the client of the topmost mapped app window.
    func guidedLock() throws(ControlFailure) -> ControlOutcome {
        let topmost = stack.last { $0.role == .app && $0.isMapped }
        let client: ClientID
        switch guidedAccess.admitLock(configured: activePolicy.guidedAccess.passcodeHash != nil,
                                      assessmentMode: onBehalf != nil, sessionLive: assessment.hasLiveSession, topmostApp: topmost?.owner.client) {
        case .failure(let failure):
            logger.warning("guided access: lock refused: \(failure.message)")
            throw failure
        case .success(let owner): client = owner
        }
        logger.notice("guided access: locking the screen to the app (client \(client))")
        let id = assessment.beginOnBehalf(of: client, role: .app, configuration: AssessmentConfiguration())
        guard assessment.isLive(id) else {
            throw ControlFailure(.wrongState, "the lock failed to begin (see Carrel's log); nothing is locked")
        }
        guidedAccess.locked(id)
        return ControlOutcome(session: id.raw, message: "locked: only the app's windows are shown until `carrelctl unlock`")
    }

    /// `carrelctl unlock`: ends the lock when the passcode matches the
    /// policy's hash. Wrong passcodes are counted and rate limited; the
    /// passcode itself is never logged.
    func guidedUnlock(passcode: String) throws(ControlFailure) -> ControlOutcome {
        let now = AssessmentService.now()
        if case .failure(let failure) = guidedAccess.admitUnlock(at: now) {
            logger.warning("guided access: unlock refused: \(failure.message)")
            throw failure
        }
        // Slow on purpose (PBKDF2); admitUnlock bounds how often it runs.
        let matched = (try? PasscodeHash.verify(passcode: passcode, against: activePolicy.guidedAccess.passcodeHash ?? "")) ?? false
        switch guidedAccess.unlockChecked(matched: matched, at: now) {
        case .failure(let failure):
            logger.warning("guided access: \(failure.message); \(guidedAccess.attempts.totalFailures) wrong passcode(s) since Carrel started")
            throw failure
        case .success(let id):
            logger.notice("guided access: unlocked \(id) with the passcode")
            closePasscodeEntry()
            assessment.endOnBehalf()
            return ControlOutcome(session: id.raw, message: "unlocked")
        }
    }

    /// An event on the lock's session: logged; a failed or ended one releases it.
    func guidedAccessSessionEvent(_ event: SessionEvent) {
        guard let id = guidedAccess.session else { return }
        switch event {
        case .began:
            logger.notice("guided access: \(id) began: the screen is locked to the app")
        case .failed(let reason, let message):
            logger.error("guided access: \(id) failed to begin: \(reason): \(message)")
            guidedAccess.sessionOver(id)
            closePasscodeEntry()
        case .interrupted(let reason, let message):
            logger.warning("guided access: \(id) interrupted: \(reason): \(message); the lock holds until unlocked")
        case .ended:
            guidedAccess.sessionOver(id)
            closePasscodeEntry()
        default:
            break
        }
    }

    // MARK: - On-screen passcode entry

    /// The unlock keys were pressed at the machine during a lock.
    func openPasscodeEntry() {
        logger.notice("guided access: passcode entry opened at the machine")
        perform(passcodeEntry.open())
    }

    /// A key while the entry is open (every key goes here, none to the app).
    func passcodeEntryKey(_ key: PasscodeEntry.Key) {
        if let action = passcodeEntry.key(key) { perform(action) }
    }

    func closePasscodeEntry() {
        guard passcodeEntry.isOpen else { return }
        passcodeEntry.close()
        hideOverlay(.prompt)
    }

    private func perform(_ action: PasscodeEntry.Action) {
        switch action {
        case .show(let text):
            if !showOverlay(.prompt, text: text) { logger.error("guided access: the passcode entry could not be drawn") }
        case .close:
            hideOverlay(.prompt)
        case .submit(let passcode):
            do {
                _ = try guidedUnlock(passcode: passcode)
            } catch {
                if let next = passcodeEntry.refused(error.message) { perform(next) }
            }
        }
    }
}
