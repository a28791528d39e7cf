import CarrelCore
import Testing

@Suite("Placement: the exam beside its participants")
struct SessionLayoutTests {
    let output = Rect(x: 0, y: 0, width: 1200, height: 900)

    @Test("no participant: the exam fills the output")
    func none() {
        let layout = SessionLayout(output: output, participantCount: 0)
        #expect(layout.exam == output)
        #expect(layout.participants.isEmpty)
    }

    @Test("one participant: the exam keeps the left two thirds, the participant the right column")
    func one() {
        let layout = SessionLayout(output: output, participantCount: 1)
        #expect(layout.exam == Rect(x: 0, y: 0, width: 800, height: 900))
        #expect(layout.participants == [Rect(x: 800, y: 0, width: 400, height: 900)])
    }

    @Test("several participants share the column one above the other, the last taking the remainder")
    func several() {
        let layout = SessionLayout(output: Rect(x: 100, y: 50, width: 1200, height: 901), participantCount: 3)
        #expect(layout.exam == Rect(x: 100, y: 50, width: 800, height: 901))
        #expect(layout.participants == [
            Rect(x: 900, y: 50, width: 400, height: 300),
            Rect(x: 900, y: 350, width: 400, height: 300),
            Rect(x: 900, y: 650, width: 400, height: 301),
        ])
    }

    @Test("a narrow output still gives the participant 320 pixels, but never more than half")
    func narrow() {
        #expect(SessionLayout(output: Rect(x: 0, y: 0, width: 800, height: 600), participantCount: 1).participants
            == [Rect(x: 480, y: 0, width: 320, height: 600)])
        #expect(SessionLayout(output: Rect(x: 0, y: 0, width: 500, height: 600), participantCount: 1).exam
            == Rect(x: 0, y: 0, width: 250, height: 600))
    }
}

@Suite("Desk: participants")
struct DeskParticipantTests {
    static let output = Rect(x: 0, y: 0, width: 1200, height: 900)
    static let dictionary = WindowOwner(client: ClientID(5), role: .participant, participantID: "dictionary")
    static let calculatorAgain = WindowOwner(client: ClientID(6), role: .participant, participantID: "calculator")

    /// A plain desk whose policy defines a calculator (with `onExit`) and a dictionary, with the exam's window mapped.
    func desk(onExit: ParticipantExitPolicy = .interrupt) -> DeskDouble {
        var setup = DeskMode.plain.setup()
        setup.policy.participants = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"], onExit: onExit),
                                     "dictionary": ParticipantPolicy(command: ["/usr/bin/dict"])]
        setup.policy.session.knownParticipants = ["calculator", "dictionary"]
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        return double
    }

    /// The exam begins a session naming `participants`.
    func begin(_ double: inout DeskDouble, _ participants: [String] = ["calculator"]) -> SessionID {
        let id = double.desk.allocateSessionID()
        let now = double.now
        double.run { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                              configuration: AssessmentConfiguration(participants: participants), now: now) }
        return id
    }

    @Test("began waits until every participant named shows a window")
    func beganWaitsForWindows() {
        var double = desk()
        let id = begin(&double, ["calculator", "dictionary"])
        #expect(double.events[id] == nil, "the frame was presented, but no participant has a window yet")
        double.window(2, Owners.calculator)
        #expect(double.events[id] == nil, "the dictionary has none yet")
        double.window(3, Self.dictionary)
        #expect(double.events[id] == [.began])
        #expect(double.isShown(1) && double.isShown(2) && double.isShown(3))
    }

    @Test("a participant with no window by the presentation deadline fails the begin with participant_unavailable, nothing left applied")
    func noWindowInTime() {
        var double = desk()
        let id = begin(&double)
        double.now = double.now.advanced(by: .seconds(3))
        let now = double.now
        double.run { $0.presentationDeadlinePassed(id, now: now) }
        guard case .failed(.participantUnavailable, let message)? = double.events[id]?.last else {
            Issue.record("expected failed(participant_unavailable), got \(String(describing: double.events[id]))")
            return
        }
        #expect(message.contains("calculator") && message.contains("no window"))
        #expect(double.desk.restrictions == nil)
        #expect(double.desk.invigilator.lockState == .inactive)
        #expect(double.runningParticipants.isEmpty)
    }

    @Test("a participant that cannot start fails the begin with participant_unavailable; no restriction holds")
    func cannotStart() {
        var double = desk()
        double.participantStartFailure = "participant calculator could not be started: /usr/bin/galculator: No such file or directory"
        let id = begin(&double)
        #expect(double.events[id] == [.failed(.participantUnavailable, message: double.participantStartFailure!)])
        #expect(double.desk.restrictions == nil)
        #expect(double.desk.invigilator.lockState == .inactive)
    }

    @Test("a participant that exits before began fails the begin")
    func exitsBeforeBegan() {
        var double = desk(onExit: .relaunch)
        let id = begin(&double)
        double.participantExits("calculator")
        guard case .failed(.participantUnavailable, _)? = double.events[id]?.last else {
            Issue.record("expected failed(participant_unavailable), got \(String(describing: double.events[id]))")
            return
        }
        #expect(double.participantRelaunches.isEmpty, "only a begun session relaunches")
    }

    @Test("participant windows are shown only in the session that names them, and placed beside the exam")
    func shownOnlyInTheirSession() {
        var double = desk()
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Self.output, "no session: the exam fills the output")
        let id = begin(&double)
        double.window(2, Owners.calculator)
        double.window(3, Self.dictionary)
        #expect(double.events[id] == [.began])
        #expect(double.isShown(2) && !double.isShown(3), "the dictionary is not named by this session")
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Rect(x: 0, y: 0, width: 800, height: 900))
        #expect(double.desk.area(for: Owners.calculator, output: Self.output) == Rect(x: 800, y: 0, width: 400, height: 900))
        #expect(double.desk.area(for: Owners.stranger, output: Self.output) == Self.output)
        double.run { $0.end(id) }
        #expect(double.events[id]?.last == .ended)
        #expect(double.runningParticipants.isEmpty, "the participants were stopped with the restrictions")
        let reverted = double.log.firstIndex(of: .session(.revertRestrictions(id)))
        let ended = double.log.firstIndex(of: .session(.send(id, .ended)))
        #expect(reverted != nil && ended != nil && reverted! < ended!, "stopped before ended is sent")
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Self.output)
    }

    @Test("Ctrl+Alt+Tab moves focus between the exam and its participant only, during a session")
    func focusSwitch() {
        var double = desk()
        double.window(9, Owners.stranger)
        let switchKey = KeyPress.press(Sym.tab, [.ctrl, .alt])
        #expect(double.key(switchKey).delivers, "outside a session the key is the client's")
        let id = begin(&double)
        double.window(2, Owners.calculator)
        #expect(double.events[id] == [.began])
        #expect(double.focused == WindowID(1), "the participant's window mapped, but the student stays in the exam")
        #expect(double.key(switchKey).consumes)
        #expect(double.focused == WindowID(2))
        #expect(double.key(switchKey).consumes)
        #expect(double.focused == WindowID(1))
        #expect(double.raised == [WindowID(2), WindowID(1)], "never the stranger's window")
        #expect(double.key(.press(Sym.tab, [.ctrl])).delivers, "Ctrl+Tab alone is the exam's")
        #expect(double.key(.press(Sym.tab)).delivers)
    }

    @Test("a popup grab stands only for the client whose window has focus: the switch back to the exam ends the participant's")
    func popupGrabFollowsFocus() {
        var double = desk()
        double.window(9, Owners.stranger)
        let switchKey = KeyPress.press(Sym.tab, [.ctrl, .alt])
        #expect(double.desk.seatGrabAllowed(for: Owners.app.client), "outside a session the exam has focus")
        #expect(!double.desk.seatGrabAllowed(for: Owners.stranger.client), "a window without focus never holds the seat")
        _ = begin(&double)
        double.window(2, Owners.calculator)
        #expect(!double.desk.seatGrabAllowed(for: Owners.calculator.client), "mapped beneath the exam, not focused")
        #expect(double.key(switchKey).consumes)
        #expect(double.focused == WindowID(2))
        #expect(double.desk.seatGrabAllowed(for: Owners.calculator.client), "switched to: its menus may grab")
        #expect(!double.desk.seatGrabAllowed(for: Owners.app.client))
        #expect(double.key(switchKey).consumes)
        #expect(double.focused == WindowID(1))
        #expect(!double.desk.seatGrabAllowed(for: Owners.calculator.client), "switched away: its grab ends")
        #expect(double.desk.seatGrabAllowed(for: Owners.app.client))
        #expect(!double.desk.seatGrabAllowed(for: Owners.stranger.client), "hidden during the session")
        _ = double.run { $0.toplevelUnmapped(WindowID(1)) }
        _ = double.run { $0.toplevelUnmapped(WindowID(2)) }
        #expect(!double.desk.seatGrabAllowed(for: Owners.app.client), "no window has focus: nobody holds the seat")
        #expect(!double.desk.seatGrabAllowed(for: Owners.calculator.client))
    }

    @Test("a window mapped beneath another goes just under it; beneath nothing (or an unmapped window) it goes on top")
    func mappedBeneath() {
        var stack = WindowStack()
        stack.created(WindowID(1), owner: Owners.app)
        stack.created(WindowID(2), owner: Owners.calculator)
        stack.created(WindowID(3), owner: Self.dictionary)
        stack.mapped(WindowID(1))
        stack.mapped(WindowID(2), beneath: WindowID(1))
        #expect(stack.entries.map(\.id) == [WindowID(3), WindowID(2), WindowID(1)])
        stack.mapped(WindowID(3), beneath: nil)
        #expect(stack.entries.map(\.id) == [WindowID(2), WindowID(1), WindowID(3)])
        stack.unmapped(WindowID(1))
        stack.mapped(WindowID(2), beneath: WindowID(1))
        #expect(stack.entries.last?.id == WindowID(2), "an unmapped window is no anchor")
    }

    @Test("on_exit = interrupt: a begun session is interrupted (integrity) when its participant exits")
    func exitInterrupts() {
        var double = desk(onExit: .interrupt)
        let id = begin(&double)
        double.window(2, Owners.calculator)
        double.destroy(2)
        double.participantExits("calculator")
        guard case .interrupted(.integrity, let message)? = double.events[id]?.last else {
            Issue.record("expected interrupted(integrity), got \(String(describing: double.events[id]))")
            return
        }
        #expect(message.contains("calculator") && message.contains("on_exit = interrupt"))
        #expect(double.participantRelaunches.isEmpty)
    }

    @Test("on_exit = relaunch: relaunched and shown again, up to the bound; then the session is interrupted")
    func exitRelaunches() {
        var double = desk(onExit: .relaunch)
        let id = begin(&double)
        double.window(2, Owners.calculator)
        double.destroy(2)
        double.participantExits("calculator")
        #expect(double.participantRelaunches == ["calculator"])
        #expect(double.events[id] == [.began], "the session goes on")
        double.window(3, Self.calculatorAgain)
        #expect(double.isShown(3) && double.focused == WindowID(1), "the relaunched calculator shows; the exam keeps focus")
        for _ in 1..<Desk.maximumParticipantRelaunches { double.participantExits("calculator") }
        #expect(double.participantRelaunches.count == Desk.maximumParticipantRelaunches)
        #expect(double.events[id] == [.began])
        double.participantExits("calculator")
        guard case .interrupted(.integrity, _)? = double.events[id]?.last else {
            Issue.record("expected interrupted(integrity) after \(Desk.maximumParticipantRelaunches) relaunches")
            return
        }
    }

    @Test("a relaunch that fails interrupts the session")
    func relaunchFails() {
        var double = desk(onExit: .relaunch)
        let id = begin(&double)
        double.window(2, Owners.calculator)
        double.participantStartFailure = "no such file"
        double.participantExits("calculator")
        guard case .interrupted(.integrity, let message)? = double.events[id]?.last else {
            Issue.record("expected interrupted(integrity)")
            return
        }
        #expect(message.contains("could not be relaunched"))
    }

    @Test("an update adding a participant that cannot start changes nothing: update_failed(participant_unavailable)")
    func updateAllOrNothing() {
        var double = desk()
        let id = begin(&double)
        double.window(2, Owners.calculator)
        let before = double.desk.restrictions
        double.participantStartFailure = "participant dictionary could not be started: /usr/bin/dict: No such file or directory"
        double.run { $0.update(id, to: AssessmentConfiguration(participants: ["calculator", "dictionary"])) }
        #expect(double.events[id]?.last == .updateFailed(.participantUnavailable, message: double.participantStartFailure!))
        #expect(double.desk.restrictions == before)
        #expect(double.runningParticipants == ["calculator"])
        #expect(double.isShown(2))
        double.participantStartFailure = nil
        double.run { $0.update(id, to: AssessmentConfiguration(participants: ["dictionary"])) }
        #expect(double.events[id]?.last == .updated)
        #expect(double.runningParticipants == ["dictionary"])
        #expect(!double.isShown(2), "the calculator left with the update")
    }
}

@Suite("Network provider: which participants keep the network")
struct ParticipantNetworkTests {
    @Test("only participants the session names with network = true, in the session's order")
    func allowed() {
        let policy = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"]),
                      "browser": ParticipantPolicy(command: ["/usr/bin/browser"], network: true),
                      "dictionary": ParticipantPolicy(command: ["/usr/bin/dict"], network: true)]
        let set = RestrictionSet(session: SessionID(1), owner: ClientID(1), ownerRole: .app,
                                 configuration: AssessmentConfiguration(participants: ["dictionary", "calculator", "browser"]), policy: SessionPolicy())
        #expect(ParticipantNetwork.allowed(set, policy: policy) == ["dictionary", "browser"])
        let none = RestrictionSet(session: SessionID(2), owner: ClientID(1), ownerRole: .app,
                                  configuration: AssessmentConfiguration(participants: ["calculator"]), policy: SessionPolicy())
        #expect(ParticipantNetwork.allowed(none, policy: policy).isEmpty)
        #expect(ParticipantNetwork.cgroupName(run: 4711, participant: "browser") == "carrel-4711-participant-browser")
    }

    @Test("a configuration takes network away (a participant's, the owner's) but never gives more than the policy")
    func denied() {
        let policy = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"]),
                      "browser": ParticipantPolicy(command: ["/usr/bin/browser"], network: true),
                      "dictionary": ParticipantPolicy(command: ["/usr/bin/dict"], network: true)]
        let configuration = AssessmentConfiguration(participants: ["dictionary", "calculator", "browser"],
                                                    networkDeniedParticipants: ["browser", "calculator"])
        let set = RestrictionSet(session: SessionID(1), owner: ClientID(1), ownerRole: .app, configuration: configuration,
                                 policy: SessionPolicy())
        #expect(ParticipantNetwork.allowed(set, policy: policy) == ["dictionary"])
        #expect(NetworkExemption.keepsNetwork(set))
        #expect(set.description.hasSuffix("network-denied=[browser,calculator]"))
        let ownerless = RestrictionSet(session: SessionID(2), owner: ClientID(1), ownerRole: .app,
                                       configuration: AssessmentConfiguration(ownerNetworkDenied: true), policy: SessionPolicy())
        #expect(!NetworkExemption.keepsNetwork(ownerless))
        #expect(ownerless.description.hasSuffix("network-denied=[owner]"))
    }
}

@Suite("Desk: the clipboard between the exam and its participants")
struct ParticipantClipboardTests {
    @Test("focus moving between exam and participant empties the selections; within one client or outside a session it does not")
    func isolated() {
        var setup = DeskMode.plain.setup()
        setup.policy.participants = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"])]
        setup.policy.session.knownParticipants = ["calculator"]
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        double.window(9, Owners.calculator)
        #expect(double.focusMoves(to: 1).isEmpty && double.focusMoves(to: 9).isEmpty, "no session: nothing is isolated")
        let id = double.desk.allocateSessionID()
        let now = double.now
        double.run { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                              configuration: AssessmentConfiguration(participants: ["calculator"]), now: now) }
        #expect(double.events[id] == [.began])
        // The exam has focus once the session began (the calculator's window is beneath it).
        #expect(double.focusMoves(to: 9).contains(.session(.clearSelections)), "exam → participant")
        #expect(double.focusMoves(to: 1).contains(.session(.clearSelections)), "participant → exam")
        double.window(10, Owners.calculator)
        #expect(double.focusMoves(to: 9).contains(.session(.clearSelections)), "exam → participant again")
        #expect(!double.focusMoves(to: 10).contains(.session(.clearSelections)), "between the participant's own windows")
        _ = double.focusMoves(to: 1)
        let switched = double.key(.press(Sym.tab, [.ctrl, .alt]))
        #expect(switched.consumes)
        #expect(double.log.suffix(4).contains(.session(.clearSelections)), "the focus switch goes through the same rule")
    }
}

extension DeskDouble {
    /// The compositor reports focus on window `id`; returns what the Desk decided.
    mutating func focusMoves(to id: UInt64) -> [DeskEffect] {
        run { $0.focusMoved(to: WindowID(id)) }
    }
}
