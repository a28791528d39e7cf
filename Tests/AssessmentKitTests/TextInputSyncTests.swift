import AssessmentKit
import DemoExamLogic
import Testing

@Suite("When the answer field's text input is enabled and sends its state")
struct TextInputSyncTests {
    static let plain = TextInputContentType(for: AssessmentConfiguration())

    func state(_ text: String, rect: ExamRect? = ExamRect(x: 10, y: 20, width: 2, height: 40)) -> TextInputFieldState {
        TextInputFieldState(field: AnswerField(text: text), contentType: Self.plain, cursorRectangle: rect)
    }

    @Test("enabled only with keyboard focus and a field shown, its state before the commit")
    func enable() {
        var sync = TextInputSync()
        #expect(sync.show(state("")) == [], "no focus yet")
        #expect(sync.enter() == [.enable, .state(state("")), .commit])
        #expect(sync.isEnabled)
        #expect(sync.show(nil) == [.disable, .commit], "the field is gone")
        #expect(sync.show(nil) == [])
        #expect(sync.show(state("a")) == [.enable, .state(state("a")), .commit])
        #expect(sync.leave() == [.disable, .commit])
        #expect(!sync.isEnabled)
        #expect(sync.show(state("ab")) == [], "no focus")
        #expect(sync.enter() == [.enable, .state(state("ab")), .commit], "enable resets the state: all of it again")
    }

    @Test("a changed state is sent once; an unchanged one not at all")
    func changes() {
        var sync = TextInputSync()
        _ = sync.enter()
        _ = sync.show(state("x"))
        #expect(sync.show(state("x")) == [])
        let moved = state("x", rect: ExamRect(x: 30, y: 20, width: 2, height: 40))
        #expect(sync.show(moved) == [.state(moved), .commit], "the cursor rectangle moved")
        #expect(sync.synchronise() == [])
    }

    @Test("after a done for an older commit the state waits for a current done")
    func staleDone() {
        var sync = TextInputSync()
        _ = sync.enter()
        _ = sync.show(state(""))
        sync.done(isCurrent: false)
        #expect(sync.show(state("日本")) == [], "held back")
        #expect(sync.synchronise() == [])
        sync.done(isCurrent: true)
        #expect(sync.synchronise() == [.state(state("日本")), .commit])
        #expect(sync.show(nil) == [.disable, .commit], "disable is never held back")
    }
}
