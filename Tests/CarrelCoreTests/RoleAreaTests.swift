import CarrelCore
import Testing

/// The decisions behind "a role's pixels stay in its area": where popups may
/// go, and the per-frame audit of what the scene draws against the areas.
@Suite("Role areas: popups inside their window's area, the audit of drawn pixels")
struct RoleAreaTests {
    let output = Rect(x: 0, y: 0, width: 1200, height: 900)

    @Test("a participant's popups are bounded by its column, in its window's coordinates, not by the output")
    func participantPopups() {
        let column = SessionLayout(output: output, participantCount: 1).participants[0]
        let bounds = PopupBounds.constraint(area: column, toplevelOrigin: Point(x: column.x, y: column.y))
        #expect(bounds == Rect(x: 0, y: 0, width: 400, height: 900))
        #expect(bounds != output.relative(to: Point(x: column.x, y: column.y)))
    }

    @Test("the exam's popups are bounded by the exam's part, so none opens over a participant's column")
    func examPopups() {
        let layout = SessionLayout(output: output, participantCount: 2)
        let bounds = PopupBounds.constraint(area: layout.exam, toplevelOrigin: Point(x: 0, y: 0))
        #expect(bounds == Rect(x: 0, y: 0, width: 800, height: 900))
        for column in layout.participants {
            #expect(!bounds.contains(column.relative(to: Point(x: 0, y: 0))))
        }
    }

    @Test("a window placed away from its area's corner (a dialog) gets the area seen from where it sits")
    func offsetToplevel() {
        let area = Rect(x: 800, y: 450, width: 400, height: 450)
        #expect(PopupBounds.constraint(area: area, toplevelOrigin: Point(x: 900, y: 500))
            == Rect(x: -100, y: -50, width: 400, height: 450))
    }

    @Test("containment counts every edge: touching is inside, one pixel over is out", arguments: [
        (Rect(x: 800, y: 0, width: 400, height: 900), true),
        (Rect(x: 799, y: 0, width: 400, height: 900), false),
        (Rect(x: 800, y: -1, width: 10, height: 10), false),
        (Rect(x: 1190, y: 890, width: 10, height: 10), true),
        (Rect(x: 1190, y: 890, width: 11, height: 10), false),
        (Rect(x: 1190, y: 890, width: 10, height: 11), false),
    ])
    func containment(drawn: Rect, inside: Bool) {
        #expect(Rect(x: 800, y: 0, width: 400, height: 900).contains(drawn) == inside)
    }

    @Test("the audit flags exactly the enabled windows drawing outside their area")
    func audit() {
        let exam = WindowOwner(client: ClientID(1), role: .app)
        let calc = WindowOwner(client: ClientID(2), role: .participant, participantID: "calc")
        let layout = SessionLayout(output: output, participantCount: 1)
        let entries = [
            // Inside: the exam filling its part exactly.
            SceneAudit.Entry(window: WindowID(1), owner: exam, isEnabled: true, area: layout.exam, drawn: layout.exam),
            // A participant's buffer reaching one pixel into the exam.
            SceneAudit.Entry(window: WindowID(2), owner: calc, isEnabled: true, area: layout.participants[0],
                             drawn: Rect(x: 799, y: 0, width: 401, height: 900)),
            // The same, hidden: no frame draws it.
            SceneAudit.Entry(window: WindowID(3), owner: calc, isEnabled: false, area: layout.participants[0],
                             drawn: Rect(x: 0, y: 0, width: 1200, height: 900)),
            // Draws nothing yet (no buffer).
            SceneAudit.Entry(window: WindowID(4), owner: calc, isEnabled: true, area: layout.participants[0], drawn: nil),
            // The exam's popup below its part.
            SceneAudit.Entry(window: WindowID(5), owner: exam, isEnabled: true, area: layout.exam,
                             drawn: Rect(x: 100, y: 800, width: 200, height: 101)),
        ]
        #expect(SceneAudit.outsideArea(entries) == [WindowID(2), WindowID(5)])
    }
}

/// The input method's candidate popup: bounded in size, inside the window
/// being typed into, under (or above) the cursor.
@Suite("Candidate popup: a size and place bound")
struct CandidatePopupPlacementTests {
    let exam = Rect(x: 0, y: 0, width: 800, height: 900)

    @Test("a small popup goes just under the cursor and may draw up to the bound there")
    func underCursor() {
        let placed = CandidatePopupPlacement.place(size: Size(width: 200, height: 100),
                                                   cursor: Rect(x: 50, y: 100, width: 2, height: 20), area: exam)
        #expect(placed?.origin == Point(x: 50, y: 120))
        #expect(placed?.clip == Rect(x: 50, y: 120, width: 400, height: 300))
    }

    @Test("an engine asking for the whole screen gets half the window's width and a third of its height")
    func oversize() {
        let placed = CandidatePopupPlacement.place(size: Size(width: 5000, height: 5000),
                                                   cursor: Rect(x: 10, y: 10, width: 2, height: 20), area: exam)
        #expect(placed?.clip.size == CandidatePopupPlacement.maximumSize(in: exam))
        #expect(placed?.clip.size == Size(width: 400, height: 300))
    }

    @Test("near the bottom it goes above the cursor; near the right edge it moves left; never outside the area")
    func edges() {
        let placed = CandidatePopupPlacement.place(size: Size(width: 300, height: 200),
                                                   cursor: Rect(x: 780, y: 850, width: 2, height: 20), area: exam)
        #expect(placed?.origin == Point(x: 500, y: 650))
        #expect(placed.map { exam.contains($0.clip) } == true)
    }

    @Test("a participant's column bounds a popup there; a cursor reported outside the area changes nothing")
    func column() {
        let column = Rect(x: 800, y: 0, width: 400, height: 900)
        let placed = CandidatePopupPlacement.place(size: Size(width: 300, height: 200),
                                                   cursor: Rect(x: -500, y: -500, width: 2, height: 20), area: column)
        #expect(placed?.origin == Point(x: 800, y: 0))
        #expect(placed.map { column.contains($0.clip) } == true)
    }

    @Test("an empty area: nothing may be drawn")
    func empty() {
        #expect(CandidatePopupPlacement.place(size: Size(width: 10, height: 10), cursor: Rect(x: 0, y: 0, width: 1, height: 1),
                                              area: Rect(x: 0, y: 0, width: 1, height: 0)) == nil)
    }
}
