/// The messages both lockdowns send with the answers that do not depend on
/// the configuration, so the compositor's Invigilator and AssessmentKit's
/// in-memory lockdown answer word for word alike (``ConfigurationRule`` holds
/// the configuration's side):
///
/// | request | when | answer |
/// |---|---|---|
/// | begin | another session is pending or active | `failed(already_active)`, ``alreadyActive`` |
/// | update | the session was interrupted | `update_failed(interrupted)`, ``updateOfInterruptedSession(_:)`` |
public enum SessionAnswer {
    /// A begin while a session, of this or another client, holds the lock.
    public static let alreadyActive = "another session is pending or active"

    /// An update of a session interrupted for `reason`.
    public static func updateOfInterruptedSession(_ reason: InterruptionReason) -> String {
        "the session was interrupted (\(reason.protocolName)), so it can only be ended; end it and begin a new session"
    }
}
