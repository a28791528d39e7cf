import CarrelCore
import Testing

@Suite("Process lineage: who may connect through the app's and the participants' sockets")
struct ProcessLineageTests {
    static let carrel: Int32 = 100
    static let launched: [Int32: LaunchedProgram] = [
        200: .app, 300: .participant("calculator"), 310: .participant("dictionary"), 400: .inputMethod,
        500: .onScreenKeyboard,
    ]

    func verdict(_ socket: PrivateSocket, _ ancestry: [Int32]) -> ProcessLineage.Verdict {
        ProcessLineage.mayConnect(to: socket, ancestry: ancestry, carrel: Self.carrel, launched: Self.launched)
    }

    func refused(_ verdict: ProcessLineage.Verdict) -> Bool {
        if case .refused = verdict { return true } else { return false }
    }

    @Test("a launched program and its descendants use their own socket")
    func own() {
        #expect(verdict(.app, [200, 100, 1]) == .allowed)
        #expect(verdict(.app, [210, 205, 200, 100, 1]) == .allowed, "the app's grandchild")
        #expect(verdict(.participant("calculator"), [300, 100, 1]) == .allowed)
        #expect(verdict(.participant("calculator"), [302, 301, 300, 100, 1]) == .allowed, "started through a shell")
    }

    @Test("a participant's descendant may not reach the app's socket or another participant's")
    func participantElsewhere() {
        #expect(refused(verdict(.app, [301, 300, 100, 1])))
        #expect(refused(verdict(.participant("dictionary"), [301, 300, 100, 1])))
        #expect(refused(verdict(.app, [300, 100, 1])))
    }

    @Test("the app's descendants may not reach a participant's socket; the engine and the keyboard reach neither")
    func othersElsewhere() {
        #expect(refused(verdict(.participant("calculator"), [201, 200, 100, 1])))
        #expect(refused(verdict(.app, [401, 400, 100, 1])))
        #expect(refused(verdict(.app, [500, 100, 1])))
        #expect(refused(verdict(.participant("calculator"), [501, 500, 100, 1])))
    }

    @Test("an orphan Carrel took in (a double fork out of its program) reaches no private socket")
    func orphan() {
        let verdict = verdict(.app, [700, 100, 1])
        #expect(refused(verdict))
        if case .refused(let why) = verdict { #expect(why.contains("orphan")) }
        #expect(refused(self.verdict(.participant("calculator"), [701, 700, 100, 1])), "nor what the orphan started")
    }

    @Test("the nearest launched ancestor decides: an app launched under another program is the app")
    func nearest() {
        let nested: [Int32: LaunchedProgram] = [200: .participant("calculator"), 250: .app]
        #expect(ProcessLineage.mayConnect(to: .app, ancestry: [260, 250, 200, 100, 1], carrel: 100, launched: nested) == .allowed)
    }

    @Test("a process that is not Carrel's descendant is as before: the socket's private directory guards it")
    func outside() {
        #expect(verdict(.app, [900, 800, 1]) == .allowed)
        #expect(verdict(.participant("calculator"), [900, 1]) == .allowed)
        #expect(refused(verdict(.app, [])), "a process gone before Carrel looked: whose it was cannot be known")
    }

    @Test("strays are Carrel's children it never launched")
    func strays() {
        #expect(ProcessLineage.strays(children: [700, 200, 300, 650], launched: [200, 300, 400]) == [650, 700])
        #expect(ProcessLineage.strays(children: [200], launched: [200]).isEmpty)
    }
}
