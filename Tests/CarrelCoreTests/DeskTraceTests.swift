import CarrelCore
import Testing

@Suite("Desk.trace: each effect as a machine-readable object")
struct DeskTraceTests {
    @Test("a focus names the window's role and participant; a key's text is never in it")
    func focusAndKeys() {
        var setup = DeskMode.plain.setup()
        setup.policy.participants = ["calculator": ParticipantPolicy(command: ["/usr/bin/galculator"])]
        var double = DeskDouble(setup)
        double.window(1, Owners.app)
        double.window(2, Owners.calculator)
        let desk = double.desk
        #expect(desk.trace(.focus(WindowID(2))).text
            == #"{"detail":"focus #2","effect":"focus","participant":"calculator","role":"participant","window":2}"#)
        #expect(desk.trace(.focus(nil)).text == #"{"detail":"focus none","effect":"focus","window":null}"#)
        #expect(desk.trace(.setWindowShown(WindowID(1), false)).text
            == #"{"detail":"hide #1","effect":"setWindowShown","role":"app","shown":false,"window":1}"#)
        let typed = KeyPress.press(Sym.tab, [])
        let held = desk.trace(.releaseHeldKeys([typed, typed], to: .window(WindowID(1)))).text
        #expect(held.contains(#""effect":"releaseHeldKeys""#) && !held.contains("Tab"))
        #expect(desk.trace(.checkPasscode("123456")).text == #"{"detail":"check passcode","effect":"checkPasscode"}"#,
                "the passcode typed is not written")
        #expect(desk.trace(.log(SessionLogEntry(.notice, "hello"))).text
            == #"{"detail":"log [notice] hello","effect":"log","level":"notice","message":"hello"}"#)
    }
}
