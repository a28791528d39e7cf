import CarrelCore

/// Guided Access from `carrelctl lock` / `unlock`: the Desk decides; this
/// checks the passcode, carries out the Desk's effects and turns its answer
/// into the control reply.
extension Server {
    /// `carrelctl lock`: pins the client of the topmost mapped app window.
    func guidedLock() throws(ControlFailure) -> ControlOutcome {
        let (result, effects) = decide { $0.lock(now: AssessmentService.now()) }
        carryOut(effects)
        let id: SessionID
        switch result {
        case .failure(let failure): throw failure
        case .success(let session): id = session
        }
        guard desk.isLive(id) else {
            throw ControlFailure(.wrongState, "the lock failed to begin (see Carrel's log); nothing is locked")
        }
        return ControlOutcome(session: id.raw, message: "locked: only the app's windows are shown until `carrelctl unlock`")
    }

    /// `carrelctl unlock`: ends the lock when the passcode matches the
    /// policy's hash. Wrong passcodes are counted and rate limited.
    func guidedUnlock(passcode: String) throws(ControlFailure) -> ControlOutcome {
        let (refusal, refused) = desk.admitUnlock(now: AssessmentService.now())
        carryOut(refused)
        if let refusal { throw refusal }
        let matched = passcodeMatches(passcode)
        let (result, effects) = decide { $0.passcodeChecked(matched: matched, now: AssessmentService.now()) }
        carryOut(effects)
        switch result {
        case .failure(let failure): throw failure
        case .success(let id): return ControlOutcome(session: id.raw, message: "unlocked")
        }
    }
}
