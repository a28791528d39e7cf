/// App-requested lock (ASAM): an app Carrel did not launch asks, through the
/// public socket, to lock the machine to itself. Only executables the policy
/// allowlists may ask, only for a lock-only session (every feature allowed,
/// no participants), and — when the policy says so — only after the person
/// at the machine confirmed on screen.
///
/// ```swift
/// var policy = AppLockPolicy(allowedExecutables: ["/usr/bin/exam"], requireConfirmation: true)
/// policy.entitles(executable: "/usr/bin/exam")        // true
/// AppLock.isLockOnly(.mostRestrictive)                  // false
/// AppLock.prompt(app: "exam")  // "Lock this computer to exam? Press Y to allow, N or Escape to refuse"
/// AppLock.bannerText(app: "exam", timeLimit: 5400)      // "Exam mode: exam — time limit 1 h 30 min"
/// ```
public enum AppLock {
    /// How long the on-screen confirmation waits for an answer before it
    /// counts as a refusal.
    public static let confirmationTimeout: Duration = .seconds(60)

    /// Whether `configuration` only locks: it allows every feature and names
    /// no participant. An app-requested lock may ask for nothing else.
    public static func isLockOnly(_ configuration: AssessmentConfiguration) -> Bool {
        configuration.allowedFeatures == Set(AssessmentFeature.allCases) && configuration.participants.isEmpty
    }

    /// What the prompt and banner call the app: the executable's file name
    /// (the path Carrel read from `/proc/PID/exe`, never what the client says).
    public static func appName(executable: String) -> String {
        let name = executable.split(separator: "/").last.map(String.init) ?? executable
        return name.isEmpty ? executable : name
    }

    /// The confirmation prompt's text.
    public static func prompt(app: String) -> String {
        "Lock this computer to \(app)? Press Y to allow, N or Escape to refuse"
    }

    /// The banner's text at `began`.
    public static func bannerText(app: String, timeLimit seconds: UInt32) -> String {
        "Exam mode: \(app) — time limit \(formatDuration(seconds: seconds))"
    }

    /// A time limit as people read it: "1 h 30 min", "45 min", "2 h", "30 s",
    /// "1 min 5 s". Zero units are left out; seconds only below an hour.
    public static func formatDuration(seconds: UInt32) -> String {
        let hours = seconds / 3600, minutes = seconds % 3600 / 60, rest = seconds % 60
        var parts: [String] = []
        if hours > 0 { parts.append("\(hours) h") }
        if minutes > 0 { parts.append("\(minutes) min") }
        if rest > 0 && hours == 0 { parts.append("\(rest) s") }
        return parts.isEmpty ? "0 s" : parts.joined(separator: " ")
    }

    /// The answer a key pressed during the confirmation gives: Y allows, N
    /// or Escape refuses, anything else is no answer (and is consumed, not
    /// passed on). `keysyms` are lower-cased xkb keysyms.
    public static func answer(forPressed keysyms: [UInt32]) -> Bool? {
        if keysyms.contains(Keysym.y) { return true }
        if keysyms.contains(Keysym.n) || keysyms.contains(Keysym.escape) { return false }
        return nil
    }

    /// The xkb keysyms the confirmation listens for.
    public enum Keysym {
        public static let y: UInt32 = 0x79
        public static let n: UInt32 = 0x6e
        public static let escape: UInt32 = 0xff1b
    }

    /// Where the banner goes: centred at the top of the primary output,
    /// `margin` below its top edge, clamped to the output.
    public static func bannerPlacement(output: Rect, size: Size, margin: Int = 24) -> Rect {
        let width = min(size.width, output.width), height = min(size.height, output.height)
        let y = output.y + min(margin, max(0, output.height - height))
        return Rect(x: output.x + (output.width - width) / 2, y: y, width: width, height: height)
    }

    /// Where the confirmation prompt goes: centred on the primary output.
    public static func promptPlacement(output: Rect, size: Size) -> Rect {
        let width = min(size.width, output.width), height = min(size.height, output.height)
        return Rect(x: output.x + (output.width - width) / 2, y: output.y + (output.height - height) / 2,
                    width: width, height: height)
    }
}

extension AppLockPolicy {
    /// Whether a client whose executable is `executable` (the realpath of
    /// its `/proc/PID/exe`, read once when it connected; nil if unknown) may
    /// ask for an app-requested lock. Unknown executables never may.
    public func entitles(executable: String?) -> Bool {
        guard let executable, executable.hasPrefix("/") else { return false }
        return allowedExecutables.contains(executable)
    }
}
