import CarrelCore
import CarrelTestSupport
import Testing

/// Keyboard focus: the exam app keeps it; untrusted windows never take it
/// from the app, and get it only when nothing focusable is mapped.
@Suite("Keyboard focus")
struct FocusTests {
    static func window(_ id: UInt64, _ role: Role, mapped: Bool = true) -> WindowSummary {
        WindowSummary(id: WindowID(id), role: role, isMapped: mapped)
    }

    struct FocusCase: CustomTestStringConvertible, Sendable {
        var name: String
        /// Bottom to top.
        var stack: [WindowSummary]
        var untrustedMayFocus = true
        var expected: WindowID?
        var testDescription: String { name }
    }

    static let cases: [FocusCase] = [
        FocusCase(name: "topmost app window wins over later-mapped untrusted ones",
                  stack: [window(1, .app), window(2, .app), window(3, .untrusted), window(4, .untrusted)],
                  expected: WindowID(2)),
        FocusCase(name: "app below an untrusted window still wins when untrusted may not focus",
                  stack: [window(1, .app), window(2, .untrusted)],
                  untrustedMayFocus: false,
                  expected: WindowID(1)),
        FocusCase(name: "a participant above the app takes focus",
                  stack: [window(1, .app), window(2, .participant), window(3, .untrusted)],
                  expected: WindowID(2)),
        FocusCase(name: "unmapped app window on top is ignored",
                  stack: [window(1, .app), window(2, .app, mapped: false)],
                  expected: WindowID(1)),
        FocusCase(name: "unmapped untrusted window on top is ignored",
                  stack: [window(1, .untrusted), window(2, .untrusted, mapped: false)],
                  expected: WindowID(1)),
        FocusCase(name: "only an unmapped app: the mapped untrusted window gets focus",
                  stack: [window(1, .untrusted), window(2, .app, mapped: false)],
                  expected: WindowID(1)),
        FocusCase(name: "only untrusted, and untrusted may focus: topmost untrusted",
                  stack: [window(1, .untrusted), window(2, .untrusted)],
                  expected: WindowID(2)),
        FocusCase(name: "only untrusted, and untrusted may not focus: nobody",
                  stack: [window(1, .untrusted), window(2, .untrusted)],
                  untrustedMayFocus: false,
                  expected: nil),
        FocusCase(name: "empty stack: nobody",
                  stack: [],
                  expected: nil),
        FocusCase(name: "nothing mapped: nobody",
                  stack: [window(1, .app, mapped: false), window(2, .participant, mapped: false),
                          window(3, .untrusted, mapped: false)],
                  expected: nil),
    ]

    @Test("Focus target", arguments: cases)
    func target(_ c: FocusCase) {
        #expect(Focus.target(stack: c.stack, untrustedMayFocus: c.untrustedMayFocus) == c.expected)
    }

    @Test("Roles outside focusableRoles are treated as untrusted")
    func customFocusableRoles() {
        let both = [Self.window(1, .app), Self.window(2, .participant)]
        #expect(Focus.target(stack: both, focusableRoles: [.app]) == WindowID(1))
        let participantOnly = [Self.window(2, .participant)]
        #expect(Focus.target(stack: participantOnly, focusableRoles: [.app], untrustedMayFocus: false) == nil)
        #expect(Focus.target(stack: participantOnly, focusableRoles: [.app], untrustedMayFocus: true) == WindowID(2))
    }

    /// Seeded random stacks: whatever the order, focus goes to a mapped
    /// window, to the topmost focusable one when there is one, and to an
    /// untrusted window only when allowed and no focusable window is mapped.
    @Test("Focus invariants over random stacks", arguments: [1, 2, 3, 42, 1234] as [UInt64])
    func invariants(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        for _ in 0..<500 {
            let count = Int(random.next() % 8)
            let stack = (0..<count).map { index in
                WindowSummary(id: WindowID(UInt64(index)),
                              role: Role.allCases[Int(random.next() % 3)],
                              isMapped: random.next() % 4 != 0)
            }
            let untrustedMayFocus = random.next() % 2 == 0
            let chosen = Focus.target(stack: stack, untrustedMayFocus: untrustedMayFocus)
            let topFocusable = stack.last { $0.isMapped && $0.role != .untrusted }

            if let topFocusable {
                #expect(chosen == topFocusable.id, "stack \(stack)")
            } else if untrustedMayFocus {
                #expect(chosen == stack.last(where: \.isMapped)?.id, "stack \(stack)")
            } else {
                #expect(chosen == nil, "stack \(stack)")
            }
        }
    }
}
