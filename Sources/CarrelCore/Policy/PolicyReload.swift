/// `carrelctl reload`: what a new, valid policy file changes in a running
/// Carrel. The parts Carrel reads when a session begins or a key is pressed
/// apply from the next session on; the parts fixed when Carrel started
/// (globals it created, the control socket, the kiosk supervisor, the
/// providers) are reported as needing a restart and keep their running
/// values, so what runs is always one consistent, validated policy.
public struct PolicyReload: Sendable, Equatable {
    /// The policy Carrel runs under after the reload.
    public var policy: Policy
    /// Tables whose changes took effect (from the next session), sorted.
    public var applied: [String]
    /// Tables whose changes wait for a restart, sorted.
    public var needRestart: [String]

    /// What reloading `file` into a Carrel running `running` does.
    public init(running: Policy, file: Policy) {
        var merged = running
        var applied: Set<String> = []
        var restart: Set<String> = []

        // [assessment]: time limits apply at the next begin; the roles decide
        // who sees the assessment global, created at start.
        var session = file.session
        if session.entitledRoles != running.session.entitledRoles {
            restart.insert("assessment.roles")
            session.entitledRoles = running.session.entitledRoles
        }
        if session != running.session { applied.insert("assessment") }
        merged.session = session

        func take<T: Equatable>(_ name: String, _ path: WritableKeyPath<Policy, T>) {
            guard file[keyPath: path] != running[keyPath: path] else { return }
            merged[keyPath: path] = file[keyPath: path]
            applied.insert(name)
        }
        func keep<T: Equatable>(_ name: String, _ path: KeyPath<Policy, T>) {
            if file[keyPath: path] != running[keyPath: path] { restart.insert(name) }
        }
        take("participants", \.participants)
        take("emergency", \.emergencyBinding)
        take("app_lock", \.appLock)
        take("guided_access", \.guidedAccess)
        take("preconditions", \.preconditions)
        take("magnifier", \.magnifier)
        // Launched for each session that allows it: the next one uses the new command.
        take("on_screen_keyboard", \.onScreenKeyboard)
        // The input method's globals and its engine are set up at start.
        keep("input_method", \.inputMethod)
        keep("capture", \.capture)
        keep("outputs", \.outputs)
        keep("kiosk", \.kiosk)
        keep("control", \.control)
        keep("providers", \.providers)
        keep("audit", \.audit)
        // The attestation key is read once, at start.
        keep("attestation", \.attestation)
        // The metrics file is opened once, at start.
        keep("metrics", \.metrics)

        policy = merged
        self.applied = applied.sorted()
        needRestart = restart.sorted()
    }

    /// One line for the log and `carrelctl reload`.
    public var summary: String {
        var parts: [String] = []
        parts.append(applied.isEmpty ? "nothing changed that applies now"
                                     : "applies from the next session: \(applied.joined(separator: ", "))")
        if !needRestart.isEmpty {
            parts.append("changed but takes effect only when Carrel restarts: \(needRestart.joined(separator: ", "))")
        }
        return parts.joined(separator: "; ")
    }
}
