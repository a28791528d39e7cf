import FoundationEssentials

/// One request on Carrel's admin control socket (`carrelctl`): a JSON object
/// on one line, answered by one `ControlResponse` line.
///
/// ```
/// {"command":"status"}
/// {"command":"end","reason":"fire alarm"}
/// {"command":"end","reason":"app hangs","force":true}
/// {"command":"extend","minutes":15}
/// {"command":"extend","minutes":15,"session":3}
/// {"command":"lock"}
/// {"command":"unlock","passcode":"..."}
/// ```
///
/// Parsing validates everything a request carries, so the compositor only
/// ever acts on a well-formed request; a bad one gets a `ControlFailure`
/// saying what was wrong and what is allowed.
public enum ControlRequest: Sendable, Hashable {
    /// Report the mode, the session and the clients.
    case status
    /// Interrupt the live session: the app hears `interrupted(administrative)`
    /// with `reason` as the message. `session`: only if it is still that one.
    case end(reason: String, session: UInt64? = nil)
    /// End the live session at once, whatever the app does: restrictions
    /// come down, the app hears `interrupted(administrative)` with `reason`
    /// (even if it already was interrupted) and then `ended`, and the
    /// session's app is stopped (SIGTERM after `forceEndNotice` unless it
    /// exited, then SIGKILL after `forceEndGrace`). For an app that hangs
    /// while interrupted.
    case forceEnd(reason: String)
    /// Add `minutes` to the active session's time limit. `session`: only if
    /// it is still that one.
    case extend(minutes: Int, session: UInt64? = nil)
    /// Guided Access: pin the app's topmost window in a session begun on
    /// its behalf, without its cooperation.
    case lock
    /// Guided Access: end the lock if `passcode` matches the policy's hash.
    case unlock(passcode: String)
    /// Re-read the policy file; a valid one applies from the next session.
    case reload

    /// The longest request line the compositor reads, newline excluded.
    public static let maximumLineLength = 4096
    /// The longest `end` reason, in bytes of UTF-8.
    public static let maximumReasonLength = 512
    /// The minutes one `extend` may add.
    public static let minutesRange = 1...600
    /// The longest passcode, in bytes of UTF-8.
    public static let maximumPasscodeLength = 1024
    /// How long a force-ended session's app has after `ended` to exit by
    /// itself before SIGTERM.
    public static let forceEndNotice: Duration = .seconds(1)
    /// How long a force-ended session's app has between SIGTERM and SIGKILL.
    public static let forceEndGrace: Duration = .seconds(5)

    public var command: String {
        switch self {
        case .status: return "status"
        case .end, .forceEnd: return "end"
        case .extend: return "extend"
        case .lock: return "lock"
        case .unlock: return "unlock"
        case .reload: return "reload"
        }
    }

    /// The wire form: one JSON object, no newline.
    public var line: String { line(actor: nil) }

    /// The wire form naming who asks (`ControlActor`), if anyone.
    public func line(actor: String?) -> String {
        var wire = Wire(command: command)
        wire.actor = actor
        switch self {
        case .status: break
        case .end(let reason, let session):
            wire.reason = reason
            wire.session = session
        case .forceEnd(let reason):
            wire.reason = reason
            wire.force = true
        case .extend(let minutes, let session):
            wire.minutes = minutes
            wire.session = session
        case .lock: break
        case .unlock(let passcode): wire.passcode = passcode
        case .reload: break
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings and integers cannot fail.
        let data = (try? encoder.encode(wire)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Parses one request line (without its newline).
    public static func parse(_ line: some Collection<UInt8>) -> Result<ControlRequest, ControlFailure> {
        parseNamingActor(line).map(\.request)
    }

    /// Parses one request line and the actor it names (nil when none).
    public static func parseNamingActor(_ line: some Collection<UInt8>) -> Result<(request: ControlRequest, actor: String?), ControlFailure> {
        guard line.count <= maximumLineLength else {
            return .failure(ControlFailure(.badRequest, "request is \(line.count) bytes; the limit is \(maximumLineLength)"))
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(line))
        } catch {
            return .failure(ControlFailure(.badRequest, "request is not a JSON object with a string \"command\"; send e.g. {\"command\":\"status\"}"))
        }
        var actor: String?
        if let named = wire.actor {
            switch ControlActor.validate(named) {
            case .success(let valid): actor = valid
            case .failure(let failure): return .failure(failure)
            }
        }
        return request(in: wire).map { (request: $0, actor: actor) }
    }

    private static func request(in wire: Wire) -> Result<ControlRequest, ControlFailure> {
        switch wire.command {
        case "status":
            return .success(.status)
        case "end":
            guard let reason = wire.reason else {
                return .failure(ControlFailure(.badRequest, "end needs a \"reason\": the message the exam app is shown"))
            }
            if wire.force == true, wire.session != nil {
                return .failure(ControlFailure(.badRequest, "a forced end acts on whatever session is live; send \"force\" or \"session\", not both"))
            }
            return validateReason(reason).map { wire.force == true ? .forceEnd(reason: $0) : .end(reason: $0, session: wire.session) }
        case "extend":
            guard let minutes = wire.minutes else {
                return .failure(ControlFailure(.badRequest, "extend needs \"minutes\", a whole number from \(minutesRange.lowerBound) to \(minutesRange.upperBound)"))
            }
            return validateMinutes(minutes).map { .extend(minutes: $0, session: wire.session) }
        case "lock":
            return .success(.lock)
        case "reload":
            return .success(.reload)
        case "unlock":
            guard let passcode = wire.passcode else {
                return .failure(ControlFailure(.badRequest, "unlock needs a \"passcode\""))
            }
            return validatePasscode(passcode).map { .unlock(passcode: $0) }
        default:
            // Echoed for the log too: control characters become "?".
            return .failure(ControlFailure(.unknownCommand, "unknown command \"\(shown(wire.command))\"; known: status, end, extend, lock, unlock, reload"))
        }
    }

    /// A word as a message may echo it: short, control characters as "?".
    public static func shown(_ word: String) -> String {
        String(String.UnicodeScalarView(word.unicodeScalars.prefix(64).map {
            $0.properties.generalCategory == .control ? "?" : $0
        }))
    }

    /// A reason must say something, fit the limit and be one line of text.
    public static func validateReason(_ reason: String) -> Result<String, ControlFailure> {
        let trimmed = String(reason.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        if trimmed.isEmpty {
            return .failure(ControlFailure(.badArgument, "the reason is empty; say why the session ends (the exam app shows it)"))
        }
        if trimmed.utf8.count > maximumReasonLength {
            return .failure(ControlFailure(.badArgument, "the reason is \(trimmed.utf8.count) bytes; the limit is \(maximumReasonLength)"))
        }
        if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return .failure(ControlFailure(.badArgument, "the reason contains control characters (newline, tab, ...); use one line of plain text"))
        }
        return .success(trimmed)
    }

    public static func validateMinutes(_ minutes: Int) -> Result<Int, ControlFailure> {
        guard minutesRange.contains(minutes) else {
            return .failure(ControlFailure(.badArgument, "\(minutes) minutes is out of range; extend by \(minutesRange.lowerBound) to \(minutesRange.upperBound) minutes"))
        }
        return .success(minutes)
    }

    /// A passcode is not empty and fits the limit; it is never logged.
    public static func validatePasscode(_ passcode: String) -> Result<String, ControlFailure> {
        if passcode.isEmpty {
            return .failure(ControlFailure(.badArgument, "the passcode is empty"))
        }
        if passcode.utf8.count > maximumPasscodeLength {
            return .failure(ControlFailure(.badArgument, "the passcode is \(passcode.utf8.count) bytes; the limit is \(maximumPasscodeLength)"))
        }
        return .success(passcode)
    }

    private struct Wire: Codable {
        var command: String
        var reason: String?
        var minutes: Int?
        var passcode: String?
        /// `end` and `extend`: act only if this is still the live session.
        var session: UInt64?
        /// Only `end`; absent (not false) on the wire unless set.
        var force: Bool?
        /// Who asks, beyond the caller's uid (`ControlActor`).
        var actor: String?
    }
}
