/// Guided Access: an administrator pins the app on screen with `carrelctl
/// lock`, without the app's cooperation, and only the policy's passcode
/// (`carrelctl unlock`) lets it go. The lock is a full assessment session
/// Carrel begins on the app's behalf (the same Invigilator path, so the same
/// restrictions before it counts as begun); this value decides whether a
/// lock or an unlock may happen and what each answer is. The compositor
/// checks the passcode against its hash (slow on purpose) only when
/// `admitUnlock` says so.
public struct GuidedAccess: Sendable, Equatable {
    /// The session holding the lock, from `lock` until it ends.
    public private(set) var session: SessionID?
    /// Wrong passcodes, rate limited.
    public private(set) var attempts: PasscodeAttempts

    public init(attempts: PasscodeAttempts = PasscodeAttempts()) {
        self.attempts = attempts
    }

    /// Whether `lock` may begin a session for `topmostApp` (the client of the
    /// topmost mapped app-role window): Guided Access must be configured, no
    /// session may be live, and there must be an app window.
    /// Under `--assessment` Carrel's own session owns the screen: no lock.
    public func admitLock(configured: Bool, assessmentMode: Bool = false, sessionLive: Bool,
                          topmostApp: ClientID?) -> Result<ClientID, ControlFailure> {
        if assessmentMode {
            return .failure(ControlFailure(.wrongState, "Carrel runs with --assessment, whose session is its own; Guided Access is not available"))
        }
        guard configured else {
            return .failure(ControlFailure(.notConfigured, "Guided Access is off: the policy has no guided_access.passcode_hash (make one with `carrel hash-passcode`)"))
        }
        if let session {
            return .failure(ControlFailure(.wrongState, "Guided Access already holds \(session); unlock it first"))
        }
        guard !sessionLive else {
            return .failure(ControlFailure(.wrongState, "a session is pending or active; Guided Access pins an app only when none is"))
        }
        guard let topmostApp else {
            return .failure(ControlFailure(.noApp, "no app window is mapped; there is nothing to pin"))
        }
        return .success(topmostApp)
    }

    /// `lock` began `session` (or asked the Invigilator to).
    public mutating func locked(_ session: SessionID) {
        self.session = session
    }

    /// Whether an `unlock` at `now` may have its passcode checked.
    public func admitUnlock(at now: Instant) -> Result<SessionID, ControlFailure> {
        guard let session else {
            return .failure(ControlFailure(.wrongState, "Guided Access holds no lock; there is nothing to unlock"))
        }
        if case .tooSoon(let wait) = attempts.admit(at: now) {
            return .failure(ControlFailure(.rateLimited, "too many wrong passcodes: try again in \(Self.wholeSeconds(wait)) s"))
        }
        return .success(session)
    }

    /// The checked passcode matched or not. A match releases the lock (the
    /// caller ends the session); a mismatch is counted.
    public mutating func unlockChecked(matched: Bool, at now: Instant) -> Result<SessionID, ControlFailure> {
        attempts.record(success: matched, at: now)
        guard matched, let session else {
            var message = "wrong passcode (\(attempts.consecutiveFailures) in a row)"
            if case .tooSoon(let wait) = attempts.admit(at: now) {
                message += "; the next attempt is checked in \(Self.wholeSeconds(wait)) s"
            }
            return .failure(ControlFailure(.wrongPasscode, message))
        }
        self.session = nil
        return .success(session)
    }

    /// A wait as people read it: whole seconds, rounded up, at least 1.
    static func wholeSeconds(_ wait: Duration) -> Int {
        max(1, Int((wait / .seconds(1)).rounded(.up)))
    }

    /// The mode `carrelctl status` reports: how Carrel was started, or
    /// `guided_access` while a lock holds.
    public static func controlMode(locked: Bool, kiosk: Bool, assessmentMode: Bool) -> String {
        if locked { return "guided_access" }
        if kiosk { return "kiosk" }
        if assessmentMode { return "assessment" }
        return "standard"
    }

    /// The Invigilator ended or failed the lock's session by itself (it
    /// failed to begin, or Carrel is stopping): nothing is locked any more.
    public mutating func sessionOver(_ id: SessionID) {
        if session == id { session = nil }
    }
}
