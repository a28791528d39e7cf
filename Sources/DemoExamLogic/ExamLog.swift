import AssessmentKit

/// The lines the demo exam prints on stdout, one per happening, in a fixed
/// format that integration tests parse:
///
///     carrel-demo-exam: event began
///     carrel-demo-exam: event failed REASON MESSAGE
///     carrel-demo-exam: event interrupted REASON MESSAGE
///     carrel-demo-exam: event ended
///     carrel-demo-exam: event updated
///     carrel-demo-exam: event update_failed REASON MESSAGE
///
/// REASON is the protocol XML's name (`already_active`, `time_limit`, ...);
/// MESSAGE is the rest of the line. Other lines (`begin`, `answer Q C`,
/// `score S/T`, `note ...`) use other second words. A free-text answer is
/// `answer Q: TEXT`, TEXT in UTF-8 to the end of the line:
///
///     carrel-demo-exam: answer 5: 日本語
public enum ExamLog {
    public static let prefix = "carrel-demo-exam:"

    public static func line(for event: AssessmentEvent) -> String {
        switch event {
        case .began: return "\(prefix) event began"
        case .failed(let error): return "\(prefix) event failed \(reasonAndMessage(error))"
        case .interrupted(let error): return "\(prefix) event interrupted \(reasonAndMessage(error))"
        case .ended: return "\(prefix) event ended"
        case .updated: return "\(prefix) event updated"
        case .updateFailed(_, let error): return "\(prefix) event update_failed \(reasonAndMessage(error))"
        }
    }

    public static func line(_ words: String) -> String { "\(prefix) \(words)" }

    /// The line for free-text answer `text` to question `question` (1-based).
    public static func answerLine(question: Int, text: String) -> String {
        // The field holds one line already; this keeps the log's format whatever it is given.
        line("answer \(question): " + String(text.map { $0.isNewline ? " " : $0 }))
    }

    private static func reasonAndMessage(_ error: AssessmentError) -> String {
        // One event, one line: a message never breaks the format.
        let message = String(error.message.map { $0.isNewline ? " " : $0 })
        return message.isEmpty ? error.code.protocolName : "\(error.code.protocolName) \(message)"
    }
}
