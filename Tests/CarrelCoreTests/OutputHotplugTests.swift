import CarrelCore
import Testing

@Suite("A display connected during a session")
struct OutputHotplugTests {
    @Test("by default (hot-plug not allowed) it interrupts the session, naming the output")
    func interruptsByDefault() {
        let verdict = OutputHotplug.connectedDuringSession(output: "HDMI-A-2", becomesPrimary: false,
                                                          policy: OutputPolicy())
        #expect(verdict == .interrupts("output HDMI-A-2 was connected during the session"))
    }

    @Test("allowed by the policy, a second display is tolerated (it shows only the curtain)")
    func toleratedWhenAllowed() {
        let policy = OutputPolicy(allowHotplugDuringSession: true)
        #expect(OutputHotplug.connectedDuringSession(output: "HEADLESS-2", becomesPrimary: false,
                                                     policy: policy) == .tolerated)
    }

    @Test("a display that becomes the primary interrupts even when hot-plug is allowed",
          arguments: [false, true])
    func newPrimaryAlwaysInterrupts(allowed: Bool) {
        let policy = OutputPolicy(allowHotplugDuringSession: allowed)
        let verdict = OutputHotplug.connectedDuringSession(output: "DP-1", becomesPrimary: true, policy: policy)
        guard case .interrupts(let message) = verdict else {
            Issue.record("a new primary output was tolerated (allowed: \(allowed))")
            return
        }
        #expect(message.contains("DP-1") && message.contains("primary"))
    }
}

@Suite("The curtain colour")
struct CurtainColourTests {
    @Test("0xRRGGBB becomes opaque components in 0...1, red first")
    func components() {
        let expected: [Float] = [Float(0x33) / 255, Float(0x66) / 255, Float(0xCC) / 255, 1]
        #expect(OutputPolicy(curtainColour: 0x3366CC).curtainComponents == expected)
        #expect(OutputPolicy(curtainColour: 0xFF0000).curtainComponents == [1, 0, 0, 1])
        #expect(OutputPolicy(curtainColour: 0x000000).curtainComponents == [0, 0, 0, 1])
    }

    @Test("the default is the dark grey #14171C, not black: a curtain differs from an empty output")
    func defaultIsGrey() {
        #expect(OutputPolicy().curtainColour == 0x14171C)
        #expect(Policy.builtIn.outputs.curtainColour == 0x14171C)
    }
}
