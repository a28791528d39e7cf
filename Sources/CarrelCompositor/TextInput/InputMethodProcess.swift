import CarrelCore
import CarrelSystem
import Glibc
import Logging

/// The policy's input method (fcitx5) as Carrel runs it: a configuration of
/// its own in a private HOME (the profile offering the policy's engines, the
/// first active from the start), connected through its own socket pair
/// (WAYLAND_SOCKET), with no X display and no D-Bus frontends, watched by its
/// pid; or, with the privileged helper, started by it as the input method's
/// own user with a private home holding the same configuration.
///
/// fcitx5 5.0 runs headless on Wayland with only these addons: `wayland`
/// and `waylandim` (input-method-v2, keyboard grab, virtual keyboard),
/// `classicui` (the candidate popup through input-popup-surface-v2),
/// `keyboard`, and the engines; nothing needs a D-Bus session bus.
final class InputMethodProcess {
    /// Its pid when Carrel started it itself (0 when the helper did).
    let pid: pid_t
    /// The program the helper started, when it did.
    let launched: HelperLaunchedApp?
    private var exited = false
    /// What it had started when its stop began, process group or not: ended
    /// with it (a child that called setsid is in no group of its).
    private var family: [ProcessTable.Entry] = []

    private init(pid: pid_t) {
        self.pid = pid
        launched = nil
    }

    init(helperLaunched: HelperLaunchedApp) {
        pid = 0
        launched = helperLaunched
    }

    /// Its pid when it is Carrel's own child.
    var childPid: pid_t? { launched == nil ? pid : nil }
    /// How the log names it.
    var label: String { launched?.label ?? "pid \(pid)" }

    /// The addons fcitx5 loads: its Wayland frontend, its popup, plain keys,
    /// and the engines' own addons (pinyin needs its helper and punctuation).
    static func addons(for engines: [String]) -> [String] {
        var addons = ["wayland", "waylandim", "classicui", "keyboard"]
        for engine in engines {
            switch engine {
            case "pinyin", "shuangpin": addons += ["pinyin", "pinyinhelper", "punctuation"]
            default: addons.append(engine)
            }
        }
        var seen = Set<String>()
        return addons.filter { seen.insert($0).inserted }
    }

    /// fcitx5's profile, global configuration and pinyin's, by path relative
    /// to its HOME (XDG_CONFIG_HOME is `HOME/.config`).
    static func configurationFiles(engines: [String], prediction: Bool) -> [String: String] {
        var profile = "[Groups/0]\nName=Default\nDefault Layout=us\nDefaultIM=\(engines.first ?? "keyboard-us")\n\n"
        for (index, name) in (["keyboard-us"] + engines).enumerated() {
            profile += "[Groups/0/Items/\(index)]\nName=\(name)\nLayout=\n\n"
        }
        profile += "[GroupOrder]\n0=Default\n"
        // Active from the start, one state for every window; Ctrl+Space
        // toggles plain keys, Ctrl+Shift+Space steps through the engines.
        let config = """
            [Hotkey]
            EnumerateWithTriggerKeys=True
            EnumerateSkipFirst=True

            [Hotkey/TriggerKeys]
            0=Control+space

            [Hotkey/EnumerateForwardKeys]
            0=Control+Shift+space

            [Behavior]
            ActiveByDefault=True
            ShareInputState=All
            ShowInputMethodInformation=False

            """
        // Pinyin's own prediction (words after each commit), as the session
        // allows predictive_text; fcitx5 reads it at start.
        return [".config/fcitx5/profile": profile, ".config/fcitx5/config": config,
                ".config/fcitx5/conf/pinyin.conf": "Prediction=\(prediction ? "True" : "False")\n"]
    }

    /// The addon options Carrel appends to the policy's command.
    static func command(_ policy: InputMethodPolicy) -> [String] {
        policy.command + ["--disable=all", "--enable=\(addons(for: policy.engines).joined(separator: ","))"]
    }

    /// Writes `configurationFiles` under `home`.
    static func prepareConfiguration(home: String, engines: [String], prediction: Bool, user: HelperUser?) throws {
        let fcitx = "\(home)/.config/fcitx5"
        let directories = [home, "\(home)/.config", "\(home)/.config/mozc", "\(home)/.local", "\(home)/.local/share", fcitx, "\(fcitx)/conf"]
        for directory in directories {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw CompositorError.launch("input method: cannot create \(directory): \(SystemError.current)")
            }
        }
        defer {
            if let user {
                for path in directories + ["\(fcitx)/profile", "\(fcitx)/config", "\(fcitx)/conf/pinyin.conf"] {
                    _ = chown(path, user.uid, user.gid)
                }
            }
        }
        for (path, text) in configurationFiles(engines: engines, prediction: prediction) {
            try write(text, to: "\(home)/\(path)")
        }
    }

    private static func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CompositorError.launch("input method: cannot write \(path): \(SystemError.current)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw CompositorError.launch("input method: cannot write \(path): \(SystemError.current)")
        }
    }

    /// Launches `policy.command` with Carrel's addon list, on `socket`, its
    /// configuration and HOME (mozc keeps its settings there) under `home`.
    static func launch(_ policy: InputMethodPolicy, socket: Int32, home: String, prediction: Bool, user: HelperUser?,
                       logger: Logger) throws -> InputMethodProcess {
        try prepareConfiguration(home: home, engines: policy.engines, prediction: prediction, user: user)
        // Its one connection is the socket pair's end; its configuration
        // and mozc's settings live under `home`. No X display (fcitx5 would
        // serve X clients and draw there) and no session bus (nothing may
        // reach the engine but Carrel's socket).
        let environment: [String: String?] = [
            "HOME": home, "XDG_CONFIG_HOME": "\(home)/.config", "XDG_DATA_HOME": "\(home)/.local/share",
            "DBUS_SESSION_BUS_ADDRESS": nil,
        ]
        let engine = command(policy)
        let command = user.map { $0.wrap(engine) } ?? engine
        let pid: pid_t
        do {
            // A process group of its own: mozc's server, which the engine
            // starts, ends with it.
            pid = try AppProcess.spawn(command, connection: .connectedSocket(socket), environment: environment,
                                       ownProcessGroup: true)
        } catch {
            throw CompositorError.launch("input method \(error.program): \(error.reason); check [input_method] command names an installed fcitx5")
        }
        logger.notice("launched input method \(policy.command[0]) as pid \(pid)\(user.map { " (uid \($0.uid))" } ?? "") with engines \(policy.engines.joined(separator: ", ")), prediction \(prediction ? "on" : "off")")
        return InputMethodProcess(pid: pid)
    }

    /// Reaps the process if it has ended; nil while it runs.
    func reap() -> AppExit? {
        if let launched { return launched.reap() }
        guard !exited else { return nil }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        exited = true
        // What it started (mozc's server) goes with it; its relaunch starts afresh.
        kill(-pid, SIGKILL)
        ProcessTable.kill(family)
        return AppExit(waitStatus: status)
    }

    /// Asks it and what it started to end (SIGTERM to its process group)
    /// without waiting: SIGCHLD tells when it has, `reap` collects it.
    /// Through the helper not even for the helper's answer: one that fails
    /// is logged, and the stop's timer kills it all the same.
    func beginStopping(logger: Logger) {
        if let launched {
            let warn = { [label = launched.label] (why: String) in
                logger.warning("input method: could not send SIGTERM to \(label) through the privileged helper: \(why)")
            }
            if let problem = launched.signal(.term, failed: warn) { warn(problem) }
            return
        }
        guard !exited else { return }
        family = ProcessTable.descendants(of: pid)
        kill(-pid, SIGTERM)
    }

    /// It did not end in time after `beginStopping`: SIGKILL to its group.
    func forceStop() {
        if let launched { return launched.kill() }
        guard !exited else { return }
        kill(-pid, SIGKILL)
        ProcessTable.kill(family)
    }

    /// Ends it and what it started, waiting (Carrel is stopping: SIGTERM,
    /// then SIGKILL after a second).
    func terminate() {
        if let launched { return launched.terminate(grace: 1.0) }
        if !exited { family = ProcessTable.descendants(of: pid) }
        defer { ProcessTable.kill(family) }
        kill(-pid, SIGTERM)
        for _ in 0..<100 where !exited {
            if reap() != nil { break }
            usleep(10_000)
        }
        kill(-pid, SIGKILL)
        guard !exited else { return }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exited = true
    }
}
