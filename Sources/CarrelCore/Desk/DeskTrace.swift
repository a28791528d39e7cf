/// Each effect the Desk decides, as one machine-readable object for
/// `carrel --trace FILE`: what tests assert on instead of log lines. Every
/// object has `effect` (the case's name); windows come with their owner's
/// role and participant id as the Desk knows them, so a reader can tell the
/// exam from a participant without knowing window numbers.
extension Desk {
    public func trace(_ effect: DeskEffect) -> CanonicalJSON {
        var fields: [String: CanonicalJSON] = ["effect": .string(effect.traceName), "detail": .string(effect.description)]
        func window(_ id: WindowID?, key: String = "window") {
            guard let id else {
                fields[key] = .null
                return
            }
            fields[key] = .integer(Int64(clamping: id.raw))
            if let owner = windows.owner(of: id) {
                fields["role"] = .string(owner.role.rawValue)
                if let participant = owner.participantID { fields["participant"] = .string(participant) }
            }
        }
        switch effect {
        case .focus(let id): window(id)
        case .raiseWindow(let id): window(id)
        case .setWindowShown(let id, let shown):
            window(id)
            fields["shown"] = .bool(shown)
        case .deliverKey(let id): window(id)
        case .deliverKeyToInputMethod(let id), .holdKey(let id), .relayComposition(let id): window(id)
        case .relaunchParticipant(let id): fields["participant"] = .string(id)
        case .log(let entry):
            fields["level"] = .string("\(entry.level)")
            fields["message"] = .string(entry.message)
        case .stop(let status): fields["status"] = .integer(Int64(status))
        default: break
        }
        return .object(fields)
    }
}

extension DeskEffect {
    /// The case's name, as the trace gives it.
    public var traceName: String {
        switch self {
        case .session: return "session"
        case .recordOwnBegin: return "recordOwnBegin"
        case .deliverKey: return "deliverKey"
        case .consumeKey: return "consumeKey"
        case .deliverKeyToInputMethod: return "deliverKeyToInputMethod"
        case .holdKey: return "holdKey"
        case .releaseHeldKeys: return "releaseHeldKeys"
        case .armHeldKeyDeadline: return "armHeldKeyDeadline"
        case .relayComposition: return "relayComposition"
        case .commitPreedit: return "commitPreedit"
        case .cancelComposition: return "cancelComposition"
        case .relaunchInputMethod: return "relaunchInputMethod"
        case .restartInputMethod: return "restartInputMethod"
        case .focus: return "focus"
        case .raiseWindow: return "raiseWindow"
        case .relaunchParticipant: return "relaunchParticipant"
        case .setWindowShown: return "setWindowShown"
        case .applyScreenRules: return "applyScreenRules"
        case .showPrompt: return "showPrompt"
        case .hidePrompt: return "hidePrompt"
        case .checkPasscode: return "checkPasscode"
        case .acceptSelection: return "acceptSelection"
        case .refuseSelection: return "refuseSelection"
        case .recordBlocked: return "recordBlocked"
        case .relaunchApp: return "relaunchApp"
        case .stop: return "stop"
        case .stopApp: return "stopApp"
        case .switchVirtualTerminal: return "switchVirtualTerminal"
        case .drawMagnifier: return "drawMagnifier"
        case .log: return "log"
        }
    }
}
