/// What a display connected during a session does to that session.
///
/// The policy's `[outputs] allow_hotplug_during_session` decides, with one
/// exception: a display that becomes the primary (no other output was left)
/// would show the session's windows on a screen nobody vetted, so it always
/// interrupts. Any other new output only ever shows the curtain.
public enum OutputHotplug: Sendable, Equatable {
    /// The session goes on; the new output shows only the curtain.
    case tolerated
    /// The session hears `interrupted(integrity)` with this message.
    case interrupts(String)

    /// The verdict for output `name`, connected while a session holds.
    /// `becomesPrimary`: it is the first output now present.
    public static func connectedDuringSession(output name: String, becomesPrimary: Bool,
                                              policy: OutputPolicy) -> OutputHotplug {
        if becomesPrimary {
            return .interrupts("output \(name) was connected during the session and became the primary display")
        }
        guard policy.allowHotplugDuringSession else {
            return .interrupts("output \(name) was connected during the session")
        }
        return .tolerated
    }
}
