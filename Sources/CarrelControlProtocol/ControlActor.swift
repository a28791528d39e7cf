/// Who, beyond the caller's uid, asked for a control request: the name of an
/// invigilator's SSH key, given by `carrelctl ssh-command --actor NAME` in that
/// key's forced command, so the audit log says which key acted on the seat.
///
/// A name is a label, not proof: anyone on the control socket may send any
/// name, which is why the socket is for administrators only. It is one word
/// of letters, digits and `. _ - @ + :`, at most `maximumLength` bytes, so it
/// goes into a log line or a journal field as it is.
public enum ControlActor {
    /// The longest name, in bytes.
    public static let maximumLength = 64

    /// `name` if it may name an actor, or what is wrong with it.
    public static func validate(_ name: String) -> Result<String, ControlFailure> {
        if name.isEmpty {
            return .failure(ControlFailure(.badArgument, "the actor is empty; name the key, e.g. --actor alice@room-b12"))
        }
        if name.utf8.count > maximumLength {
            return .failure(ControlFailure(.badArgument, "the actor is \(name.utf8.count) bytes; the limit is \(maximumLength)"))
        }
        guard name.unicodeScalars.allSatisfy(isAllowed) else {
            return .failure(ControlFailure(.badArgument, "the actor \"\(ControlRequest.shown(name))\" has a character other than letters, digits and . _ - @ + :; name the key with those, e.g. alice@room-b12"))
        }
        return .success(name)
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-", "@", "+", ":": return true
        default: return false
        }
    }
}
