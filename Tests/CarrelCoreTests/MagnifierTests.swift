import CarrelCore
import Testing

@Suite("Magnifier: zoom levels, colour filters, the visible region")
struct MagnifierTests {
    @Test("zoom in steps 1, 2, 3, 4, 6, 8 and stays at 8; out steps back and stays at 1; off goes to 1")
    func levels() {
        var m = Magnifier()
        #expect(m.zoom == 1 && !m.isDrawn)
        var seen: [Int] = []
        for _ in 0..<7 {
            m.zoomIn()
            seen.append(m.zoom)
        }
        #expect(seen == [2, 3, 4, 6, 8, 8, 8])
        #expect(m.zoomIn() == false)
        m.zoomOut()
        #expect(m.zoom == 6)
        #expect(m.zoomOff() == true)
        #expect(m.zoom == 1)
        #expect(m.zoomOut() == false && m.zoom == 1)
        #expect(m.zoomOff() == false)
    }

    @Test("the colour filter cycles none → inverted → high contrast → none; zoom off keeps it")
    func filters() {
        var m = Magnifier()
        m.nextColourFilter()
        #expect(m.colourFilter == .inverted && m.isDrawn)
        m.zoomIn()
        m.zoomOff()
        #expect(m.colourFilter == .inverted && m.isDrawn)
        m.nextColourFilter()
        #expect(m.colourFilter == .highContrast)
        m.nextColourFilter()
        #expect(m.colourFilter == ColourFilter.none && !m.isDrawn)
    }

    @Test("high contrast: greys pulled apart around 128 and clamped; luma weights 77/150/29")
    func highContrastCurve() {
        #expect(ColourFilter.highContrastLevel(128) == 128)
        #expect(ColourFilter.highContrastLevel(160) == 192)
        #expect(ColourFilter.highContrastLevel(96) == 64)
        #expect(ColourFilter.highContrastLevel(200) == 255)
        #expect(ColourFilter.highContrastLevel(40) == 0)
        #expect(ColourFilter.luma(red: 255, green: 255, blue: 255) == 255)
        #expect(ColourFilter.luma(red: 255, green: 0, blue: 0) == 76)
        #expect(ColourFilter.luma(red: 0, green: 0, blue: 255) == 28)
    }

    static let output = Size(width: 800, height: 600)

    func zoomed(_ times: Int) -> Magnifier {
        var m = Magnifier()
        while m.zoom < times { m.zoomIn() }
        return m
    }

    @Test("at 2× the region is half the output; the focus stays where it is on the output")
    func regionKeepsFocusInPlace() {
        let m = zoomed(2)
        #expect(m.visibleRegion(around: Point(x: 400, y: 300), output: Self.output) == Rect(x: 200, y: 150, width: 400, height: 300))
        // (100, 60) on the output shows region origin + (100, 60) / 2 = (100, 60).
        #expect(m.visibleRegion(around: Point(x: 100, y: 60), output: Self.output) == Rect(x: 50, y: 30, width: 400, height: 300))
    }

    @Test("at the edges and beyond them the region stays inside the output", arguments: [2, 3, 4, 6, 8])
    func regionInsideOutput(zoom: Int) {
        let m = zoomed(zoom)
        for focus in [Point(x: 0, y: 0), Point(x: 799, y: 599), Point(x: 800, y: 600), Point(x: -50, y: 9000), Point(x: 5000, y: -3)] {
            let r = m.visibleRegion(around: focus, output: Self.output)
            #expect(r.x >= 0 && r.y >= 0 && r.x + r.width <= 800 && r.y + r.height <= 600, "\(r) for \(focus)")
            #expect(r.width == (800 + zoom - 1) / zoom && r.height == (600 + zoom - 1) / zoom)
        }
        #expect(m.visibleRegion(around: Point(x: 0, y: 0), output: Self.output).x == 0)
        let corner = m.visibleRegion(around: Point(x: 800, y: 600), output: Self.output)
        #expect(corner.x + corner.width == 800 && corner.y + corner.height == 600)
    }

    @Test("unzoomed, the region is the whole output")
    func unzoomed() {
        #expect(Magnifier().visibleRegion(around: Point(x: 123, y: 45), output: Self.output) == Rect(x: 0, y: 0, width: 800, height: 600))
        // Before anything moved the view is on the output's centre.
        var doubled = Magnifier()
        _ = doubled.zoomIn()
        #expect(doubled.visibleRegion(around: nil, output: Self.output) == Rect(x: 200, y: 150, width: 400, height: 300))
    }

    @Test("the focus follows whichever moved last, the pointer or the text cursor")
    func focus() {
        var focus = MagnifierFocus()
        #expect(focus.point == nil)
        focus.pointerMoved(to: Point(x: 10, y: 20))
        #expect(focus.point == Point(x: 10, y: 20))
        let first = focus.textCursorReported(Rect(x: 100, y: 200, width: 2, height: 20))
        #expect(first && focus.point == Point(x: 101, y: 210))
        focus.pointerMoved(to: Point(x: 5, y: 6))
        #expect(focus.point == Point(x: 5, y: 6))
        // The same rectangle again (a client repeats it every commit) does not take the view back.
        let repeated = focus.textCursorReported(Rect(x: 100, y: 200, width: 2, height: 20))
        #expect(!repeated && focus.point == Point(x: 5, y: 6))
        let moved = focus.textCursorReported(Rect(x: 110, y: 200, width: 2, height: 20))
        #expect(moved && focus.point == Point(x: 111, y: 210))
        // The pointer reported again where it was (windows changed under it) does not take the view back either.
        let still = focus.pointerMoved(to: Point(x: 5, y: 6))
        #expect(!still && focus.point == Point(x: 111, y: 210))
        let movedOn = focus.pointerMoved(to: Point(x: 6, y: 6))
        #expect(movedOn && focus.point == Point(x: 6, y: 6))
    }
}

@Suite("Desk: the magnifier's keys and its reset")
struct MagnifierDeskTests {
    static let equal: UInt32 = 0x3d
    static let minus: UInt32 = 0x2d
    static let zero: UInt32 = 0x30
    static let c: UInt32 = 0x63
    static let keys = MagnifierKeys([
        .zoomIn: EmergencyBinding(modifiers: [.logo, .alt], keysym: equal),
        .zoomOut: EmergencyBinding(modifiers: [.logo, .alt], keysym: minus),
        .zoomOff: EmergencyBinding(modifiers: [.logo, .alt], keysym: zero),
        .nextColourFilter: EmergencyBinding(modifiers: [.logo, .alt], keysym: c),
    ])

    /// A desk with the app's window mapped and, when `allowing` is given, a
    /// session of the app with those features begun.
    func desk(allowing features: Set<AssessmentFeature>?) -> (DeskDouble, SessionID?) {
        var setup = Desk.Setup(policy: .builtIn, emergency: emergencyKeys)
        setup.magnifierKeys = Self.keys
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        guard let features else { return (double, nil) }
        let id = double.desk.allocateSessionID()
        let now = double.now
        double.run { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                              configuration: AssessmentConfiguration(allowedFeatures: features), now: now) }
        #expect(double.events[id] == [.began])
        return (double, id)
    }

    @Test("allowed: the keys are Carrel's and change what is drawn")
    func allowed() {
        var (double, _) = desk(allowing: [.screenMagnifier])
        let delivered = double.deliveredTo.count
        double.key(.press(Self.equal, [.logo, .alt]))
        #expect(double.drawnMagnifier.zoom == 2)
        double.key(.press(Self.equal, [.logo, .alt]))
        #expect(double.drawnMagnifier.zoom == 3)
        double.key(.press(Self.minus, [.logo, .alt]))
        #expect(double.drawnMagnifier.zoom == 2)
        double.key(.press(Self.c, [.logo, .alt]))
        #expect(double.drawnMagnifier.colourFilter == .inverted && double.drawnMagnifier.zoom == 2)
        double.key(.press(Self.zero, [.logo, .alt]))
        #expect(double.drawnMagnifier.zoom == 1 && double.drawnMagnifier.colourFilter == .inverted)
        #expect(double.consumedKeys == 5)
        #expect(double.deliveredTo.count == delivered)
        #expect(double.desk.magnifier == double.drawnMagnifier)
    }

    @Test("a key that changes nothing (zoom out at 1×) is still Carrel's, and draws nothing new")
    func noChange() {
        var (double, _) = desk(allowing: [.screenMagnifier])
        let effects = double.key(.press(Self.minus, [.logo, .alt]))
        #expect(effects == [.consumeKey])
    }

    @Test("the same keys with other modifiers, and releases, go to the app")
    func otherModifiers() {
        var (double, _) = desk(allowing: [.screenMagnifier])
        double.key(.press(Self.equal, [.logo, .alt, .shift]))
        double.key(.press(Self.equal, [.alt]))
        double.key(.release(Self.equal))
        #expect(double.consumedKeys == 0)
        #expect(double.deliveredTo == [Owners.app, Owners.app, Owners.app])
        #expect(double.drawnMagnifier == .off)
    }

    @Test("denied, or outside a session, the keys are ordinary keys for the focused window",
          arguments: [Set<AssessmentFeature>?.none, [], [.screenReader, .onScreenKeyboard]])
    func denied(features: Set<AssessmentFeature>?) {
        var (double, _) = desk(allowing: features)
        for sym in [Self.equal, Self.minus, Self.zero, Self.c] {
            double.key(.press(sym, [.logo, .alt]))
        }
        #expect(double.consumedKeys == 0)
        #expect(double.deliveredTo == Array(repeating: Owners.app, count: 4))
        #expect(double.drawnMagnifier == .off && double.desk.magnifier == .off)
        #expect(!double.log.contains { if case .drawMagnifier = $0 { return true } else { return false } })
    }

    @Test("ending the session turns it off")
    func end() {
        var (double, id) = desk(allowing: [.screenMagnifier])
        double.key(.press(Self.equal, [.logo, .alt]))
        double.key(.press(Self.c, [.logo, .alt]))
        #expect(double.drawnMagnifier.isDrawn)
        double.run { $0.end(id!) }
        #expect(double.events[id!]?.last == .ended)
        #expect(double.drawnMagnifier == .off && double.desk.magnifier == .off)
        // After the end the keys are the app's again.
        double.key(.press(Self.equal, [.logo, .alt]))
        #expect(double.drawnMagnifier == .off)
        #expect(double.deliveredTo.last == Owners.app)
    }

    @Test("an interruption turns it off; while interrupted the keys are the app's")
    func interruption() {
        var (double, id) = desk(allowing: [.screenMagnifier])
        double.key(.press(Self.equal, [.logo, .alt]))
        double.run { $0.integrityLost("a display was connected") }
        guard case .interrupted? = double.events[id!]?.last else {
            Issue.record("expected interrupted, got \(String(describing: double.events[id!]))")
            return
        }
        #expect(double.drawnMagnifier == .off)
        double.key(.press(Self.equal, [.logo, .alt]))
        #expect(double.drawnMagnifier == .off)
        #expect(double.deliveredTo.last == Owners.app)
    }

    @Test("an update that denies the magnifier turns it off; one that keeps it leaves it")
    func update() {
        var (double, id) = desk(allowing: [.screenMagnifier])
        double.key(.press(Self.equal, [.logo, .alt]))
        double.run { $0.update(id!, to: AssessmentConfiguration(allowedFeatures: [.screenMagnifier, .spellCheck])) }
        #expect(double.drawnMagnifier.zoom == 2)
        double.run { $0.update(id!, to: AssessmentConfiguration(allowedFeatures: [.spellCheck])) }
        #expect(double.events[id!]?.last == .updated)
        #expect(double.drawnMagnifier == .off)
        double.key(.press(Self.equal, [.logo, .alt]))
        #expect(double.drawnMagnifier == .off)
    }

    @Test("a magnifier key that is also the emergency binding interrupts: nothing shadows the emergency binding")
    func emergencyWinsOverMagnifier() {
        var setup = Desk.Setup(policy: .builtIn, emergency: emergencyKeys)
        setup.magnifierKeys = MagnifierKeys([.zoomIn: emergencyKeys])
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        let id = double.desk.allocateSessionID()
        let now = double.now
        double.run { $0.begin(id, client: Owners.app.client, role: .app, surface: .mappedToplevel,
                              configuration: AssessmentConfiguration(allowedFeatures: [.screenMagnifier]), now: now) }
        double.key(.press(Sym.delete, [.ctrl, .alt]))
        guard case .interrupted(.administrative, _)? = double.events[id]?.last else {
            Issue.record("expected interrupted(administrative), got \(String(describing: double.events[id]))")
            return
        }
        #expect(double.drawnMagnifier == .off)
    }

    @Test("the emergency binding still interrupts while the magnifier is on")
    func emergencyStillWorks() {
        var (double, id) = desk(allowing: [.screenMagnifier])
        double.key(.press(Self.equal, [.logo, .alt]))
        double.key(.press(Sym.delete, [.ctrl, .alt]))
        guard case .interrupted(.administrative, _)? = double.events[id!]?.last else {
            Issue.record("expected interrupted(administrative), got \(String(describing: double.events[id!]))")
            return
        }
        #expect(double.drawnMagnifier == .off)
    }
}

@Suite("Policy: [magnifier]")
struct MagnifierPolicyTests {
    @Test("the built-in keys are Logo+Alt with =, -, 0 and c")
    func defaults() {
        let m = Policy.builtIn.magnifier
        #expect(m.zoomIn.description == "Alt+Logo+equal")
        #expect(m.zoomOut.description == "Alt+Logo+minus")
        #expect(m.zoomOff.description == "Alt+Logo+0")
        #expect(m.colourFilter.description == "Alt+Logo+c")
    }
}

@Suite("Magnifier: renderers that cannot draw it")
struct MagnifierRenderingTests {
    func set(allowing features: Set<AssessmentFeature>) -> RestrictionSet {
        RestrictionSet(session: SessionID(1), owner: ClientID(1), configuration: AssessmentConfiguration(allowedFeatures: features),
                       policy: SessionPolicy())
    }

    @Test("allowed on a renderer that cannot draw it: refused, saying what to do")
    func refused() {
        let message = MagnifierRendering.refusal(for: set(allowing: [.screenMagnifier, .spellCheck]), rendererDrawsMagnifier: false)
        #expect(message?.contains("pixman") == true && message?.contains("deny the feature") == true)
    }

    @Test("denied, or a renderer that draws it: nothing to refuse")
    func accepted() {
        #expect(MagnifierRendering.refusal(for: set(allowing: [.spellCheck]), rendererDrawsMagnifier: false) == nil)
        #expect(MagnifierRendering.refusal(for: set(allowing: []), rendererDrawsMagnifier: false) == nil)
        #expect(MagnifierRendering.refusal(for: set(allowing: [.screenMagnifier]), rendererDrawsMagnifier: true) == nil)
    }
}
