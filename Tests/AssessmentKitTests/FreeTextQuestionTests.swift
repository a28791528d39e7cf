import AssessmentKit
import DemoExamLogic
import Testing

/// A flow at the demo's free-text question (the fifth), the session active.
func flowAtFreeText() -> (ExamFlow, FlowObserver, InMemoryAssessmentManager) {
    let lockdown = InMemoryAssessmentManager()
    let (flow, observer) = makeFlow(lockdown)
    flow.perform(.begin)
    lockdown.dispatch()
    for _ in 0..<4 { flow.perform(.next) }
    return (flow, observer, lockdown)
}

@Suite("The demo exam's free-text question")
struct FreeTextQuestionTests {
    let layout = ExamLayout(windowWidth: 1280, windowHeight: 720)

    @Test("the demo has four scored questions and one free-text question, last")
    func questions() {
        #expect(Question.demo.count == 5)
        #expect(Question.demo.map(\.isFreeText) == [false, false, false, false, true])
        #expect(Question.demo[4].correctChoice == nil)
        let (flow, _, _) = flowAtFreeText()
        #expect(flow.scoredQuestionCount == 4)
        #expect(flow.currentField == AnswerField())
        #expect(layout.buttons(for: flow.screen, question: flow.questions[4], selected: nil).map(\.action)
                == [.end, .previous, .next], "no choices on a free-text question")
    }

    @Test("typed keys go into the field, shortcut letters included; Enter hands in and logs the answer")
    func typing() {
        let (flow, observer, lockdown) = flowAtFreeText()
        for key in ["b", "e", "q", "1", " ", "N", "p", "x"] { flow.handle(.key(key), layout: layout) }
        #expect(flow.currentField?.text == "beq1 Npx")
        #expect(flow.screen == .question(4), "no shortcut fired")
        flow.handle(.key("backspace"), layout: layout)
        flow.handle(.key("left"), layout: layout)
        flow.handle(.key("delete"), layout: layout)
        flow.handle(.key("home"), layout: layout)
        flow.handle(.key("delete"), layout: layout)
        flow.handle(.key("end"), layout: layout)
        flow.handle(.key("!"), layout: layout)
        #expect(flow.currentField?.text == "eq1 N!")
        flow.handle(.key("enter"), layout: layout)
        #expect(flow.screen == .unlocking, "Enter on the last question hands in")
        #expect(observer.lines.suffix(2) == ["carrel-demo-exam: answer 5: eq1 N!", "carrel-demo-exam: end"])
        lockdown.dispatch()
        #expect(flow.screen == .result(score: 0, total: 4))
        #expect(observer.lines.last == "carrel-demo-exam: score 0/4")
    }

    @Test("an input method's updates edit the field; the committed answer is logged in UTF-8")
    func inputMethod() {
        let (flow, observer, _) = flowAtFreeText()
        flow.editCurrentField { $0.apply(TextInputUpdate(preedit: AnswerField.Preedit(text: "にほんご", cursor: 12..<12))) }
        #expect(flow.currentField?.preedit?.text == "にほんご")
        #expect(flow.currentField?.text == "")
        flow.editCurrentField { $0.apply(TextInputUpdate(commit: "日本語")) }
        #expect(flow.currentField?.text == "日本語")
        #expect(flow.currentField?.preedit == nil)
        flow.editCurrentField { $0.apply(TextInputUpdate(preedit: AnswerField.Preedit(text: "は", cursor: nil))) }
        flow.perform(.previous)
        #expect(observer.lines.last == "carrel-demo-exam: answer 5: 日本語", "the preedit is not part of the answer")
        #expect(flow.answerFields[4]?.preedit == nil, "an uncommitted composition goes with the question")
        flow.perform(.next)
        flow.perform(.previous)
        #expect(observer.lines.filter { $0.contains("answer 5:") }.count == 1, "logged again only when changed")
    }

    @Test("leaving by interruption logs the answer after the content is hidden")
    func interrupted() {
        let (flow, observer, lockdown) = flowAtFreeText()
        flow.perform(.write("한국어"))
        let before = observer.entries.count
        lockdown.interrupt(.administrative, message: "paused")
        lockdown.dispatch()
        let after = Array(observer.entries[before...])
        #expect(after.first == .redraw(.paused(AssessmentError(.administrative, message: "paused"))))
        #expect(after.contains(.printed("carrel-demo-exam: answer 5: 한국어", contentVisible: false)))
        flow.editCurrentField { $0.insert("x") }
        #expect(flow.answerFields[4]?.text == "한국어", "no editing while paused")
    }

    @Test("typing on a multiple-choice question is still a shortcut")
    func shortcutsElsewhere() {
        let (flow, _, lockdown) = flowAtFreeText()
        flow.perform(.write("draft"))
        flow.perform(.previous)
        #expect(flow.currentField == nil)
        flow.handle(.key("p"), layout: layout)
        #expect(flow.screen == .question(2), "p is back on a choice question")
        flow.perform(.write("ignored"))
        #expect(flow.answerFields[4]?.text == "draft", "write edits only the free-text question shown")
        flow.perform(.end)
        lockdown.dispatch()
        #expect(flow.answerFields[4]?.text == "draft", "the answer outlives the session")
    }

    @Test("the script's write types the rest of the line and goes on")
    func scriptWrite() throws {
        #expect(try ExamScriptCommand.parse("write  日本語 と English  # typed") == .write("日本語 と English"))
        let lockdown = InMemoryAssessmentManager()
        let (flow, observer) = makeFlow(lockdown)
        let commands = try ExamScriptCommand.parseScript("""
            begin
            wait-began
            answer 2
            answer 3
            answer 4
            answer 1
            write 시험
            end
            wait-ended
            """)
        let runner = ExamScriptRunner(flow: flow, commands: commands, errorOutput: { Issue.record("\($0)") })
        #expect(runToEnd(runner, lockdown) == 0)
        #expect(observer.lines.contains("carrel-demo-exam: answer 5: 시험"))
        #expect(observer.lines.last == "carrel-demo-exam: score 4/4")
    }

    @Test("the answer line keeps one line whatever it is given")
    func answerLine() {
        #expect(ExamLog.answerLine(question: 3, text: "日本語") == "carrel-demo-exam: answer 3: 日本語")
        #expect(ExamLog.answerLine(question: 5, text: "a\nb") == "carrel-demo-exam: answer 5: a b")
    }
}
