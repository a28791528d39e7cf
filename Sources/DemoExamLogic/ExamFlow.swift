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
/// lifecycle event is printed as one ``ExamLog`` line.
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
    /// The recorded answer (choice index) per question.
    public private(set) var answers: [Int?]
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
    private let output: (String) -> Void

    public init(manager: any AssessmentManaging,
                configuration: AssessmentConfiguration = AssessmentConfiguration(),
                questions: [Question] = Question.demo,
                endsSessionOnInterruption: Bool = false,
                output: @escaping (String) -> Void = ExamFlow.printLine) {
        self.manager = manager
        self.configuration = configuration
        self.questions = questions
        self.answers = Array(repeating: nil, count: questions.count)
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
        zip(questions, answers).filter { $0.1 == $0.0.correctChoice }.count
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
        case .key(let key):
            action = ExamAction(key: key, on: screen)
        case .click(let x, let y):
            let current = currentQuestion
            action = layout.action(atWindowX: x, y: y, screen: screen, question: current?.question,
                                   selected: current.flatMap { answers[$0.index] })
        }
        if let action { perform(action) }
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
        case .next:
            guard let (index, _) = currentQuestion else { return }
            if index + 1 < questions.count {
                screen = .question(index + 1)
                onChange()
            } else {
                perform(.end)
            }
        case .previous:
            guard let (index, _) = currentQuestion, index > 0 else { return }
            screen = .question(index - 1)
            onChange()
        case .end:
            guard let session else { return }
            switch session.state {
            case .active, .interrupted:
                // An interrupted exam keeps its paused screen until ended.
                if case .question = screen { screen = .unlocking }
                output(ExamLog.line("end"))
                onChange()
                session.end()
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

    private func begin() {
        answers = Array(repeating: nil, count: questions.count)
        let session = AssessmentSession(configuration: configuration, manager: manager)
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
            screen = .paused(error)
            onChange()
        }
        record(.interrupted(error))
        if endsSessionOnInterruption {
            output(ExamLog.line("end"))
            session.end()
        }
    }

    public func assessmentSessionDidEnd(_ session: AssessmentSession) {
        screen = .result(score: score, total: questions.count)
        record(.ended)
        output(ExamLog.line("score \(score)/\(questions.count)"))
    }

    public func assessmentSessionDidUpdate(_ session: AssessmentSession) {
        configuration = session.configuration
        record(.updated(session.configuration))
    }

    public func assessmentSession(_ session: AssessmentSession, failedToUpdateTo configuration: AssessmentConfiguration,
                                  error: AssessmentError) {
        record(.updateFailed(configuration, error))
    }

    private func record(_ event: AssessmentEvent) {
        eventLog.append(event)
        output(ExamLog.line(for: event))
        onChange()
    }
}
