import AssessmentKit

/// One command of a `--script` file, one per line (`#` starts a comment):
///
///     begin                      begin a session (start or error screen)
///     answer N                   pick choice N (1-4) for the question shown, then go to the next
///     write TEXT                 type TEXT (the rest of the line, UTF-8) into the free-text
///                                question shown, then go to the next
///     next | previous            move between questions
///     end                        end the session (withdraw it while locking)
///     update [FEATURE ...]       update the session to allow exactly these features
///     wait-began [SECONDS]       wait until began (default bound 60 s)
///     wait-interrupt [SECONDS]   wait until interrupted
///     wait-ended [SECONDS]       wait until ended
///     sleep SECONDS              keep running (drawing, answering the compositor) this long
///     hold SECONDS               like sleep, but only while the questions are shown
///     key NAME                   press a key (1-4, enter, b, e, n, p, q)
///     click X Y                  click at window coordinates
///     quit                       exit now
///
/// Waits count events: the k-th `wait-began` is met by the k-th began,
/// whether it arrived before or after the command. A wait that can no
/// longer be met (the session failed or ended) or runs out of time ends the
/// script with status 1.
public enum ExamScriptCommand: Hashable, Sendable {
    case begin
    case answer(Int)
    case write(String)
    case next
    case previous
    case end
    case update([AssessmentFeature])
    case wait(AssessmentEvent.Kind, timeout: Double)
    case sleep(Double)
    /// Sleeps while the questions are shown; an interruption cuts it short.
    case hold(Double)
    case key(String)
    case click(x: Double, y: Double)
    case quit

    public static let defaultWaitTimeout = 60.0

    public struct ParseError: Error, Hashable, CustomStringConvertible {
        public var line: String
        public var problem: String
        public var description: String { "script line '\(line)': \(problem)" }
    }

    /// Parses one line; nil for a blank line or comment.
    public static func parse(_ line: String) throws -> ExamScriptCommand? {
        let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let words = code.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
        guard let verb = words.first else { return nil }
        let arguments = Array(words.dropFirst())
        func fail(_ problem: String) -> ParseError { ParseError(line: line, problem: problem) }
        func noArguments(_ command: ExamScriptCommand) throws -> ExamScriptCommand {
            guard arguments.isEmpty else { throw fail("\(verb) takes no arguments") }
            return command
        }
        func seconds(_ text: String) throws -> Double {
            guard let value = Double(text), value >= 0, value.isFinite else {
                throw fail("expected a number of seconds, got '\(text)'")
            }
            return value
        }
        func wait(_ kind: AssessmentEvent.Kind) throws -> ExamScriptCommand {
            switch arguments.count {
            case 0: return .wait(kind, timeout: defaultWaitTimeout)
            case 1: return .wait(kind, timeout: try seconds(arguments[0]))
            default: throw fail("\(verb) takes at most a timeout in seconds")
            }
        }

        switch verb.lowercased() {
        case "begin": return try noArguments(.begin)
        case "next": return try noArguments(.next)
        case "previous": return try noArguments(.previous)
        case "end": return try noArguments(.end)
        case "quit": return try noArguments(.quit)
        case "answer":
            guard arguments.count == 1, let choice = Int(arguments[0]), (1...4).contains(choice) else {
                throw fail("answer takes one choice, 1 to 4")
            }
            return .answer(choice)
        case "write":
            // The text is the rest of the line as written, spaces and all (a `#` still starts a comment).
            let text = code.drop(while: { $0 == " " || $0 == "\t" }).dropFirst(verb.count)
                .drop(while: { $0 == " " || $0 == "\t" })
            let trimmed = String(text.reversed().drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
            guard !trimmed.isEmpty else { throw fail("write takes the text to type") }
            return .write(trimmed)
        case "update":
            return .update(try arguments.map { name in
                guard let feature = AssessmentFeature(protocolName: name) else {
                    throw fail("unknown feature '\(name)'; known: "
                        + AssessmentFeature.allCases.map(\.protocolName).joined(separator: ", "))
                }
                return feature
            })
        case "wait-began": return try wait(.began)
        case "wait-interrupt", "wait-interrupted": return try wait(.interrupted)
        case "wait-ended": return try wait(.ended)
        case "sleep":
            guard arguments.count == 1 else { throw fail("sleep takes a number of seconds") }
            return .sleep(try seconds(arguments[0]))
        case "hold":
            guard arguments.count == 1 else { throw fail("hold takes a number of seconds") }
            return .hold(try seconds(arguments[0]))
        case "key":
            guard arguments.count == 1 else { throw fail("key takes one key name") }
            return .key(arguments[0])
        case "click":
            guard arguments.count == 2, let x = Double(arguments[0]), let y = Double(arguments[1]) else {
                throw fail("click takes two window coordinates")
            }
            return .click(x: x, y: y)
        default:
            throw fail("unknown command '\(verb)'")
        }
    }

    /// Parses a whole script.
    public static func parseScript(_ text: String) throws -> [ExamScriptCommand] {
        try text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { try parse(String($0)) }
    }

    /// `--auto`: begin, answer every question right (free text with
    /// ``Question/autoFreeTextAnswer``), stay `hold` seconds on the last
    /// question (less if interrupted), end, and wait for ended.
    public static func auto(questions: [Question], hold: Double) -> [ExamScriptCommand] {
        [.begin, .wait(.began, timeout: defaultWaitTimeout)]
            + questions.map { question in
                question.correctChoice.map { .answer($0 + 1) } ?? .write(Question.autoFreeTextAnswer)
            }
            + (hold > 0 ? [.hold(hold)] : [])
            + [.end, .wait(.ended, timeout: defaultWaitTimeout)]
    }
}
