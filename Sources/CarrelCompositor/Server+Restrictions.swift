import CarrelAudit
import CarrelCore
import CarrelShim
import Logging

/// Enforcing a session's restrictions and Single App Mode's gap: the
/// providers, the scene, capture, selections and curtains.
extension Server {
    /// Makes the scene and curtains match `rules`: windows they hide leave
    /// the scene (disabled, not covered) before any frame could show them.
    func applyScreenRules(_ rules: ScreenRules) {
        setUntrustedLayerVisible(!rules.hidesUntrustedLayer)
        for view in views.values {
            view.setShown(rules.shows(view.owner))
        }
        updateCurtains()
        // A session naming participants gives the exam the left part.
        replaceAll()
        failCaptureFrames(on: nil)
        // Pointer focus may sit on a window that just left the scene.
        input?.pointerFocusChanged()
    }

    /// Puts up what the providers enforce for `set`; the scene follows when
    /// Core hears the outcome (other clients' windows leave the scene, focus
    /// stays on the session's windows). All or nothing: Core's plan says
    /// which steps run in which order and what a failure undoes; the runner
    /// runs them, one plan at a time, the providers' step answered later
    /// (the loop never waits for nft or the helper). Returns Core's effects
    /// of the outcome when it was known at once.
    func applyRestrictions(_ set: RestrictionSet) -> [DeskEffect] {
        restrictionRunner.ask(.apply(set))
    }

    /// Takes down what the providers hold for `id`; Core has already
    /// decided what the scene shows without it. Participants exist only with
    /// their session: stopped (reaped, their windows gone) before the
    /// session's last event is sent, and with them whatever left their trees.
    /// The network table's delete is started, not waited for (the next
    /// load follows it). Behind an apply still in flight (a session released
    /// while restricting), it runs once that apply's outcome is in, so what
    /// that apply put up comes down after the session's last event.
    func revertRestrictions(for id: SessionID) -> [DeskEffect] {
        restrictionRunner.ask(.revert(id))
    }

    /// One step of a restriction plan, with what it logs and audits: its
    /// result, or nil when it comes later, through `later` on the loop (the
    /// providers' apply, and the participants the privileged helper starts).
    func runRestrictionStep(_ step: RestrictionPlan.Step, session: SessionID, set: RestrictionSet?,
                            later: @escaping (RestrictionPlan.StepResult) -> Void) -> RestrictionPlan.StepResult? {
        switch step {
        case .checkPreconditions:
            // A new session: the machine must meet the preconditions first.
            if let helper = privilegedHelper {
                // As Carrel's own user only the helper (root) sees every
                // process's open devices: asked without waiting, the rest of
                // the machine is read when its answer is in.
                helper.sendForReply(.inputReaders) { [weak self] answer in
                    guard let self else { return }
                    let unmet = unmetPreconditions(for: session, inputHolders: EnvironmentProbe.inputDeviceHolders(from: answer))
                    later(unmet.map { .failed($0) } ?? .done)
                }
                return nil
            }
            if let unmet = unmetPreconditions(for: session, inputHolders: EnvironmentProbe.inputDeviceHolders()) {
                return .failed(unmet)
            }
        case .checkRenderer:
            // An allowed magnifier this renderer cannot draw would be allowed
            // with nothing behind it: the session fails instead.
            guard let set else { return .done }
            if let message = MagnifierRendering.refusal(for: set, rendererDrawsMagnifier: WlrootsVersion.canDrawMagnifier(renderer)) {
                logger.error("restrictions for \(session): \(message)")
                audit.record("magnifier_unavailable", session: session, detail: message)
                return .failed(message)
            }
        case .startParticipants(let ids):
            let heard: (String?) -> RestrictionPlan.StepResult = { [unowned self] failure in
                guard let failure else { return .done }
                audit.record("participant_unavailable", session: session, detail: failure)
                return .failed(failure)
            }
            switch participants.start(ids, policy: policy, runtimeDirectory: runtimeDirectory, done: { later(heard($0)) }) {
            case .now(let failure): return heard(failure)
            case .later: return nil
            }
        case .applyProviders:
            guard let set, let providerHost else { return .done }
            let heard: (RestrictionOutcome) -> RestrictionPlan.StepResult = { [unowned self] outcome in
                guard case .failed(let message) = outcome else { return .done }
                audit.record(AuditEvent.providerFailed, session: session, reason: "apply", detail: message)
                return .failed(message)
            }
            guard let outcome = providerHost.apply(set, done: { later(heard($0)) }) else { return nil }
            return heard(outcome)
        case .stopParticipants(let ids):
            participants.stop(ids)
        case .followKeyboard:
            guard let set else { return .done }
            onScreenKeyboard.follow(set, command: policy.onScreenKeyboard.command)
        case .markHeld:
            restrictionsHeldFor = session
            logger.info("restrictions up for \(session)")
            audit.record("restrictions_applied", session: session, detail: set?.description ?? "")
        case .stopKeyboard:
            onScreenKeyboard.stop()
        case .endStrays:
            endStrays()
        case .revertProviders:
            providerHost?.revert()
        case .markReleased:
            restrictionsHeldFor = nil
            logger.info("restrictions reverted for \(session)")
            audit.record("restrictions_reverted", session: session)
        }
        return .done
    }

    /// While a session holds restrictions no capture frame completes: the
    /// pending ones of `output` (nil: all) fail before anything is copied.
    func failCaptureFrames(on output: UnsafeMutablePointer<wlr_output>?) {
        guard restrictions != nil, let screencopy else { return }
        let failed = WlrootsVersion.failCaptureFrames(screencopy, output: output) { client in
            blocked(AuditKind.capture, client: client, "a screen capture frame asked for while a session holds restrictions; failed, nothing copied")
        }
        if failed > 0 { logger.notice("failed \(failed) capture frame(s): a session holds restrictions") }
    }

    /// Empties the clipboard and the primary selection.
    func clearSelections() {
        wlr_seat_set_selection(input.seat, nil, wl_display_next_serial(display))
        wlr_seat_set_primary_selection(input.seat, nil, wl_display_next_serial(display))
    }

    /// Windows that would draw outside the area Core gave them; checked for
    /// every rendered frame in debug builds where the scene enforces the clip.
    func sceneAreaViolations() -> [WindowID] {
        guard WlrootsVersion.clipEnforced, let output = primaryOutputBox else { return [] }
        let entries = views.values.map { view in
            SceneAudit.Entry(window: view.id, owner: view.owner,
                             isEnabled: WlrootsVersion.isEffectivelyEnabled(view.sceneNode),
                             area: desk.area(for: view.owner, output: output), drawn: view.drawnRect)
        }
        return SceneAudit.outsideArea(entries)
    }

    /// Windows the session must hide but the scene would draw; checked for
    /// every rendered frame in debug builds.
    func sceneViolations() -> [WindowID] {
        let entries = views.values.map { view in
            SceneAudit.Entry(window: view.id, owner: view.owner,
                             isEnabled: WlrootsVersion.isEffectivelyEnabled(view.sceneNode))
        }
        return SceneAudit.violations(entries, under: screenRules)
    }

    /// A display was connected: during a session that is a change nobody
    /// vetted, so the session hears `interrupted(integrity)` unless the
    /// policy tolerates it (then the new output shows only the curtain).
    func outputAddedDuringSession(_ output: Output) {
        guard restrictions != nil else { return }
        switch OutputHotplug.connectedDuringSession(output: output.name, becomesPrimary: outputs.first === output,
                                                    policy: policy.outputs) {
        case .tolerated:
            logger.notice("output \(output.name) was connected during the session; tolerated by the policy, it shows the curtain")
        case .interrupts(let message):
            drive { $0.integrityLost(message) }
        }
    }

    /// Outputs other than the primary show a plain colour during a session;
    /// every output does in Single App Mode's gap.
    func updateCurtains() {
        let rules = screenRules
        for (index, output) in outputs.enumerated() {
            output.setCurtain(up: rules.curtainUp(outputIndex: index), layout: outputLayout)
        }
    }
}
