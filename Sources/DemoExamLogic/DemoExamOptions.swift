import AssessmentKit

/// carrel-demo-exam's command line. Parsed by hand: the options are few and flat.
public struct DemoExamOptions: Hashable, Sendable {
    public enum Mode: Hashable, Sendable {
        /// Keyboard and pointer drive the exam.
        case interactive
        /// Begin, answer everything right, end; exit 0 once ended, 1 if it failed.
        case auto
        /// Commands from a file, or from stdin for `-`.
        case script(path: String)
    }

    public var mode: Mode = .interactive
    /// Seconds `--auto` stays on the questions before ending.
    public var hold: Double = 0
    public var configuration = AssessmentConfiguration()
    /// The policy's calculator (`--calculator ID`), for the questions that allow one.
    public var calculator: AssessmentApplication?
    /// `--submit-url`: hand the answers in with a signed statement.
    public var submitURL: SubmissionURL?

    public static let usage = """
        usage: carrel-demo-exam [options]

        A demo exam app for Carrel: a window with a start screen, a few
        questions shown only while an assessment session locks the machine,
        and a result. Every lifecycle event is printed to stdout as
        `carrel-demo-exam: event began|failed REASON MSG|interrupted REASON MSG|
        ended|updated|update_failed REASON MSG`.

          --auto                  begin, answer all questions, end; exit 0 once
                                  ended, 1 when the session failed to begin
          --script FILE           run commands from FILE (- for stdin), e.g.
                                  begin, wait-began, answer 2, write TEXT, end, wait-ended,
                                  wait-interrupt, update FEATURE..., sleep 0.5
          --hold SECONDS          with --auto: stay on the questions this long
          --time-limit SECONDS    ask for this session time limit
          --allow FEATURE         allow a feature (repeatable): spell_check,
                                  predictive_text, autocorrect, input_method,
                                  on_screen_keyboard, keyboard_shortcuts,
                                  screen_magnifier, screen_reader
          --participant ID        name a participant from the policy (repeatable)
          --calculator ID         the policy's calculator participant: the session
                                  names it, as a question allows a calculator
          --submit-url URL        before ending, get a nonce (GET URL/nonce), ask
                                  Carrel for a signed statement with it, and POST
                                  the answers with it as JSON to URL (http://HOST:PORT/PATH);
                                  prints `carrel-demo-exam: submitted STATUS` or
                                  `carrel-demo-exam: submit_failed WHY`
          -h, --help              show this text

        Keys: B begin, 1-4 answer, Enter next, P back, E end, Q quit. The last
        question is free text: keys type into its field (an input method too,
        when Carrel offers text-input-v3 and the session allows input_method),
        Enter hands in; its answer is printed as `carrel-demo-exam: answer 5: TEXT`.
        Run inside Carrel: carrel -- carrel-demo-exam --auto
        """

    public enum ParseError: Error, Hashable {
        case helpRequested
        case invalid(String)
    }

    public init() {}

    /// Parses `arguments` without the program name.
    public static func parse(_ arguments: [String]) throws -> DemoExamOptions {
        var options = DemoExamOptions()
        var rest = arguments[...]
        var sawAuto = false
        var scriptPath: String?

        func value(for flag: String) throws -> String {
            guard let next = rest.popFirst() else { throw ParseError.invalid("\(flag) needs a value") }
            return next
        }
        func seconds(for flag: String) throws -> Double {
            let text = try value(for: flag)
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                throw ParseError.invalid("\(flag) expects a number of seconds, got '\(text)'")
            }
            return seconds
        }

        while let flag = rest.popFirst() {
            switch flag {
            case "-h", "--help":
                throw ParseError.helpRequested
            case "--auto":
                sawAuto = true
            case "--script":
                scriptPath = try value(for: flag)
            case "--hold":
                options.hold = try seconds(for: flag)
            case "--time-limit":
                let limit = try seconds(for: flag)
                guard limit >= 1 else { throw ParseError.invalid("--time-limit must be at least 1 second") }
                options.configuration.timeLimit = .milliseconds(Int64((limit * 1000).rounded()))
            case "--allow":
                let name = try value(for: flag)
                guard let feature = AssessmentFeature(protocolName: name) else {
                    throw ParseError.invalid("--allow: unknown feature '\(name)'; known: "
                        + AssessmentFeature.allCases.map(\.protocolName).joined(separator: ", "))
                }
                options.configuration.allowedFeatures.insert(feature)
            case "--submit-url":
                let text = try value(for: flag)
                guard let url = SubmissionURL(text) else {
                    throw ParseError.invalid("--submit-url expects http://HOST[:PORT]/PATH, got '\(text)'")
                }
                options.submitURL = url
            case "--participant":
                options.configuration.participants.append(try value(for: flag))
            case "--calculator":
                options.calculator = AssessmentApplication(policyName: try value(for: flag))
            default:
                throw ParseError.invalid("unknown argument '\(flag)'")
            }
        }
        switch (sawAuto, scriptPath) {
        case (true, .some):
            throw ParseError.invalid("--auto and --script exclude each other")
        case (true, nil):
            options.mode = .auto
        case (false, .some(let path)):
            options.mode = .script(path: path)
        case (false, nil):
            if options.hold > 0 { throw ParseError.invalid("--hold applies to --auto only") }
        }
        return options
    }
}
