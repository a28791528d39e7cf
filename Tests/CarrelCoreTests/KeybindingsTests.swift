import CarrelCore
import Testing

@Suite("Carrel's own keybindings")
struct KeybindingsTests {
    @Test("Ctrl+Alt+F<N> (XF86Switch_VT_N) switches VT outside a session", arguments: 1...12)
    func switchesOutsideSession(vt: Int) {
        let keysym = Keybindings.switchVT1 + UInt32(vt - 1)
        #expect(Keybindings.action(forPressed: [keysym], restrictionsActive: false) == .switchToVirtualTerminal(vt))
    }

    @Test("no VT switch while a session holds restrictions", arguments: 1...12)
    func disabledDuringSession(vt: Int) {
        let keysym = Keybindings.switchVT1 + UInt32(vt - 1)
        #expect(Keybindings.action(forPressed: [keysym], restrictionsActive: true) == nil)
    }

    @Test("ordinary keys and neighbouring keysyms belong to the client")
    func ordinaryKeys() {
        // 'a', F1, and the keysyms just outside the VT range.
        for keysym: UInt32 in [0x61, 0xFFBE, Keybindings.switchVT1 - 1, Keybindings.switchVT1 + 12] {
            #expect(Keybindings.action(forPressed: [keysym], restrictionsActive: false) == nil)
        }
        #expect(Keybindings.action(forPressed: [], restrictionsActive: false) == nil)
    }

    static let escape: UInt32 = 0xFF1B
    static let binding = EmergencyBinding(modifiers: [.ctrl, .alt, .shift], keysym: escape)

    @Test("the emergency binding interrupts only during a session and only with exactly its modifiers")
    func emergency() {
        let b = Self.binding
        #expect(Keybindings.action(forPressed: [Self.escape], modifiers: [.ctrl, .alt, .shift],
                                   restrictionsActive: true, emergency: b) == .emergencyInterrupt)
        #expect(Keybindings.action(forPressed: [Self.escape], modifiers: [.ctrl, .alt, .shift],
                                   restrictionsActive: false, emergency: b) == nil)
        #expect(Keybindings.action(forPressed: [Self.escape], modifiers: [.ctrl, .alt],
                                   restrictionsActive: true, emergency: b) == nil)
        #expect(Keybindings.action(forPressed: [Self.escape], modifiers: [.ctrl, .alt, .shift, .logo],
                                   restrictionsActive: true, emergency: b) == nil)
        #expect(Keybindings.action(forPressed: [0x61], modifiers: [.ctrl, .alt, .shift],
                                   restrictionsActive: true, emergency: b) == nil)
    }

    @Test("a combination matches with exactly its modifiers and any of the key's keysyms")
    func matches() {
        let b = Self.binding
        #expect(b.matches(keysyms: [0x61, Self.escape], modifiers: [.ctrl, .alt, .shift]))
        #expect(!b.matches(keysyms: [Self.escape], modifiers: [.ctrl, .shift]))
        #expect(!b.matches(keysyms: [Self.escape], modifiers: [.ctrl, .alt, .shift, .logo]))
        #expect(!b.matches(keysyms: [], modifiers: [.ctrl, .alt, .shift]))
    }

    @Test("without a policy binding nothing interrupts, and VT switching stays off in a session")
    func noEmergencyByDefault() {
        #expect(Keybindings.action(forPressed: [Self.escape], modifiers: [.ctrl, .alt, .shift],
                                   restrictionsActive: true, emergency: nil) == nil)
        #expect(Keybindings.action(forPressed: [Keybindings.switchVT1], modifiers: [.ctrl, .alt],
                                   restrictionsActive: true, emergency: Self.binding) == nil)
    }
}
