import AssessmentKit
#if canImport(Glibc)
import Glibc
#endif

/// The demo exam's flow, driven through ``AssessmentManaging``:
///
///     start ──begin──▶ locking ──began──▶ questions ──end──▶ unlocking ──ended──▶ result
///                         │                   │
///                       failed           interrupted ──▶ paused (content hidden) ──end──▶ …
///                         ▼
///                       error ──begin──▶ locking …
///
/// On interrupted the flow hides the exam before it does anything else
/// (prints, saves, ends), so the next frame cannot show a question. Every
/// lifecycle event is printed as one ``ExamLog`` line, and so is every
/// answer: a choice when it is made, a free-text answer when its question
/// is left (next, back, end, interruption) with new text.
public final class ExamFlow: AssessmentSessionDelegate {
    public enum Screen: Hashable, Sendable {
        case start
        /// Waiting for began or failed.
        case locking
        /// The question at this index is shown.
        case question(Int)
        /// The session was interrupted: "exam paused — content hidden".
        case paused(AssessmentError)
        /// Waiting for ended.
        case unlocking
        case result(score: Int, total: Int)
        /// The session failed to begin.
        case error(AssessmentError)
    }

    public let manager: any AssessmentManaging
    /// Used by the next begin; `update` changes the running session's.
    public var configuration: AssessmentConfiguration
    public let questions: [Question]
    /// The policy's calculator, named as a participant of the session when
    /// a question allows a calculator; nil leaves every session without one.
    public let calculator: AssessmentApplication?
    /// The recorded answer (choice index) per question; nil for free-text questions.
    public private(set) var answers: [Int?]
    /// The text field of each free-text question, by question index.
    public private(set) var answerFields: [Int: AnswerField]
    /// The free-text answers as last logged, by question index.
    private var loggedText: [Int: String] = [:]
    public private(set) var screen: Screen = .start
    /// The current (or last) session.
    public private(set) var session: AssessmentSession?
    /// Every event the flow heard, oldest first.
    public private(set) var eventLog: [AssessmentEvent] = []
    /// Set by `quit` when leaving is allowed.
    public private(set) var wantsToQuit = false
    /// Ends the session as soon as it is interrupted (the `--auto` behaviour;
    /// a person presses End instead).
    public var endsSessionOnInterruption: Bool
    /// Called after every change of what the window should show.
    public var onChange: () -> Void = {}
    /// Hands the answers in (`--submit-url`) before the session ends: called
    /// with the session and the answers by question number; the session
    /// ends when it calls `then`. Nil: the session ends at once.
    public var handIn: ((AssessmentSession, [Int: String], _ then: @escaping () -> Void) -> Void)?
    /// Set while the answers are being handed in: a second end waits for it.
    private var handingIn = false
    private let output: (String) -> Void

    public init(manager: any AssessmentManaging,
                configuration: AssessmentConfiguration = AssessmentConfiguration(),
                questions: [Question] = Question.demo,
                calculator: AssessmentApplication? = nil,
                endsSessionOnInterruption: Bool = false,
                output: @escaping (String) -> Void = ExamFlow.printLine) {
        self.manager = manager
        self.configuration = configuration
        self.questions = questions
        self.calculator = calculator
        self.answers = Array(repeating: nil, count: questions.count)
        self.answerFields = Self.emptyFields(for: questions)
        self.endsSessionOnInterruption = endsSessionOnInterruption
        self.output = output
    }

    /// Prints `line` to stdout and flushes it at once, so a reader on a pipe
    /// sees each event when it happens.
    public static func printLine(_ line: String) {
        print(line)
        fflush(nil)
    }

    /// Whether exam content (questions, answers) may be drawn.
    public var isContentVisible: Bool {
        if case .question = screen { return true }
        return false
    }

    /// Right answers so far.
    public var score: Int {
        zip(questions, answers).filter { question, answer in
            question.correctChoice != nil && answer == question.correctChoice
        }.count
    }

    /// The questions a score counts: free text is read by a person, not scored.
    public var scoredQuestionCount: Int { questions.filter { !$0.isFreeText }.count }

    /// The text field of the question shown, when it is a free-text question.
    public var currentField: AnswerField? {
        currentQuestion.flatMap { answerFields[$0.index] }
    }

    /// Changes the field of the free-text question shown (typing, an input
    /// method's update); nothing when no such question is shown.
    public func editCurrentField(_ edit: (inout AnswerField) -> Void) {
        guard let index = currentQuestion?.index, var field = answerFields[index] else { return }
        edit(&field)
        guard field != answerFields[index] else { return }
        answerFields[index] = field
        onChange()
    }

    /// The question shown, if any.
    public var currentQuestion: (index: Int, question: Question)? {
        if case .question(let index) = screen { return (index, questions[index]) }
        return nil
    }

    /// How many events of `kind` the flow heard.
    public func count(of kind: AssessmentEvent.Kind) -> Int {
        eventLog.filter { $0.kind == kind }.count
    }

    // MARK: Input

    /// Maps raw input to an action for the current screen and performs it.
    public func handle(_ input: ExamInput, layout: ExamLayout) {
        let action: ExamAction?
        switch input {
        case .key(let key) where currentField != nil:
            action = fieldKey(key)
        case .key(let key):
            action = ExamAction(key: key, on: screen)
        case .click(let x, let y):
            let current = currentQuestion
            action = layout.action(atWindowX: x, y: y, screen: screen, question: current?.question,
                                   selected: current.flatMap { answers[$0.index] })
        }
        if let action { perform(action) }
    }

    /// A key on a free-text question: text is typed, editing keys edit,
    /// Enter goes on; the letter shortcuts of other screens are text here.
    private func fieldKey(_ key: String) -> ExamAction? {
        switch key.lowercased() {
        case "enter", "return": return .next
        case "backspace": editCurrentField { $0.deleteBackward() }
        case "delete": editCurrentField { $0.deleteForward() }
        case "left": editCurrentField { $0.moveLeft() }
        case "right": editCurrentField { $0.moveRight() }
        case "home": editCurrentField { $0.moveToStart() }
        case "end": editCurrentField { $0.moveToEnd() }
        case "escape": return .quit
        case _ where ExamInput.editingKeys.contains(key.lowercased()): break
        default: return .write(key)
        }
        return nil
    }

    public func perform(_ action: ExamAction) {
        switch action {
        case .begin:
            switch screen {
            case .start, .error: begin()
            default: break
            }
        case .choose(let choice):
            guard let (index, question) = currentQuestion, question.choices.indices.contains(choice) else { return }
            answers[index] = choice
            output(ExamLog.line("answer \(index + 1) \(choice + 1)"))
            onChange()
        case .write(let text):
            editCurrentField { $0.insert(text) }
        case .next:
            guard let (index, _) = currentQuestion else { return }
            leaveQuestion(index)
            if index + 1 < questions.count {
                screen = .question(index + 1)
                onChange()
            } else {
                perform(.end)
            }
        case .previous:
            guard let (index, _) = currentQuestion, index > 0 else { return }
            leaveQuestion(index)
            screen = .question(index - 1)
            onChange()
        case .end:
            guard let session, !handingIn else { return }
            switch session.state {
            case .active, .interrupted:
                // An interrupted exam keeps its paused screen until ended.
                if case .question(let index) = screen {
                    leaveQuestion(index)
                    screen = .unlocking
                }
                output(ExamLog.line("end"))
                onChange()
                endHandingIn(session)
            case .beginning:
                output(ExamLog.line("end"))
                session.end()   // withdraws it: failed(cancelled) follows at once
            default:
                break
            }
        case .quit:
            switch screen {
            case .start, .result, .error:
                wantsToQuit = true
                onChange()
            default:
                output(ExamLog.line("note quitting is not possible during a session; end the exam first"))
            }
        }
    }

    /// Asks the running session to take `configuration`.
    public func update(to newConfiguration: AssessmentConfiguration) {
        guard let session else { return }
        output(ExamLog.line("update"))
        session.update(to: newConfiguration)
    }

    /// What the next begin asks for: ``configuration``, plus the calculator
    /// as a participant when a question allows one. A session is begun with
    /// it (never added later), so `began` comes only once its window shows.
    public var sessionConfiguration: AssessmentConfiguration {
        var asked = configuration
        if let calculator, questions.contains(where: \.allowsCalculator) {
            asked.setConfiguration(AssessmentParticipantConfiguration(), for: calculator)
        }
        return asked
    }

    /// Whether question `index` shows with the calculator beside it.
    public func showsCalculator(on index: Int) -> Bool {
        calculator != nil && questions.indices.contains(index) && questions[index].allowsCalculator
    }

    private func begin() {
        answers = Array(repeating: nil, count: questions.count)
        answerFields = Self.emptyFields(for: questions)
        loggedText = [:]
        let session = AssessmentSession(configuration: sessionConfiguration, manager: manager)
        session.delegate = self
        self.session = session
        screen = .locking
        output(ExamLog.line("begin"))
        onChange()
        session.begin()
    }

    // MARK: AssessmentSessionDelegate

    public func assessmentSessionDidBegin(_ session: AssessmentSession) {
        screen = .question(0)
        record(.began)
    }

    public func assessmentSession(_ session: AssessmentSession, failedToBeginWithError error: AssessmentError) {
        screen = .error(error)
        record(.failed(error))
    }

    public func assessmentSession(_ session: AssessmentSession, wasInterruptedWithError error: AssessmentError) {
        // Hide the content before anything else: the redraw is requested here,
        // ahead of printing and of ending the session.
        if screen != .unlocking {
            let shown = currentQuestion?.index
            screen = .paused(error)
            onChange()
            if let shown { leaveQuestion(shown) }
        }
        record(.interrupted(error))
        if endsSessionOnInterruption {
            output(ExamLog.line("end"))
            // Handed in even so: the statement says it was interrupted, and the server decides.
            endHandingIn(session)
        }
    }

    public func assessmentSessionDidEnd(_ session: AssessmentSession) {
        screen = .result(score: score, total: scoredQuestionCount)
        record(.ended)
        output(ExamLog.line("score \(score)/\(scoredQuestionCount)"))
    }

    public func assessmentSessionDidUpdate(_ session: AssessmentSession) {
        configuration = session.configuration
        record(.updated(session.configuration))
    }

    public func assessmentSession(_ session: AssessmentSession, failedToUpdateTo configuration: AssessmentConfiguration,
                                  error: AssessmentError) {
        record(.updateFailed(configuration, error))
    }

    /// Ends `session`, handing the answers in first when `handIn` is set; an
    /// end while they are being handed in is the same end.
    private func endHandingIn(_ session: AssessmentSession) {
        guard let handIn else { return session.end() }
        guard !handingIn else { return }
        handingIn = true
        handIn(session, handedInAnswers) { [weak self] in
            self?.handingIn = false
            session.end()
        }
    }

    /// Every answer given, by question number (1-based): a choice as its
    /// number, free text as written.
    public var handedInAnswers: [Int: String] {
        var all: [Int: String] = [:]
        for (index, choice) in answers.enumerated() {
            if let choice { all[index + 1] = String(choice + 1) }
        }
        for (index, field) in answerFields where !field.text.isEmpty { all[index + 1] = field.text }
        return all
    }

    /// Question `index` is no longer shown: an uncommitted composition in
    /// its field goes (the input method is disabled with it), and its
    /// free-text answer is logged if it changed since last logged.
    private func leaveQuestion(_ index: Int) {
        answerFields[index]?.setPreedit(nil)
        guard let text = answerFields[index]?.text, text != (loggedText[index] ?? "") else { return }
        loggedText[index] = text
        output(ExamLog.answerLine(question: index + 1, text: text))
    }

    private static func emptyFields(for questions: [Question]) -> [Int: AnswerField] {
        Dictionary(uniqueKeysWithValues: questions.indices.filter { questions[$0].isFreeText }.map { ($0, AnswerField()) })
    }

    private func record(_ event: AssessmentEvent) {
        eventLog.append(event)
        output(ExamLog.line(for: event))
        onChange()
    }
}
