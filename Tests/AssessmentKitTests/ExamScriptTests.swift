import AssessmentKit
import DemoExamLogic
import Testing

/// Runs `runner` to its end, dispatching the lockdown between steps and
/// moving a fake clock to each deadline instead of sleeping.
func runToEnd(_ runner: ExamScriptRunner, _ lockdown: InMemoryAssessmentManager,
              onWait: (Double) -> Void = { _ in }) -> Int32? {
    var now = 0.0
    for _ in 0..<1000 {
        switch runner.advance(now: now) {
        case .finished(let status):
            return status
        case .wait(let until):
            onWait(now)
            // Time moves in steps of at most a second, so scripted happenings fit in.
            if lockdown.dispatch() == 0 { now = min(until ?? now + 1, now + 1) }
        case .needsInput:
            return nil
        }
    }
    return nil
}

@Suite("The demo's --auto and --script runner")
struct ExamScriptTests {
    @Test("--auto reaches the result with every answer right")
    func auto() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, observer) = makeFlow(lockdown, auto: true)
        let runner = ExamScriptRunner(flow: flow, commands: ExamScriptCommand.auto(questions: flow.questions, hold: 5),
                                      errorOutput: { Issue.record("unexpected error: \($0)") })
        var heldOnQuestions = false
        let status = runToEnd(runner, lockdown) { _ in
            if case .question(let index) = flow.screen, index == flow.questions.count - 1 { heldOnQuestions = true }
        }
        #expect(status == 0)
        #expect(heldOnQuestions, "--hold stays on the questions")
        #expect(flow.screen == .result(score: 4, total: 4))
        #expect(observer.eventLines == ["carrel-demo-exam: event began", "carrel-demo-exam: event ended"])
        #expect(observer.lines.last == "carrel-demo-exam: score 4/4")
        #expect(observer.lines.contains("carrel-demo-exam: answer 5: 試験 exam"), "--auto writes the free-text answer")
        #expect(lockdown.requests == [.begin(AssessmentConfiguration()), .end])
        #expect(!lockdown.isLocked)
    }

    @Test("--auto exits 1 when the session fails to begin, saying why")
    func autoFails() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.nextBeginResult = .failed(.alreadyActive, message: "session 1 is active")
        let (flow, observer) = makeFlow(lockdown, auto: true)
        var errors: [String] = []
        let runner = ExamScriptRunner(flow: flow, commands: ExamScriptCommand.auto(questions: flow.questions, hold: 0),
                                      errorOutput: { errors.append($0) })
        #expect(runToEnd(runner, lockdown) == 1)
        #expect(observer.eventLines == ["carrel-demo-exam: event failed already_active session 1 is active"])
        #expect(errors.count == 1 && errors[0].contains("already_active"))
    }

    @Test("--auto interrupted during the hold ends early and still exits 0")
    func autoInterrupted() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, observer) = makeFlow(lockdown, auto: true)
        let runner = ExamScriptRunner(flow: flow, commands: ExamScriptCommand.auto(questions: flow.questions, hold: 100),
                                      errorOutput: { Issue.record("unexpected error: \($0)") })
        var interrupted = false
        var lastWait = 0.0
        let status = runToEnd(runner, lockdown) { now in
            lastWait = now
            let everyChoiceMade = zip(flow.questions, flow.answers).allSatisfy { $0.0.isFreeText || $0.1 != nil }
            if !interrupted, flow.isContentVisible, everyChoiceMade {
                interrupted = lockdown.interrupt(.timeLimit, message: "time is up")
            }
        }
        #expect(status == 0)
        #expect(observer.eventLines == [
            "carrel-demo-exam: event began", "carrel-demo-exam: event interrupted time_limit time is up",
            "carrel-demo-exam: event ended",
        ])
        #expect(lockdown.requests.filter { $0 == .end }.count == 1)
        #expect(lastWait < 10, "the interruption cut the 100 s hold short")
    }

    @Test("a script: begin, answer, update, wait for an interruption, end")
    func script() throws {
        let commands = try ExamScriptCommand.parseScript("""
            # a test script
            begin
            wait-began 5
            answer 2
            update spell_check screen-reader
            wait-interrupt 30
            end
            wait-ended
            """)
        #expect(commands.count == 7)
        #expect(commands[3] == .update([.spellCheck, .screenReader]))
        let lockdown = InMemoryAssessmentManager()
        let (flow, observer) = makeFlow(lockdown)
        let runner = ExamScriptRunner(flow: flow, commands: commands, errorOutput: { Issue.record("\($0)") })
        let status = runToEnd(runner, lockdown) { now in
            if now >= 10 { lockdown.interrupt(.administrative) }
        }
        #expect(status == 0)
        #expect(observer.eventLines.map { $0.split(separator: " ")[2] } == ["began", "updated", "interrupted", "ended"])
        #expect(flow.answers[0] == 1)
        #expect(flow.configuration.allowedFeatures == [.spellCheck, .screenReader])
    }

    @Test("a wait that runs out of time ends the script with 1")
    func waitTimesOut() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, _) = makeFlow(lockdown)
        var errors: [String] = []
        let runner = ExamScriptRunner(flow: flow, commands: [.begin, .wait(.began, timeout: 5),
                                                             .wait(.interrupted, timeout: 3)],
                                      errorOutput: { errors.append($0) })
        #expect(runToEnd(runner, lockdown) == 1)
        #expect(errors.count == 1)
    }

    @Test("commands arrive on stdin a few at a time")
    func incremental() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, _) = makeFlow(lockdown)
        let runner = ExamScriptRunner(flow: flow, commands: [.begin], inputFinished: false,
                                      errorOutput: { Issue.record("\($0)") })
        #expect(runner.advance(now: 0) == .needsInput)
        lockdown.dispatch()
        runner.append([.end, .wait(.ended, timeout: 5)])
        runner.finishInput()
        #expect(runToEnd(runner, lockdown) == 0)
        #expect(flow.screen == .result(score: 0, total: 4))
    }

    @Test("bad script lines are refused with the line quoted", arguments: [
        "answer 5", "answer", "write", "write  # nothing", "sleep -1", "hold", "update telepathy", "dance", "begin now", "wait-ended soon",
    ])
    func badLines(line: String) {
        #expect(throws: ExamScriptCommand.ParseError.self) { try ExamScriptCommand.parse(line) }
    }

    @Test("options")
    func options() throws {
        let auto = try DemoExamOptions.parse(["--auto", "--hold", "2.5", "--time-limit", "90",
                                              "--allow", "spell_check", "--allow", "input-method",
                                              "--participant", "calculator"])
        #expect(auto.mode == .auto)
        #expect(auto.hold == 2.5)
        #expect(auto.configuration == AssessmentConfiguration(
            allowedFeatures: [.spellCheck, .inputMethod], participants: ["calculator"], timeLimit: .seconds(90)))
        #expect(auto.calculator == nil)
        #expect(try DemoExamOptions.parse(["--calculator", "calc"]).calculator == AssessmentApplication(policyName: "calc"))
        #expect(throws: DemoExamOptions.ParseError.self) { try DemoExamOptions.parse(["--calculator"]) }
        #expect(try DemoExamOptions.parse(["--script", "-"]).mode == .script(path: "-"))
        #expect(try DemoExamOptions.parse([]).mode == .interactive)
        #expect(throws: DemoExamOptions.ParseError.self) { try DemoExamOptions.parse(["--allow", "telepathy"]) }
        #expect(throws: DemoExamOptions.ParseError.self) { try DemoExamOptions.parse(["--auto", "--script", "x"]) }
        #expect(throws: DemoExamOptions.ParseError.self) { try DemoExamOptions.parse(["--time-limit", "0"]) }
        #expect(throws: DemoExamOptions.ParseError.helpRequested) { try DemoExamOptions.parse(["-h"]) }
    }
}
