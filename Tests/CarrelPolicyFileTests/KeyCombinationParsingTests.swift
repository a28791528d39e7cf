import CarrelCore
import Testing

@Suite("Key combinations as the policy writes them")
struct KeyCombinationParsingTests {
    @Test("modifiers in any case and order; printed in a fixed order")
    func parses() throws {
        let combination = try KeyCombination(parsing: "shift+ALT+Ctrl+Escape")
        #expect(combination == KeyCombination(modifiers: [.ctrl, .alt, .shift], keyName: "Escape"))
        #expect(combination.description == "Ctrl+Alt+Shift+Escape")
        #expect(try KeyCombination(parsing: " Control + Super + F12 ") == KeyCombination(modifiers: [.ctrl, .logo], keyName: "F12"))
        #expect(try KeyCombination(parsing: "Logo+Alt+q").description == "Alt+Logo+q")
        #expect(try KeyCombination(parsing: "Ctrl+Alt+Shift+Logo+Delete").modifiers.count == 4)
    }

    @Test("each mistake is its own error", arguments: [
        ("Escape", KeyCombination.ParseError.tooFewModifiers(0)),
        ("Ctrl+Escape", .tooFewModifiers(1)),
        ("Ctrl+Meta+Escape", .unknownModifier("Meta")),
        ("Ctrl+Alt", .noKey),
        ("Ctrl+Alt+", .emptyPart),
        ("", .emptyPart),
        ("Ctrl+Alt+Alt+X", .repeatedModifier("Alt")),
        ("Ctrl+Control+X", .repeatedModifier("Control")),
        ("Ctrl+Alt+Page Up", .badKeyName("Page Up")),
        ("Ctrl+Alt+ä", .badKeyName("ä")),
    ])
    func refuses(text: String, error: KeyCombination.ParseError) {
        #expect(throws: error) { try KeyCombination(parsing: text) }
    }
}
