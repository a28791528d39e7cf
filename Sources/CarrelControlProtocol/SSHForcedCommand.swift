/// `carrelctl ssh-command`, the forced command of an invigilator's SSH key
/// (`command="carrelctl ssh-command",restrict` in authorized_keys): the
/// command the invigilator typed arrives in `SSH_ORIGINAL_COMMAND` and is
/// read here as words, never by a shell. Only three are allowed, and the two
/// that change something name the session they mean, so a command typed
/// after looking at `status` never acts on a session that began since.
///
/// ```
/// status
/// extend SESSION MINUTES
/// end SESSION REASON…
/// ```
public enum SSHForcedCommand {
    /// What the key may run, for every refusal.
    public static let usage = "this key runs only: status | extend SESSION MINUTES | end SESSION REASON (SESSION is the number status shows)"

    /// The control request `original` (SSH_ORIGINAL_COMMAND; nil for a
    /// login without a command) asks for, or why it is refused.
    public static func request(from original: String?) -> Result<ControlRequest, ControlFailure> {
        guard let original else {
            return .failure(ControlFailure(.badRequest, "no command given (an interactive login); \(usage)"))
        }
        guard original.utf8.count <= ControlRequest.maximumLineLength else {
            return .failure(ControlFailure(.badRequest, "the command is \(original.utf8.count) bytes; the limit is \(ControlRequest.maximumLineLength)"))
        }
        let words = original.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first else {
            return .failure(ControlFailure(.badRequest, "the command is empty; \(usage)"))
        }
        switch verb {
        case "status":
            guard words.count == 1 else {
                return .failure(ControlFailure(.badArgument, "status takes nothing after it; \(usage)"))
            }
            return .success(.status)
        case "extend":
            guard words.count == 3 else {
                return .failure(ControlFailure(.badArgument, "extend needs a session and minutes, e.g. \"extend 3 15\"; \(usage)"))
            }
            return session(words[1]).flatMap { session in
                guard let minutes = Int(words[2]) else {
                    return .failure(ControlFailure(.badArgument, "\"\(shown(words[2]))\" is not a whole number of minutes; extend by \(ControlRequest.minutesRange.lowerBound) to \(ControlRequest.minutesRange.upperBound)"))
                }
                return ControlRequest.validateMinutes(minutes).map { .extend(minutes: $0, session: session) }
            }
        case "end":
            guard words.count >= 3 else {
                return .failure(ControlFailure(.badArgument, "end needs a session and a reason, e.g. \"end 3 fire alarm\"; \(usage)"))
            }
            return session(words[1]).flatMap { session in
                ControlRequest.validateReason(words[2...].joined(separator: " ")).map { .end(reason: $0, session: session) }
            }
        default:
            return .failure(ControlFailure(.unknownCommand, "\"\(shown(verb))\" is not allowed; \(usage)"))
        }
    }

    private static func session(_ word: String) -> Result<UInt64, ControlFailure> {
        guard let id = UInt64(word) else {
            return .failure(ControlFailure(.badArgument, "\"\(shown(word))\" is not a session number; \(usage)"))
        }
        return .success(id)
    }

    private static func shown(_ word: String) -> String { ControlRequest.shown(word) }
}
