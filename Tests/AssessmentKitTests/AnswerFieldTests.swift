import AssessmentKit
import DemoExamLogic
import Testing

@Suite("The free-text answer field: editing in UTF-8 byte offsets as text-input-v3 counts them")
struct AnswerFieldTests {
    @Test("typing inserts at the cursor and moves it past the text")
    func insert() {
        var field = AnswerField()
        field.insert("exm")
        field.moveLeft()
        field.insert("a")
        #expect(field.text == "exam")
        #expect(field.cursor == 3)
        field.moveToEnd()
        field.insert(" 試験")
        #expect(field.text == "exam 試験")
        #expect(field.cursor == 11, "5 ASCII bytes and two 3-byte kanji")
        #expect(field.textBeforeCursor == "exam 試験")
        #expect(field.textAfterCursor == "")
    }

    @Test("control characters are not typed: the field is one line")
    func controlCharacters() {
        var field = AnswerField()
        field.insert("a\nb\tc\u{7F}")
        #expect(field.text == "abc")
    }

    @Test("backspace and delete remove whole characters, never part of one")
    func deleteCharacters() {
        var field = AnswerField(text: "한국e\u{301}")    // e + combining acute: one character
        field.deleteBackward()
        #expect(field.text == "한국")
        field.moveToStart()
        field.deleteBackward()
        #expect(field.text == "한국", "nothing before the start")
        field.deleteForward()
        #expect(field.text == "국")
        #expect(field.cursor == 0)
        field.moveRight()
        #expect(field.cursor == 3)
        field.deleteForward()
        #expect(field.text == "국", "nothing after the end")
    }

    @Test("delete_surrounding counts bytes around the cursor")
    func deleteSurrounding() {
        var field = AnswerField(text: "abc日本def")
        field.moveToStart()
        for _ in 0..<5 { field.moveRight() }   // after 本: byte 9
        #expect(field.cursor == 9)
        field.deleteSurrounding(before: 6, after: 1)
        #expect(field.text == "abcef")
        #expect(field.cursor == 3)
    }

    @Test("delete_surrounding stops at the text's ends and short of a split character")
    func deleteSurroundingBounds() {
        var field = AnswerField(text: "日本語")
        field.moveLeft()                          // before 語: byte 6
        field.deleteSurrounding(before: 4, after: 100)
        // 4 bytes back lands inside 日: only 本 (3 bytes) goes; after: all of 語.
        #expect(field.text == "日")
        #expect(field.cursor == 3)
        field.deleteSurrounding(before: 1000, after: 0)
        #expect(field.text == "")
        #expect(field.cursor == 0)
    }

    @Test("the committed text never passes the byte limit, whole characters only")
    func byteLimit() {
        var field = AnswerField(byteLimit: 7)
        field.insert("ab日本語")                   // 2 + 3 fit, the next kanji would make 8
        #expect(field.text == "ab日")
        field.insert("c")
        #expect(field.text == "ab日c")
        field.insert("d")
        #expect(field.text == "ab日cd")
        field.insert("e")
        #expect(field.text == "ab日cd", "7 bytes is the limit")
        #expect(AnswerField.defaultByteLimit == 4000, "text-input-v3's surrounding text limit")
    }

    @Test("a done applies in the protocol's order: old preedit out, delete, commit, new preedit")
    func applyOrder() {
        var field = AnswerField(text: "にほ")
        field.apply(TextInputUpdate(preedit: AnswerField.Preedit(text: "ご", cursor: 3..<3)))
        #expect(field.preedit?.text == "ご")
        #expect(field.text == "にほ", "a preedit is not committed text")
        // The input method replaces the hiragana with kanji: delete 6 bytes before, commit, no preedit.
        field.apply(TextInputUpdate(commit: "日本語", deleteBefore: 6))
        #expect(field.text == "日本語")
        #expect(field.cursor == 9)
        #expect(field.preedit == nil)
        // A commit and a new preedit in one done: the preedit follows the commit.
        field.apply(TextInputUpdate(preedit: AnswerField.Preedit(text: "です", cursor: nil), commit: "は"))
        #expect(field.text == "日本語は")
        #expect(field.textBeforeCursor == "日本語は")
        #expect(field.preedit == AnswerField.Preedit(text: "です", cursor: nil))
    }

    @Test("a preedit's cursor is kept inside its text")
    func preeditCursor() {
        #expect(AnswerField.Preedit(text: "abc", cursor: 1..<9).cursor == 1..<3)
        #expect(AnswerField.Preedit(text: "abc", cursor: -4..<2).cursor == 0..<2)
        var field = AnswerField()
        field.setPreedit(AnswerField.Preedit(text: "", cursor: 0..<0))
        #expect(field.preedit == nil, "an empty preedit is none")
    }

    @Test("text-input events collect until done, then reset; the serial says whether state may be sent")
    func events() {
        var events = TextInputEvents()
        events.didCommit()
        events.didCommit()
        events.preeditString("ka", cursorBegin: 2, cursorEnd: 2)
        events.commitString("日")
        events.deleteSurroundingText(before: 3, after: 0)
        let first = events.done(serial: 2)
        #expect(first.isCurrent)
        #expect(first.update == TextInputUpdate(preedit: AnswerField.Preedit(text: "ka", cursor: 2..<2),
                                                commit: "日", deleteBefore: 3))
        let second = events.done(serial: 2)
        #expect(second.update == TextInputUpdate(), "each done resets the pending state")
        events.didCommit()
        #expect(!events.done(serial: 2).isCurrent, "a done for an older commit: apply, but do not send state")
        events.preeditString(nil, cursorBegin: -1, cursorEnd: -1)
        #expect(events.done(serial: 3).update.preedit == AnswerField.Preedit(text: "", cursor: nil))
    }

    @Test("the content type asks only for help the session allows", arguments: [
        ([], 0), ([.predictiveText], 0x1), ([.spellCheck], 0x2), ([.autocorrect], 0x4),
        ([.predictiveText, .spellCheck, .autocorrect, .inputMethod], 0x7), ([.inputMethod, .screenReader], 0),
    ] as [(Set<AssessmentFeature>, UInt32)])
    func contentType(allowed: Set<AssessmentFeature>, hints: UInt32) {
        let type = TextInputContentType(for: AssessmentConfiguration(allowedFeatures: allowed))
        #expect(type.hints.rawValue == hints)
        #expect(type.purpose == 0, "content_purpose normal")
    }
}
