import CarrelCore
import Testing

@Suite("Guided Access passcode entry")
struct PasscodeEntryTests {
    @Test("closed, it takes no key; opened, it shows dots, never the characters")
    func dots() {
        var entry = PasscodeEntry()
        #expect(entry.key(.text("a")) == nil)
        #expect(entry.open() == .show(entry.prompt))
        guard case .show(let text)? = entry.key(.text("s3")) else { Issue.record("no redraw"); return }
        #expect(text.contains("\u{25CF}\u{25CF}") && !text.contains("s3"))
        #expect(entry.key(.backspace) != nil)
        #expect(entry.key(.other) == nil)
    }

    @Test("Enter submits what was typed and empties the field; Enter on nothing does nothing")
    func submit() {
        var entry = PasscodeEntry()
        _ = entry.open()
        #expect(entry.key(.enter) == nil)
        _ = entry.key(.text("correct horse"))
        #expect(entry.key(.enter) == .submit("correct horse"))
        #expect(entry.isOpen)
        guard case .show(let text)? = entry.refused("wrong passcode (1 in a row)") else { Issue.record("no redraw"); return }
        #expect(text.contains("wrong passcode") && !text.contains("\u{25CF}"))
    }

    @Test("keysyms map to keys: Return and KP_Enter submit, Escape, BackSpace; text otherwise; no text is other")
    func keysFromKeysyms() {
        #expect(PasscodeEntry.Key(keysym: 0xff0d, text: "\r") == .enter)
        #expect(PasscodeEntry.Key(keysym: 0xff8d, text: "\r") == .enter)
        #expect(PasscodeEntry.Key(keysym: 0xff1b, text: "\u{1b}") == .escape)
        #expect(PasscodeEntry.Key(keysym: 0xff08, text: "\u{8}") == .backspace)
        #expect(PasscodeEntry.Key(keysym: 0x61, text: "a") == .text("a"))
        #expect(PasscodeEntry.Key(keysym: 0xffe1, text: "") == .other)  // Shift_L
    }

    @Test("Escape closes and forgets; control characters and overlong input are not taken")
    func escape() {
        var entry = PasscodeEntry()
        _ = entry.open()
        #expect(entry.key(.text("\u{7}")) == nil)
        #expect(entry.key(.text(String(repeating: "x", count: PasscodeEntry.maximumLength + 1))) == nil)
        _ = entry.key(.text("abc"))
        #expect(entry.key(.escape) == .close)
        #expect(!entry.isOpen && entry.key(.text("d")) == nil)
        _ = entry.open()
        #expect(entry.key(.enter) == nil, "reopening starts empty")
    }
}
