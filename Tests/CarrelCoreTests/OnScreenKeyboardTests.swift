import CarrelCore
import Testing

/// The on-screen keyboard's band: what its layer surface may be, the space
/// it leaves to the session's windows, and where its keys go. Expected
/// rectangles are written out here.
@Suite("On-screen keyboard: the band")
struct OnScreenKeyboardBandTests {
    static let output = Rect(x: 0, y: 0, width: 1200, height: 900)
    static let wvkbd = OnScreenKeyboard.Request(layer: .top, anchor: [.bottom, .left, .right],
                                                keyboardInteractive: false, desiredHeight: 250)

    @Test("wvkbd's request (top layer, bottom, left and right, no keyboard focus) is accepted")
    func wvkbdAccepted() {
        #expect(OnScreenKeyboard.refusal(Self.wvkbd) == nil)
        var bottomOnly = Self.wvkbd
        bottomOnly.anchor = [.bottom]
        #expect(OnScreenKeyboard.refusal(bottomOnly) == nil)
    }

    @Test("other layers, other anchors and keyboard focus are refused", arguments: [
        OnScreenKeyboard.Request(layer: .overlay, anchor: [.bottom, .left, .right], keyboardInteractive: false, desiredHeight: 250),
        OnScreenKeyboard.Request(layer: .bottom, anchor: [.bottom, .left, .right], keyboardInteractive: false, desiredHeight: 250),
        OnScreenKeyboard.Request(layer: .background, anchor: [.bottom], keyboardInteractive: false, desiredHeight: 250),
        OnScreenKeyboard.Request(layer: nil, anchor: [.bottom], keyboardInteractive: false, desiredHeight: 250),
        OnScreenKeyboard.Request(layer: .top, anchor: [.top, .left, .right], keyboardInteractive: false, desiredHeight: 250),
        OnScreenKeyboard.Request(layer: .top, anchor: [.top, .bottom, .left, .right], keyboardInteractive: false, desiredHeight: 900),
        OnScreenKeyboard.Request(layer: .top, anchor: [], keyboardInteractive: false, desiredHeight: 250),
        OnScreenKeyboard.Request(layer: .top, anchor: [.bottom, .left, .right], keyboardInteractive: true, desiredHeight: 250),
    ])
    func refused(request: OnScreenKeyboard.Request) {
        #expect(OnScreenKeyboard.refusal(request) != nil)
    }

    @Test("the band is full width at the bottom, at most two fifths of the height, a quarter when left to Carrel")
    func band() {
        #expect(OnScreenKeyboard.band(desiredHeight: 250, output: Self.output) == Rect(x: 0, y: 650, width: 1200, height: 250))
        #expect(OnScreenKeyboard.band(desiredHeight: 5000, output: Self.output) == Rect(x: 0, y: 540, width: 1200, height: 360))
        #expect(OnScreenKeyboard.band(desiredHeight: 0, output: Self.output) == Rect(x: 0, y: 675, width: 1200, height: 225))
        #expect(OnScreenKeyboard.band(desiredHeight: 100, output: Rect(x: -800, y: -100, width: 800, height: 600))
                == Rect(x: -800, y: 400, width: 800, height: 100))
    }

    @Test("contents beyond the band do not fit")
    func fits() {
        let band = Size(width: 1200, height: 250)
        #expect(OnScreenKeyboard.fits(extents: Rect(x: 0, y: 0, width: 1200, height: 250), in: band))
        #expect(OnScreenKeyboard.fits(extents: Rect(x: 0, y: 0, width: 0, height: 0), in: band))
        #expect(!OnScreenKeyboard.fits(extents: Rect(x: 0, y: 0, width: 1200, height: 251), in: band))
        #expect(!OnScreenKeyboard.fits(extents: Rect(x: 0, y: -1, width: 100, height: 100), in: band))
        #expect(!OnScreenKeyboard.fits(extents: Rect(x: -5, y: 0, width: 100, height: 100), in: band))
        #expect(!OnScreenKeyboard.fits(extents: Rect(x: 0, y: 0, width: 1201, height: 10), in: band))
    }
}

@Suite("Desk: the on-screen keyboard")
struct OnScreenKeyboardDeskTests {
    static let output = Rect(x: 0, y: 0, width: 1200, height: 900)
    static let keyboard = ClientID(60)
    static let secondKeyboard = ClientID(61)

    /// A desk in a session begun on the app's behalf allowing `allowed`, or
    /// none; the app's window mapped.
    func desk(session allowed: Set<AssessmentFeature>? = nil) -> DeskDouble {
        let setup = Desk.Setup(policy: Policy.builtIn, appName: allowed == nil ? nil : "exam-app",
                               assessment: allowed.map { AssessmentConfiguration(allowedFeatures: $0) })
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        if allowed != nil { #expect(double.events[SessionID(1)] == [.began]) }
        return double
    }

    /// The keyboard's surface accepted and placed with wvkbd's request.
    func placed(_ double: inout DeskDouble) -> Rect? {
        let (accepted, _) = double.desk.layerSurfaceCreated(by: Self.keyboard, role: .onScreenKeyboard, layer: .top)
        #expect(accepted)
        let (placement, effects) = double.desk.onScreenKeyboardCommitted(
            by: Self.keyboard, OnScreenKeyboardBandTests.wvkbd, extents: Rect(x: 0, y: 0, width: 1200, height: 250), output: Self.output)
        double.carryOut(effects)
        guard case .place(let band, let shown) = placement else { return nil }
        #expect(shown)
        return band
    }

    @Test("the keyboard runs only during a session that allows it")
    func runsOnlyWhenAllowed() {
        #expect(!desk().desk.onScreenKeyboardAllowed)
        #expect(!desk(session: []).desk.onScreenKeyboardAllowed)
        #expect(!desk(session: [.inputMethod, .screenReader]).desk.onScreenKeyboardAllowed)
        #expect(desk(session: [.onScreenKeyboard]).desk.onScreenKeyboardAllowed)
        #expect(!OnScreenKeyboard.runs(under: nil))
    }

    @Test("a layer surface is refused from every other role, outside such a session, and a second one", arguments: Role.allCases)
    func onlyTheKeyboardsOneSurface(role: Role) {
        var allowed = desk(session: [.onScreenKeyboard])
        let (accepted, effects) = allowed.desk.layerSurfaceCreated(by: ClientID(70), role: role, layer: .top)
        #expect(accepted == (role == .onScreenKeyboard))
        if role != .onScreenKeyboard {
            #expect(effects.contains { if case .recordBlocked = $0 { return true } else { return false } })
        }
        var denied = desk(session: [])
        #expect(!denied.desk.layerSurfaceCreated(by: ClientID(70), role: role, layer: .top).accepted)
        var outside = desk()
        #expect(!outside.desk.layerSurfaceCreated(by: ClientID(70), role: role, layer: .top).accepted)
    }

    @Test("a second surface, a second keyboard client and another layer are refused")
    func secondSurfaceRefused() {
        var double = desk(session: [.onScreenKeyboard])
        #expect(!double.desk.layerSurfaceCreated(by: Self.keyboard, role: .onScreenKeyboard, layer: .overlay).accepted)
        #expect(double.desk.layerSurfaceCreated(by: Self.keyboard, role: .onScreenKeyboard, layer: .top).accepted)
        #expect(!double.desk.layerSurfaceCreated(by: Self.keyboard, role: .onScreenKeyboard, layer: .top).accepted)
        #expect(!double.desk.layerSurfaceCreated(by: Self.secondKeyboard, role: .onScreenKeyboard, layer: .top).accepted)
    }

    @Test("placed, the band takes the bottom and the exam keeps the space above it; gone, the exam gets it back")
    func examKeepsTheSpaceAbove() {
        var double = desk(session: [.onScreenKeyboard])
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Self.output)
        #expect(placed(&double) == Rect(x: 0, y: 650, width: 1200, height: 250))
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Rect(x: 0, y: 0, width: 1200, height: 650))
        let effects = double.run { $0.onScreenKeyboardSurfaceGone(Self.keyboard) }
        #expect(effects.contains { if case .applyScreenRules = $0 { return true } else { return false } })
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Self.output)
    }

    @Test("the exam and a participant's column both stop above the band")
    func participantsColumnAboveTheBand() {
        var setup = Desk.Setup(policy: Policy.builtIn, appName: "exam-app",
                               assessment: AssessmentConfiguration(allowedFeatures: [.onScreenKeyboard], participants: ["calculator"]))
        setup.policy.participants = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"])]
        setup.policy.session.knownParticipants = ["calculator"]
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        double.window(2, Owners.calculator)
        #expect(placed(&double) == Rect(x: 0, y: 650, width: 1200, height: 250))
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Rect(x: 0, y: 0, width: 800, height: 650))
        #expect(double.desk.area(for: Owners.calculator, output: Self.output) == Rect(x: 800, y: 0, width: 400, height: 650))
    }

    @Test("a surface that turns to another layer, anchor or keyboard focus is closed and the exam gets the space back")
    func changedRequestCloses() {
        var double = desk(session: [.onScreenKeyboard])
        _ = placed(&double)
        var grabbing = OnScreenKeyboardBandTests.wvkbd
        grabbing.keyboardInteractive = true
        let (placement, _) = double.desk.onScreenKeyboardCommitted(by: Self.keyboard, grabbing,
                                                                   extents: Rect(x: 0, y: 0, width: 1200, height: 250), output: Self.output)
        #expect(placement == .close)
        #expect(double.desk.area(for: Owners.app, output: Self.output) == Self.output)
    }

    @Test("contents beyond the band are not shown, and recorded")
    func beyondTheBandHidden() {
        var double = desk(session: [.onScreenKeyboard])
        _ = placed(&double)
        let (placement, effects) = double.desk.onScreenKeyboardCommitted(
            by: Self.keyboard, OnScreenKeyboardBandTests.wvkbd, extents: Rect(x: 0, y: -650, width: 1200, height: 900), output: Self.output)
        #expect(placement == .place(band: Rect(x: 0, y: 650, width: 1200, height: 250), shown: false))
        #expect(effects.contains { if case .recordBlocked = $0 { return true } else { return false } })
    }

    @Test("its keys reach the session's focused window, never an untrusted one, and only while allowed")
    func keysOnlyToTheSession() {
        let allowed = desk(session: [.onScreenKeyboard])
        #expect(allowed.desk.virtualKeyboardKey(from: Self.keyboard, role: .onScreenKeyboard) == [.deliverKey(window: WindowID(1))])
        #expect(desk(session: [.inputMethod]).desk.virtualKeyboardKey(from: Self.keyboard, role: .onScreenKeyboard) == [.consumeKey])
        #expect(desk().desk.virtualKeyboardKey(from: Self.keyboard, role: .onScreenKeyboard) == [.consumeKey])
        for role in [Role.app, .participant, .untrusted] {
            #expect(allowed.desk.virtualKeyboardKey(from: Self.keyboard, role: role) == [.consumeKey])
        }
    }

    @Test("outside a session the focused untrusted window gets nothing from it either")
    func untrustedFocusGetsNothing() {
        var double = desk()
        double.destroy(1)
        double.window(2, Owners.stranger)
        #expect(double.desk.focusTarget == WindowID(2))
        #expect(double.desk.virtualKeyboardKey(from: Self.keyboard, role: .onScreenKeyboard) == [.consumeKey])
    }
}
