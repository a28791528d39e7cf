import AssessmentKit
import DemoExamLogic
import Testing

/// What the demo printed and what it showed, in the order it happened.
final class FlowObserver {
    enum Entry: Equatable {
        case printed(String, contentVisible: Bool)
        case redraw(ExamFlow.Screen)
    }
    var entries: [Entry] = []
    weak var flow: ExamFlow?

    var lines: [String] {
        entries.compactMap { if case .printed(let line, _) = $0 { line } else { nil } }
    }
    var eventLines: [String] { lines.filter { $0.hasPrefix("carrel-demo-exam: event ") } }
}

/// A demo flow on an in-memory lockdown, observed.
func makeFlow(_ lockdown: InMemoryAssessmentManager, auto: Bool = false) -> (ExamFlow, FlowObserver) {
    let observer = FlowObserver()
    let flow = ExamFlow(manager: lockdown, endsSessionOnInterruption: auto, output: { [observer] line in
        observer.entries.append(.printed(line, contentVisible: observer.flow?.isContentVisible ?? false))
    })
    observer.flow = flow
    flow.onChange = { [observer, unowned flow] in observer.entries.append(.redraw(flow.screen)) }
    return (flow, observer)
}

@Suite("The demo exam's flow, driven through the in-memory lockdown")
struct ExamFlowTests {
    @Test("start → locking → questions → unlocking → result, with the score")
    func happyPath() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, observer) = makeFlow(lockdown)
        #expect(flow.screen == .start)
        #expect(!flow.isContentVisible)
        flow.perform(.begin)
        #expect(flow.screen == .locking)
        #expect(!flow.isContentVisible, "no question before began")
        lockdown.dispatch()
        #expect(flow.screen == .question(0))
        #expect(flow.isContentVisible)
        flow.perform(.choose(1))     // right
        flow.perform(.next)
        flow.perform(.choose(0))     // wrong
        flow.perform(.next)
        flow.perform(.next)          // skipped
        flow.perform(.choose(0))     // right
        #expect(flow.answers == [1, 0, nil, 0, nil])
        flow.perform(.next)          // to the free-text question, left empty
        #expect(flow.screen == .question(4))
        flow.perform(.next)          // past the last question: hand in
        #expect(flow.screen == .unlocking)
        #expect(lockdown.requests.last == .end)
        lockdown.dispatch()
        #expect(flow.screen == .result(score: 2, total: 4))
        #expect(observer.eventLines == ["carrel-demo-exam: event began", "carrel-demo-exam: event ended"])
        #expect(observer.lines.contains("carrel-demo-exam: score 2/4"))
    }

    @Test("interrupted hides the content before anything else")
    func pausedFirst() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, observer) = makeFlow(lockdown)
        flow.perform(.begin)
        lockdown.dispatch()
        flow.perform(.choose(1))
        let before = observer.entries.count
        lockdown.interrupt(.integrity, message: "a window appeared")
        lockdown.dispatch()
        let after = Array(observer.entries[before...])
        let error = AssessmentError(.integrity, message: "a window appeared")
        #expect(after.first == .redraw(.paused(error)), "the first thing is a redraw of the paused screen")
        #expect(after.contains(.printed("carrel-demo-exam: event interrupted integrity a window appeared",
                                        contentVisible: false)))
        #expect(flow.screen == .paused(error))
        #expect(!flow.isContentVisible)
        #expect(lockdown.isLocked, "a person ends the exam; the lock holds until then")
        // Answering is not possible while paused; ending is.
        flow.perform(.choose(2))
        #expect(flow.answers[0] == 1)
        flow.perform(.end)
        #expect(flow.screen == .paused(error), "still hidden while ending")
        lockdown.dispatch()
        #expect(flow.screen == .result(score: 1, total: 4))
    }

    @Test("auto mode ends the session itself when interrupted")
    func autoEndsOnInterruption() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, observer) = makeFlow(lockdown, auto: true)
        flow.perform(.begin)
        lockdown.dispatch()
        lockdown.interrupt(.timeLimit)
        lockdown.dispatch()
        #expect(lockdown.requests.last == .end)
        #expect(flow.screen.isResult)
        #expect(observer.eventLines.map { $0.split(separator: " ")[2] } == ["began", "interrupted", "ended"])
    }

    @Test("failed shows the error screen with the reason", arguments: [
        (AssessmentError.Code.alreadyActive, "already_active"), (.notEntitled, "not_entitled"), (.timeout, "timeout"),
    ])
    func failedShowsError(code: AssessmentError.Code, name: String) {
        let lockdown = InMemoryAssessmentManager()
        lockdown.nextBeginResult = .failed(code, message: "because\nof reasons")
        let (flow, observer) = makeFlow(lockdown)
        flow.perform(.begin)
        lockdown.dispatch()
        #expect(flow.screen == .error(AssessmentError(code, message: "because\nof reasons")))
        #expect(!flow.isContentVisible)
        #expect(observer.eventLines == ["carrel-demo-exam: event failed \(name) because of reasons"],
                "one line per event, even for a message with a newline")
        // Try again from the error screen.
        flow.perform(.begin)
        lockdown.dispatch()
        #expect(flow.screen == .question(0))
    }

    @Test("not being inside Carrel shows as a failed begin")
    func unavailable() {
        let error = AssessmentError(.notAvailable, message: "no global")
        let flow = ExamFlow(manager: UnavailableAssessmentManager(error: error), output: { _ in })
        flow.perform(.begin)
        #expect(flow.screen == .error(error))
    }

    @Test("quitting is refused during a session")
    func quit() {
        let lockdown = InMemoryAssessmentManager()
        let (flow, _) = makeFlow(lockdown)
        flow.perform(.begin)
        lockdown.dispatch()
        flow.perform(.quit)
        #expect(!flow.wantsToQuit)
        flow.perform(.end)
        lockdown.dispatch()
        flow.perform(.quit)
        #expect(flow.wantsToQuit)
    }

    @Test("keys and clicks map to actions by screen and layout")
    func input() throws {
        let lockdown = InMemoryAssessmentManager()
        let (flow, _) = makeFlow(lockdown)
        // A 2560×1440 window: the design is scaled by 2.
        let layout = ExamLayout(windowWidth: 2560, windowHeight: 1440)
        flow.handle(.key("b"), layout: layout)
        lockdown.dispatch()
        #expect(flow.screen == .question(0))
        flow.handle(.key("3"), layout: layout)
        #expect(flow.answers[0] == 2)
        // Click the second choice's button, in window pixels.
        let second = try #require(layout.buttons(for: flow.screen, question: flow.questions[0], selected: 2)
            .first { $0.action == .choose(1) })
        flow.handle(.click(x: (second.frame.x + 10) * 2, y: (second.frame.y + 10) * 2), layout: layout)
        #expect(flow.answers[0] == 1)
        flow.handle(.key("enter"), layout: layout)
        #expect(flow.screen == .question(1))
        flow.handle(.click(x: 1, y: 1), layout: layout)
        #expect(flow.screen == .question(1), "a click on no button does nothing")
        flow.handle(.key("e"), layout: layout)
        #expect(flow.screen == .unlocking)
    }

    @Test("a letterboxed layout maps clicks back to design units")
    func letterbox() {
        let layout = ExamLayout(windowWidth: 1280, windowHeight: 1000)
        #expect(layout.scale == 1)
        #expect(layout.origin.y == 140)
        #expect(layout.action(atWindowX: 640, y: 440 + 140 + 40, screen: .start, question: nil, selected: nil) == .begin)
        #expect(layout.action(atWindowX: 640, y: 440 + 40, screen: .start, question: nil, selected: nil) == nil)
    }

    @Test("the policy's calculator is named for the session when a question allows one")
    func calculatorParticipant() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.knownParticipants = ["calculator"]
        let calculator = AssessmentApplication(policyName: "calculator")
        let flow = ExamFlow(manager: lockdown, configuration: AssessmentConfiguration(allowedFeatures: [.inputMethod]),
                            calculator: calculator, output: { _ in })
        flow.perform(.begin)
        lockdown.dispatch()
        #expect(flow.screen == .question(0))
        #expect(lockdown.requests == [.begin(flow.sessionConfiguration)])
        #expect(lockdown.lockedConfiguration?.participants == ["calculator"])
        #expect(lockdown.lockedConfiguration?.allowedFeatures == [.inputMethod])
        #expect(flow.showsCalculator(on: 0), "the demo's first question allows a calculator")
        #expect(!flow.showsCalculator(on: 1))

        // Without a calculator, or without a question allowing one, the session names none.
        let plain = InMemoryAssessmentManager()
        let plainFlow = ExamFlow(manager: plain, calculator: nil, output: { _ in })
        plainFlow.perform(.begin)
        let noQuestion = InMemoryAssessmentManager()
        let noCalculatorQuestion = ExamFlow(manager: noQuestion, questions: Array(Question.demo.dropFirst()),
                                            calculator: calculator, output: { _ in })
        noCalculatorQuestion.perform(.begin)
        #expect(plain.requests == [.begin(AssessmentConfiguration())])
        #expect(!plainFlow.showsCalculator(on: 0))
        #expect(noQuestion.requests == [.begin(AssessmentConfiguration())])
        #expect(!noCalculatorQuestion.showsCalculator(on: 0))
    }

    @Test("a calculator the policy does not define fails the begin, shown as an error")
    func unknownCalculator() {
        let lockdown = InMemoryAssessmentManager()
        lockdown.knownParticipants = []
        let flow = ExamFlow(manager: lockdown, calculator: AssessmentApplication(policyName: "calculator"), output: { _ in })
        flow.perform(.begin)
        lockdown.dispatch()
        guard case .error(let error) = flow.screen else {
            Issue.record("expected the error screen, got \(flow.screen)")
            return
        }
        #expect(error.code == .unsupportedConfiguration)
        #expect(error.message.contains("\"calculator\""))
    }
}

extension ExamFlow.Screen {
    var isResult: Bool { if case .result = self { true } else { false } }
}
