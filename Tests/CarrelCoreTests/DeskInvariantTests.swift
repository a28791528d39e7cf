import CarrelCore
import CarrelTestSupport
import Testing

/// Seeded random input sequences driving the Desk in every mode (plain,
/// kiosk, assessment, kiosk + assessment, with Guided Access locks where
/// they are allowed), checking its promises after every step. A failure
/// names the mode, seed and step; `run(mode:seed:steps:)` replays it.
/// Protocol sessions sometimes name the policy's participant (a calculator,
/// relaunched on exit under odd seeds, interrupting under even ones) and
/// allow the magnifier, whose zoom key is among the keys pressed.
@Suite("Desk invariants under random input sequences")
struct DeskInvariantTests {
    static let seeds: [UInt64] = (1...10).map { $0 &* 0x9E37_79B9_7F4A_7C15 }
    static let steps = 2500

    @Test("invariants hold after every step", arguments: DeskMode.allCases, seeds)
    func randomSequence(mode: DeskMode, seed: UInt64) {
        let result = Self.run(mode: mode, seed: seed, steps: Self.steps)
        #expect(result.failures.isEmpty, "\(mode) seed \(seed): \(result.failures.prefix(5).joined(separator: "\n"))")
    }

    @Test("the sequences hit every kind of input and reach every outcome")
    func coverage() {
        var inputs: Set<String> = []
        var outcomes: Set<String> = []
        for mode in DeskMode.allCases {
            for seed in Self.seeds.prefix(3) {
                let result = Self.run(mode: mode, seed: seed, steps: Self.steps)
                inputs.formUnion(result.inputs)
                outcomes.formUnion(result.outcomes.map { "\(mode): \($0)" })
                outcomes.formUnion(result.outcomes)
            }
        }
        for input in Input.allCases.map(\.rawValue) {
            #expect(inputs.contains(input), "never gave the input \(input)")
        }
        for outcome in ["deliver", "consume", "vt", "emergency interrupt", "passcode entry", "passcode checked",
                        "unlocked", "confirmation answered", "selection accepted", "selection refused", "selection audited",
                        "drag accepted", "drag refused", "relaunch", "give up", "stop", "session began", "session ended",
                        "kiosk gap", "foreign window", "participant relaunch", "participant interrupt",
                        "participant unavailable", "focus switch", "began with participant", "magnifier zoomed",
                        "magnifier reset"] {
            #expect(outcomes.contains(outcome), "never reached \(outcome)")
        }
        for outcome in ["kiosk: relaunch", "kioskAssessment: relaunch", "kioskAssessment: session began",
                        "assessment: session began", "plain: unlocked", "kiosk: unlocked", "kioskAssessment: give up"] {
            #expect(outcomes.contains(outcome), "never reached \(outcome)")
        }
    }

    enum Input: String, CaseIterable {
        case createWindow, mapWindow, unmapWindow, destroyWindow, key, selection, drag, appExit, relaunchFires,
             lock, unlock, begin, end, destroySession, presentFrames, presentationDeadline, timeLimit,
             integrityLost, administrativeEnd, extend, toggleHooks, participantExit
    }

    struct Result {
        var failures: [String] = []
        var inputs: Set<String> = []
        var outcomes: Set<String> = []
    }

    static func run(mode: DeskMode, seed: UInt64, steps: Int) -> Result {
        var rng = SeededRandom(seed: seed)
        var result = Result()
        func roll(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        // Participants' choices draw from their own generator, so adding them
        // left the other inputs' sequences as they were.
        var participantRNG = SeededRandom(seed: seed ^ 0xCA1C)
        func participantRoll(_ n: Int) -> Int { Int(participantRNG.next() % UInt64(n)) }

        var setup = mode.setup(maximumRelaunches: 2)
        setup.policy.appLock = AppLockPolicy(allowedExecutables: ["/usr/bin/seb"], requireConfirmation: true)
        setup.policy.participants = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"],
                                                                     onExit: seed % 2 == 1 ? .relaunch : .interrupt)]
        setup.policy.session.knownParticipants = ["calculator"]
        setup.magnifierKeys = MagnifierKeys([.zoomIn: EmergencyBinding(modifiers: [.logo, .alt], keysym: Sym.equal)])
        var double = DeskDouble(setup)
        var appRun: UInt64 = 0
        var appRunning = true
        var nextWindow: UInt64 = 1
        var windows: [UInt64: WindowOwner] = [:]
        var protocolSessions: [SessionID] = []
        /// Single App Mode: the app exited and no app-role window has mapped since.
        var appAway = false

        func appOwner() -> WindowOwner { appRun == 0 ? Owners.app : Owners.relaunchedApp(Int(appRun)) }
        func anyWindow() -> UInt64? { windows.keys.sorted().randomElement(using: &rng) }
        let keys: [KeyPress] = [
            .press(Sym.a), .release(Sym.a), .press(Sym.vt2, [.ctrl, .alt]), .press(Sym.delete, [.ctrl, .alt]),
            .press(Sym.u, [.ctrl, .alt]), .press(Sym.y), .press(Sym.n), .press(Sym.escape), .press(Sym.enter),
            .typed("2"), .typed("4"), .typed("6"), .typed("8"), .typed("1"), .press(Sym.tab, [.ctrl, .alt]),
            .press(Sym.equal, [.logo, .alt]),
        ]

        for step in 0..<steps {
            double.now = double.now.advanced(by: .milliseconds(Int64(roll(400))))
            double.lastRequester = nil
            let before = double
            // Someone at the open passcode entry is mostly typing.
            let input = double.desk.passcodeEntry.isOpen && roll(4) != 0 ? .key : Input.allCases[roll(Input.allCases.count)]
            result.inputs.insert(input.rawValue)
            var effects: [DeskEffect] = []
            var described = input.rawValue
            let mark = double.log.count

            switch input {
            case .createWindow:
                let owners = [appOwner(), appOwner(), Owners.helper, Owners.stranger, Owners.calculator]
                let owner = owners[roll(owners.count)]
                guard owner.role != .app || appRunning || owner == Owners.helper else { break }
                let id = nextWindow
                nextWindow += 1
                windows[id] = owner
                described += " \(id) of \(owner.client)"
                let mapped = roll(3) != 0
                double.window(id, owner, mapped: mapped)
                if mapped && owner.role == .app { appAway = false }
            case .mapWindow:
                guard let id = anyWindow() else { break }
                described += " \(id)"
                double.map(id)
                if windows[id]?.role == .app { appAway = false }
            case .unmapWindow:
                guard let id = anyWindow() else { break }
                described += " \(id)"
                double.unmap(id)
            case .destroyWindow:
                guard let id = anyWindow() else { break }
                described += " \(id)"
                windows[id] = nil
                double.destroy(id)
            case .key:
                // Someone at the open passcode entry mostly types and presses Enter.
                let typing: [KeyPress] = [.typed("2"), .typed("4"), .typed("6"), .typed("8"), .press(Sym.enter)]
                var key = double.desk.passcodeEntry.isOpen && roll(5) != 0 ? typing[roll(typing.count)] : keys[roll(keys.count)]
                // With the exam and a participant on screen, the student often switches between them.
                if double.desk.restrictions?.participants.isEmpty == false, participantRoll(3) == 0 {
                    key = .press(Sym.tab, [.ctrl, .alt])
                }
                described += " \(key)"
                effects = double.key(key)
            case .selection:
                let clients = [appOwner().client, Owners.helper.client, Owners.stranger.client]
                let kind: SelectionKind = roll(2) == 0 ? .clipboard : .primary
                let focused = double.focused.flatMap { windows[$0.raw]?.client }
                let requester = clients[roll(clients.count)]
                let serial = requester == focused && roll(4) != 0
                described += " \(kind) by \(requester)"
                double.lastRequester = requester
                effects = double.run { $0.selectionRequested(kind, focusedClient: focused, serialFromFocusedClient: serial,
                                                             requester: requester) }
            case .drag:
                let clients = [appOwner().client, Owners.helper.client, Owners.stranger.client]
                let origin = clients[roll(clients.count)]
                let grab = roll(4) != 0
                described += " from \(origin)"
                double.lastRequester = origin
                effects = double.run { $0.dragRequested(origin: origin, grabSerialValid: grab, requester: origin) }
            case .appExit:
                guard appRunning else { break }
                appRunning = false
                // The app's connection goes too, sometimes after the exit is seen.
                if roll(2) == 0 {
                    for (id, owner) in windows where owner == appOwner() {
                        windows[id] = nil
                        double.destroy(id)
                    }
                }
                let status = [Int32(0), 1, 137][roll(3)]
                described += " status \(status)"
                double.appExits(status: status, after: roll(3) == 0 ? .seconds(40) : .milliseconds(Int64(roll(900))))
                appAway = mode == .kiosk || mode == .kioskAssessment
            case .relaunchFires:
                guard double.relaunchPending else { break }
                for (id, owner) in windows where owner == appOwner() {
                    windows[id] = nil
                    double.destroy(id)
                }
                appRun += 1
                appRunning = true
                double.relaunchFires()
            case .lock:
                _ = double.lock()
            case .unlock:
                _ = double.unlock(roll(2) == 0 ? rightPasscode : "1111")
            case .begin:
                let (client, role, executable): (ClientID, Role, String?) = [
                    (appOwner().client, .app, nil), (Owners.helper.client, .app, nil),
                    (Owners.stranger.client, .untrusted, "/usr/bin/seb"), (Owners.stranger.client, .untrusted, nil),
                ][roll(4)]
                let configuration = role == .untrusted ? AssessmentConfiguration(allowedFeatures: Set(AssessmentFeature.allCases))
                    : participantRoll(2) == 0 ? AssessmentConfiguration(allowedFeatures: [.screenMagnifier], participants: ["calculator"]) : nil
                if configuration?.participants.isEmpty == false, role == .app, appRunning || client == Owners.helper.client,
                   participantRoll(2) == 0 {
                    // The exam's own toplevel, mapped just before it begins (as createWindow would).
                    let window = nextWindow
                    nextWindow += 1
                    windows[window] = WindowOwner(client: client, role: role)
                    double.window(window, WindowOwner(client: client, role: role))
                    appAway = false
                }
                let id = double.desk.allocateSessionID()
                protocolSessions.append(id)
                let now = double.now
                described += " \(id) by \(client)"
                double.run { $0.begin(id, client: client, role: role, executable: executable, surface: .mappedToplevel,
                                      configuration: configuration, now: now) }
                // A participant Carrel started mostly maps its window soon after.
                if double.runningParticipants.contains("calculator"), participantRoll(3) != 0 {
                    let window = nextWindow
                    nextWindow += 1
                    windows[window] = Owners.calculator
                    described += ", calculator window \(window)"
                    double.window(window, Owners.calculator)
                }
            case .end:
                guard let id = protocolSessions.randomElement(using: &rng) else { break }
                double.run { $0.end(id) }
            case .destroySession:
                guard let id = protocolSessions.randomElement(using: &rng) else { break }
                protocolSessions.removeAll { $0 == id }
                double.run { $0.destroy(id) }
            case .presentFrames:
                double.presentFrames()
            case .presentationDeadline:
                guard let id = double.desk.invigilator.liveSessionID else { break }
                double.now = double.now.advanced(by: .seconds(10))
                let now = double.now
                double.run { $0.presentationDeadlinePassed(id, now: now) }
            case .timeLimit:
                guard let id = double.desk.invigilator.liveSessionID else { break }
                double.now = double.now.advanced(by: .seconds(9 * 3600))
                let now = double.now
                double.run { $0.timeLimitReached(id, now: now) }
            case .integrityLost:
                double.run { $0.integrityLost("an output was connected") }
            case .administrativeEnd:
                let (_, end) = double.desk.administrativeEnd(reason: "invigilator")
                double.carryOut(end)
            case .extend:
                let now = double.now
                let (_, extend) = double.desk.extendTimeLimit(byMinutes: 5, now: now)
                double.carryOut(extend)
            case .toggleHooks:
                double.restrictionsSucceed = roll(6) != 0
                double.presentsAtOnce = roll(3) != 0
                double.participantStartFailure = participantRoll(6) == 0 ? "participant calculator could not be started" : nil
            case .participantExit:
                guard double.runningParticipants.contains("calculator") else { break }
                // Its connection goes too, sometimes after the exit is seen.
                if participantRoll(2) == 0 {
                    for (id, owner) in windows where owner.role == .participant {
                        windows[id] = nil
                        double.destroy(id)
                    }
                }
                double.participantExits("calculator")
            }

            let stepLog = Array(double.log[mark...])
            record(stepLog, input: input, before: before, after: double, into: &result.outcomes)
            for failure in check(before: before, after: double, input: input, effects: effects, stepLog: stepLog,
                                 windows: windows, kiosk: mode == .kiosk || mode == .kioskAssessment, appAway: appAway) {
                result.failures.append("step \(step) (\(described)): \(failure)")
            }
            if double.stoppedWith != nil {
                // Carrel stopped: start it again and go on.
                double = DeskDouble(setup)
                appRun = 0
                appRunning = true
                appAway = false
                windows = [:]
                protocolSessions = []
            }
        }
        return result
    }

    /// Outcomes for the coverage check.
    static func record(_ log: [DeskEffect], input: Input, before: DeskDouble, after: DeskDouble, into outcomes: inout Set<String>) {
        for effect in log {
            switch effect {
            case .deliverKey: outcomes.insert("deliver")
            case .consumeKey: outcomes.insert("consume")
            case .switchVirtualTerminal: outcomes.insert("vt")
            case .checkPasscode: outcomes.insert("passcode checked")
            case .acceptSelection(.drag): outcomes.insert("drag accepted")
            case .refuseSelection(.drag, _): outcomes.insert("drag refused")
            case .acceptSelection: outcomes.insert("selection accepted")
            case .refuseSelection(_, let audit):
                outcomes.insert("selection refused")
                if audit != nil { outcomes.insert("selection audited") }
            case .relaunchApp: outcomes.insert("relaunch")
            case .stop: outcomes.insert("stop")
            case .recordBlocked(AuditKind.foreignWindow, _, _): outcomes.insert("foreign window")
            case .session(.send(_, .began)): outcomes.insert("session began")
            case .session(.send(_, .ended)): outcomes.insert("session ended")
            case .session(.send(_, .interrupted(.administrative, _))) where input == .key:
                outcomes.insert("emergency interrupt")
            case .session(.dismissConfirmation) where input == .key: outcomes.insert("confirmation answered")
            case .log(let entry) where entry.message.contains("giving up"): outcomes.insert("give up")
            case .relaunchParticipant: outcomes.insert("participant relaunch")
            case .session(.send(_, .interrupted(.integrity, let message))) where input == .participantExit && message.contains("calculator"):
                outcomes.insert("participant interrupt")
            case .session(.send(_, .failed(.participantUnavailable, _))), .session(.send(_, .updateFailed(.participantUnavailable, _))):
                outcomes.insert("participant unavailable")
            case .raiseWindow: outcomes.insert("focus switch")
            default: break
            }
        }
        if log.contains(where: { if case .session(.send(_, .began)) = $0 { true } else { false } }),
           after.desk.restrictions?.participants.isEmpty == false {
            outcomes.insert("began with participant")
        }
        if after.desk.passcodeEntry.isOpen { outcomes.insert("passcode entry") }
        if before.desk.guidedAccess.session != nil && after.desk.guidedAccess.session == nil && after.stoppedWith == nil {
            outcomes.insert("unlocked")
        }
        if after.desk.kioskGap && !before.desk.kioskGap { outcomes.insert("kiosk gap") }
        if after.desk.magnifier.zoom > 1 && before.desk.magnifier.zoom == 1 { outcomes.insert("magnifier zoomed") }
        if after.desk.magnifier == .off && before.desk.magnifier != .off { outcomes.insert("magnifier reset") }
    }

    /// Every promise the Desk makes, checked after one step.
    static func check(before: DeskDouble, after: DeskDouble, input: Input, effects: [DeskEffect], stepLog: [DeskEffect],
                      windows: [UInt64: WindowOwner], kiosk: Bool, appAway: Bool) -> [String] {
        var failures: [String] = []
        let desk = after.desk
        let rules = desk.screenRules
        // At most one session pending, active or interrupted.
        let live = desk.invigilator.sessions.values.filter(\.phase.isLive)
        if live.count > 1 { failures.append("\(live.count) live sessions") }
        if after.stoppedWith != nil {
            if input == .appExit && kiosk && !stepLog.contains(where: { if case .log(let e) = $0 { e.message.contains("giving up") } else { false } }) {
                failures.append("the app's exit stopped a kiosk without giving up")
            }
            return failures
        }
        // Every window is in the scene exactly when the rules show it.
        for (id, owner) in windows where after.isShown(id) != rules.shows(owner) {
            failures.append("window \(id) of \(owner.client) shown=\(after.isShown(id)) but the rules say \(rules.shows(owner))")
        }
        // No focus on a hidden or unmapped window; focus is what Core decides.
        if let focused = after.focused {
            if !after.isShown(focused.raw) { failures.append("focus on hidden window \(focused)") }
            if !(desk.windows.entries.first { $0.id == focused }?.isMapped ?? false) {
                failures.append("focus on unmapped window \(focused)")
            }
        }
        if after.focused != desk.focusTarget { failures.append("focus \(String(describing: after.focused)) is not Core's \(String(describing: desk.focusTarget))") }
        // Single App Mode: in the gap nothing but app windows shows, and the curtains are up.
        if kiosk && rules.kioskGap {
            if let shown = windows.first(where: { after.isShown($0.key) && $0.value.role != .app }) {
                failures.append("window \(shown.key) of \(shown.value.role) shown in the kiosk gap")
            }
            if !after.curtainRules.curtainUp(outputIndex: 0) { failures.append("no curtain in the kiosk gap") }
        }
        // From the app's exit until an app window maps again nothing else
        // shows, whatever the exited app's windows still do.
        if appAway, let shown = windows.first(where: { after.isShown($0.key) && $0.value.role != .app }) {
            failures.append("window \(shown.key) of \(shown.value.role) shown while the kiosk app is away")
        }
        // The magnifier is drawn only while the live session allows it, and
        // the compositor draws exactly what Core holds.
        if desk.magnifier != .off && !desk.magnifierAllowed { failures.append("magnifier \(desk.magnifier) drawn while not allowed") }
        if after.drawnMagnifier != desk.magnifier { failures.append("drawn magnifier \(after.drawnMagnifier) is not Core's \(desk.magnifier)") }
        // The passcode entry is open only during a lock.
        if desk.passcodeEntry.isOpen && desk.guidedAccess.session == nil { failures.append("passcode entry open without a lock") }

        if input == .key {
            let delivered = effects.filter { if case .deliverKey = $0 { true } else { false } }.count
            if delivered + (effects.consumes ? 1 : 0) != 1 { failures.append("a key neither or both delivered and consumed: \(effects)") }
            // The prompt and the passcode entry consume every key while open.
            if before.desk.askingConfirmation != nil || before.desk.passcodeEntry.isOpen, !effects.consumes {
                failures.append("a key escaped the open prompt or passcode entry")
            }
            // During a session no key reaches a client other than the session's
            // (its owner and the participants it names).
            if let restrictions = before.desk.restrictions, effects.delivers,
               let target = after.deliveredTo.last, let owner = target, owner.client != restrictions.owner,
               !(owner.role == .participant && owner.participantID.map(restrictions.participants.contains) == true) {
                failures.append("a key went to \(owner.client) during \(restrictions.session) of \(restrictions.owner)")
            }
            // The emergency binding interrupts only a session.
            let interrupted = stepLog.contains { if case .session(.send(_, .interrupted(.administrative, _))) = $0 { true } else { false } }
            if interrupted && before.desk.restrictions == nil && before.desk.invigilator.liveSessionID == nil {
                failures.append("the emergency binding interrupted with no session")
            }
            if stepLog.contains(where: { if case .switchVirtualTerminal = $0 { true } else { false } }) && before.desk.restrictions != nil {
                failures.append("VT switch during a session")
            }
        }
        // Selections and drags cross a session only from its owner (the
        // sequences give a valid serial only to the focused requester).
        if let restrictions = before.desk.restrictions, let requester = after.lastRequester,
           effects.contains(where: { if case .acceptSelection = $0 { true } else { false } }), requester != restrictions.owner {
            failures.append("\(input) by \(requester) accepted during \(restrictions.session) of \(restrictions.owner)")
        }
        // Participants run only while the restrictions of a session naming them hold.
        if !after.runningParticipants.isEmpty,
           !after.runningParticipants.isSubset(of: Set(desk.restrictions?.participants ?? [])) {
            failures.append("participants \(after.runningParticipants.sorted()) run without a session naming them")
        }
        // began only once every participant the session names shows a window.
        for case .session(.send(let id, .began)) in stepLog {
            guard let restrictions = desk.restrictions, restrictions.session == id else { continue }
            let mapped = Set(desk.windows.entries.filter { $0.isMapped && $0.owner.role == .participant }.compactMap(\.owner.participantID))
            if !Set(restrictions.participants).isSubset(of: mapped) {
                failures.append("\(id) began before participant \(restrictions.participants) showed a window")
            }
        }
        // A participant's exit during a begun session is relaunched or interrupts it; before began it fails it.
        if input == .participantExit, let restrictions = before.desk.restrictions, restrictions.participants.contains("calculator"),
           before.desk.invigilator.session(restrictions.session)?.phase.isLive == true {
            let answered = stepLog.contains {
                switch $0 {
                case .relaunchParticipant, .session(.send(_, .interrupted(.integrity, _))),
                     .session(.send(_, .failed(.participantUnavailable, _))): return true
                default: return false
                }
            }
            let alreadyInterrupted: Bool
            if case .interrupted = before.desk.invigilator.session(restrictions.session)?.phase { alreadyInterrupted = true } else { alreadyInterrupted = false }
            if !answered && !alreadyInterrupted { failures.append("a participant's exit was neither relaunched nor interrupted nor failed the begin: \(stepLog)") }
        }
        // The focus switch moves focus only among the session's windows.
        for case .raiseWindow(let id) in stepLog {
            guard let owner = desk.windows.owner(of: id), rules.shows(owner), before.desk.restrictions != nil else {
                failures.append("the focus switch raised \(id), which the session does not show")
                continue
            }
        }
        // The app's exit: under Single App Mode Carrel stops only when the
        // schedule gives up; otherwise it always stops.
        if input == .appExit, stepLog.contains(where: { if case .log(let e) = $0 { e.message.hasPrefix("app exited") } else { false } }) {
            let stopped = stepLog.stopStatus != nil
            let gaveUp = stepLog.contains { if case .log(let e) = $0 { e.message.contains("giving up") } else { false } }
            if kiosk && stopped && !gaveUp { failures.append("the app's exit stopped a kiosk without giving up") }
            if kiosk && !stopped && stepLog.relaunchDelay == nil { failures.append("the app's exit neither relaunched nor stopped") }
            if !kiosk && !stopped { failures.append("the app's exit did not stop Carrel outside Single App Mode") }
            if stopped && stepLog.stopStatus == 0 && kiosk { failures.append("a kiosk gave up with status 0") }
        }
        return failures
    }
}
