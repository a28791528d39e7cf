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

    @Test("with the policy's vt_switching off, the VT keys are the client's outside a session too; the emergency binding still works", arguments: 1...12)
    func switchingOff(vt: Int) {
        let keysym = Keybindings.switchVT1 + UInt32(vt - 1)
        #expect(Keybindings.action(forPressed: [keysym], restrictionsActive: false, virtualTerminals: false) == nil)
        #expect(Keybindings.action(forPressed: [keysym], restrictionsActive: true, virtualTerminals: false) == nil)
        #expect(Keybindings.action(forPressed: [Self.escape], modifiers: [.ctrl, .alt, .shift], restrictionsActive: true,
                                   emergency: Self.binding, virtualTerminals: false) == .emergencyInterrupt)
    }

    @Test("the Desk switches VT only where the policy lets it, and only on a seat with terminals")
    func deskFollowsThePolicy() {
        let key = KeyPress(pressed: true, keysyms: [Keybindings.switchVT1 + 1], keysym: Keybindings.switchVT1 + 1,
                           modifiers: [.ctrl, .alt], text: "")
        var policy = Policy.builtIn
        var desk = Desk(Desk.Setup(policy: policy, hasVirtualTerminals: true))
        #expect(desk.key(key, now: Instant(nanoseconds: 0)).contains(.switchVirtualTerminal(2)))
        policy.kiosk.virtualTerminalSwitching = false
        desk = Desk(Desk.Setup(policy: policy, hasVirtualTerminals: true))
        let effects = desk.key(key, now: Instant(nanoseconds: 0))
        #expect(!effects.contains(.switchVirtualTerminal(2)) && !effects.contains(.consumeKey))
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
