import AssessmentKit

/// Runs ``ExamScriptCommand``s against an ``ExamFlow``, one step at a time,
/// so the caller keeps dispatching the display (and drawing) in between.
///
/// Time is a parameter (`now`, seconds on any monotonic clock), so tests run
/// scripts without sleeping:
///
/// ```swift
/// while true {
///     switch runner.advance(now: clock.now) {
///     case .finished(let status): exit(status)
///     case .wait(let deadline): dispatchEvents(until: deadline)
///     case .needsInput: readMoreScript()
///     }
/// }
/// ```
public final class ExamScriptRunner {
    public enum Step: Hashable, Sendable {
        /// Dispatch events, then call again — at the latest at `until` (nil: no deadline).
        case wait(until: Double?)
        /// The commands so far are done and more may come (see ``append(_:)``).
        case needsInput
        /// The script is over: exit with this status (1 when the exam ended
        /// on the error screen or a wait could not be met, else 0).
        case finished(exitStatus: Int32)
    }

    public let flow: ExamFlow
    /// Where clicks land; the window keeps it current.
    public var layout: ExamLayout
    private var commands: [ExamScriptCommand]
    private var nextCommand = 0
    private var inputFinished: Bool
    /// Waits met so far, per event kind.
    private var waitsMet: [AssessmentEvent.Kind: Int] = [:]
    /// When the current sleep or wait ends.
    private var deadline: Double?
    private let errorOutput: (String) -> Void

    /// `inputFinished: false` when more commands will be appended (a script on stdin).
    public init(flow: ExamFlow, commands: [ExamScriptCommand], inputFinished: Bool = true,
                layout: ExamLayout = ExamLayout(windowWidth: ExamLayout.designWidth,
                                                windowHeight: ExamLayout.designHeight),
                errorOutput: @escaping (String) -> Void) {
        self.flow = flow
        self.commands = commands
        self.inputFinished = inputFinished
        self.layout = layout
        self.errorOutput = errorOutput
    }

    public func append(_ more: [ExamScriptCommand]) { commands += more }

    /// No more commands will come.
    public func finishInput() { inputFinished = true }

    /// Performs commands until one has to wait, the script needs more
    /// input, or it is over.
    public func advance(now: Double) -> Step {
        while true {
            if flow.wantsToQuit { return .finished(exitStatus: finalStatus) }
            guard nextCommand < commands.count else {
                return inputFinished ? .finished(exitStatus: finalStatus) : .needsInput
            }
            switch commands[nextCommand] {
            case .sleep(let seconds):
                let end = deadline ?? now + seconds
                if now < end {
                    deadline = end
                    return .wait(until: end)
                }
            case .hold(let seconds):
                let end = deadline ?? now + seconds
                if now < end && flow.isContentVisible {
                    deadline = end
                    return .wait(until: end)
                }
            case .wait(let kind, let timeout):
                let wanted = (waitsMet[kind] ?? 0) + 1
                if flow.count(of: kind) < wanted {
                    if let reason = unreachable(kind) {
                        errorOutput("wait for \(kind) cannot be met: \(reason)")
                        return .finished(exitStatus: 1)
                    }
                    let end = deadline ?? now + timeout
                    if now >= end {
                        errorOutput("waited \(timeout) s for \(kind) in vain")
                        return .finished(exitStatus: 1)
                    }
                    deadline = end
                    return .wait(until: end)
                }
                waitsMet[kind] = wanted
            case .begin: flow.perform(.begin)
            case .answer(let choice):
                let shown = flow.currentQuestion
                flow.perform(.choose(choice - 1))
                if let shown, shown.index + 1 < flow.questions.count { flow.perform(.next) }
            case .write(let text):
                let shown = flow.currentQuestion
                flow.perform(.write(text))
                if let shown, shown.index + 1 < flow.questions.count { flow.perform(.next) }
            case .next: flow.perform(.next)
            case .previous: flow.perform(.previous)
            case .end: flow.perform(.end)
            case .update(let features):
                var configuration = flow.configuration
                configuration.allowedFeatures = Set(features)
                flow.update(to: configuration)
            case .key(let name): flow.handle(.key(name), layout: layout)
            case .click(let x, let y): flow.handle(.click(x: x, y: y), layout: layout)
            case .quit: return .finished(exitStatus: finalStatus)
            }
            deadline = nil
            nextCommand += 1
        }
    }

    private var finalStatus: Int32 {
        if case .error = flow.screen { return 1 }
        return 0
    }

    /// Why an event of `kind` can no longer come, or nil if it still can.
    private func unreachable(_ kind: AssessmentEvent.Kind) -> String? {
        guard let session = flow.session else { return "no session was begun" }
        switch session.state {
        case .idle: return "no session was begun"
        case .failed:
            if case .error(let error) = flow.screen { return "the session failed to begin (\(error))" }
            return "the session failed to begin"
        case .ended: return "the session has ended"
        case .beginning, .active, .interrupted, .ending: return nil
        }
    }
}
