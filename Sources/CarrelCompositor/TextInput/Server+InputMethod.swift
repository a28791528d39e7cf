import CarrelCore
import CarrelSystem
import CarrelShim
import Glibc
import Logging

/// The input method's life as the compositor carries it out: the relay's
/// globals, launching the engine on its socket, relaunching it when Core
/// says so, and the window lookups the relay needs.
extension Server {
    /// Creates the text-input relay and its globals when the policy names an
    /// input method (before any client connects).
    func createTextInputRelay() {
        guard desk.policy.inputMethod != nil else { return }
        textInput = TextInputRelay(server: self, seat: input.seat, above: appLayer, logger: logger)
    }

    /// Prepares the engine's private HOME and launches it (from `run`).
    ///
    /// HOME (its configuration, and mozc's) is a directory of its own under
    /// the runtime directory. When Carrel runs as root the engine runs as
    /// `nobody` (mozc's server exits at once as root), who cannot enter the
    /// runtime directory: HOME is then a fresh `mkdtemp` directory under
    /// /tmp, owned by that user, mode 0700.
    func startInputMethod(runtimeDirectory: String) throws {
        guard desk.policy.inputMethod != nil else { return }
        // Through the helper, its home is the helper's to make, afresh each
        // launch; a helper not answering yet is tried again as after a crash.
        if privilegedHelper != nil {
            do {
                try launchInputMethod()
            } catch {
                logger.error("\(error)")
                drive { $0.inputMethodExited("could not launch: \(error)", now: AssessmentService.now()) }
            }
            return
        }
        let user = HelperUser.whenRoot()
        var template = Array((user == nil ? "\(runtimeDirectory)/carrel-input-method-XXXXXX" : "/tmp/carrel-input-method-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CompositorError.launch("input method: cannot create its home directory: \(SystemError.current)")
        }
        let home = String(cString: made)
        inputMethodDirectory = home
        if let user, chown(home, user.uid, user.gid) != 0 {
            throw CompositorError.launch("input method: cannot give \(home) to uid \(user.uid): \(SystemError.current)")
        }
        inputMethodUser = user
        try launchInputMethod()
    }

    private func launchInputMethod() throws {
        guard let policy = desk.policy.inputMethod else { return }
        if let helper = privilegedHelper {
            try startInputMethodThroughHelper(helper, policy: policy)
            return
        }
        guard let home = inputMethodDirectory else { return }
        let socket = try roles.connect(.inputMethod)
        defer { close(socket) }
        let prediction = desk.enginePredictionAllowed
        inputMethodProcess = try launchInOwnCgroup(.inputMethod) {
            try InputMethodProcess.launch(policy, socket: socket, home: home, prediction: prediction,
                                          user: inputMethodUser, logger: logger)
        }
        decide { $0.inputMethodLaunched(now: AssessmentService.now(), prediction: prediction) }
    }

    /// Asks the helper to start the engine and goes on: the loop never waits
    /// for its answer (bounded by the link's `answerTimeout`). Until it
    /// comes Core holds keys for the engine; what the answer means is Core's.
    private func startInputMethodThroughHelper(_ helper: PrivilegedHelperLink, policy: InputMethodPolicy) throws {
        // One start at a time: its answer (or its failure) decides what follows.
        guard !inputMethodStart.isInFlight(.inputMethod) else { return }
        let prediction = desk.enginePredictionAllowed
        let socket = try roles.connect(.inputMethod)
        let cgroup = try helperRoleCgroup(.inputMethod, closingOnFailure: socket)
        let files = InputMethodProcess.configurationFiles(engines: policy.engines, prediction: prediction)
        inputMethodStart.ask(.inputMethod)
        decide { $0.inputMethodStarting(prediction: prediction) }
        logger.notice("input method \(policy.command[0]) with engines \(policy.engines.joined(separator: ", ")), prediction \(prediction ? "on" : "off"): asked the privileged helper to start it")
        spawnThroughHelperLater(helper, role: .inputMethod, argv: InputMethodProcess.command(policy), cgroup: cgroup,
                                connection: socket, label: "input method", files: files) { [weak self] answer in
            self?.inputMethodStartAnswered(answer)
        }
    }

    /// The helper answered the engine's start. Started: it runs (or goes at
    /// once if Carrel stopped meanwhile); Core may restart it if a session
    /// changed its prediction while the answer was on its way. Not started
    /// (the helper's error, or silent past the link's bound): as a launch
    /// that failed, Core relaunches it after a back-off or gives up.
    private func inputMethodStartAnswered(_ answer: Result<LaunchedApp, CompositorError>) {
        let disposition = inputMethodStart.answered(.inputMethod)
        switch answer {
        case .success(let launched):
            guard let launched = launched as? HelperLaunchedApp else {
                drive { $0.inputMethodStartFailed("could not launch: the privileged helper named no program of its own", now: AssessmentService.now()) }
                return
            }
            let process = InputMethodProcess(helperLaunched: launched)
            guard disposition == .keep else {
                logger.notice("input method: \(process.label) started after Carrel stopped it; killing it")
                process.forceStop()
                return
            }
            inputMethodProcess = process
            drive { $0.inputMethodStarted(now: AssessmentService.now()) }
        case .failure(let error):
            guard disposition == .keep else { return }
            logger.error("\(error)")
            drive { $0.inputMethodStartFailed("could not launch: \(error)", now: AssessmentService.now()) }
        }
    }

    /// How long an engine being replaced has to end after SIGTERM before its
    /// process group is killed.
    static let inputMethodStopGrace: Duration = .seconds(1)

    /// Core changed the engine's prediction setting: end it, start it anew,
    /// never waiting on it in the event loop. Its connection is closed at once
    /// (nothing it composed can reach the session), its process group gets
    /// SIGTERM; SIGCHLD reaps it and launches the new engine
    /// (`reapInputMethod`); a timer kills the group if it lingers.
    func restartInputMethod() {
        guard let process = inputMethodProcess else { return }
        inputMethodProcess = nil
        retiringInputMethod = process
        roles.disconnectClients(of: .inputMethod)
        process.beginStopping(logger: logger)
        logger.info("input method: stopping \(process.label); the new engine starts when it has ended")
        if inputMethodStopTimer == nil {
            inputMethodStopTimer = EventLoopTimer(loop: wl_display_get_event_loop(display)) { [unowned self] in
                guard let retiring = retiringInputMethod else { return }
                logger.warning("input method: \(retiring.label) did not end within \(Self.inputMethodStopGrace.secondsText) of SIGTERM; killing it")
                retiring.forceStop()
                killRoleCgroup(.inputMethod)
            }
        }
        inputMethodStopTimer?.arm(after: Self.inputMethodStopGrace)
        // It may have ended already, before this SIGTERM.
        _ = reapRetiringInputMethod()
    }

    /// The engine being replaced ended: collect it and launch its successor.
    private func reapRetiringInputMethod() -> Bool {
        guard let retiring = retiringInputMethod, retiring.reap() != nil else { return false }
        retiringInputMethod = nil
        inputMethodStopTimer?.disarm()
        killRoleCgroup(.inputMethod)
        logger.info("input method: \(retiring.label) ended; launching its replacement")
        do {
            try launchInputMethod()
        } catch {
            logger.error("\(error)")
            drive { $0.inputMethodExited("could not restart: \(error)", now: AssessmentService.now()) }
        }
        return true
    }

    /// SIGCHLD: true when the input method (or the one being replaced) ended
    /// (Core decides what follows the running one's end).
    func reapInputMethod() -> Bool {
        if reapRetiringInputMethod() { return true }
        guard let process = inputMethodProcess, let status = process.reap() else { return false }
        inputMethodProcess = nil
        // What it left in its cgroup (mozc's server) goes with it.
        releaseRoleCgroup(.inputMethod)
        drive { $0.inputMethodExited(status.description, now: AssessmentService.now()) }
        return true
    }

    func relaunchInputMethod(after delay: Duration) {
        if inputMethodTimer == nil {
            inputMethodTimer = EventLoopTimer(loop: wl_display_get_event_loop(display)) { [unowned self] in
                do {
                    try launchInputMethod()
                } catch {
                    logger.error("\(error)")
                    drive { $0.inputMethodExited("could not launch: \(error)", now: AssessmentService.now()) }
                }
            }
        }
        inputMethodTimer?.arm(after: delay)
    }

    /// The helper said its program `id` ended: the engine (or the one being
    /// replaced) it was, if any, hears it; SIGCHLD's path then reaps it.
    func inputMethodHelperProgramExited(_ id: UInt64, waitStatus: Int32) {
        for process in [inputMethodProcess, retiringInputMethod].compactMap({ $0 }) {
            if let launched = process.launched, launched.isProgram(id) { launched.exited(waitStatus: waitStatus) }
        }
    }

    /// Carrel is stopping: the engine ends, its configuration goes.
    func stopInputMethod() {
        inputMethodStart.stop(.inputMethod)
        inputMethodTimer?.cancel()
        inputMethodTimer = nil
        inputMethodStopTimer?.cancel()
        inputMethodStopTimer = nil
        retiringInputMethod?.terminate()
        retiringInputMethod = nil
        inputMethodProcess?.terminate()
        inputMethodProcess = nil
        if let directory = inputMethodDirectory { removeTree(directory) }
        inputMethodDirectory = nil
    }

    /// Removes a directory Carrel made, with everything in it (the engine's
    /// configuration and what mozc wrote there); symbolic links are unlinked,
    /// never followed.
    private func removeTree(_ path: String) {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
                }
                if name == "." || name == ".." { continue }
                let child = "\(path)/\(name)"
                var info = stat()
                if lstat(child, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                    removeTree(child)
                } else {
                    unlink(child)
                }
            }
            closedir(directory)
        }
        rmdir(path)
    }

    // MARK: - Windows, for the relay

    /// Damages every output whole and schedules a frame.
    func repaintOutputs() {
        for output in outputs {
            if let sceneOutput = wlr_scene_get_scene_output(scene, output.wlrOutput) {
                WlrootsVersion.damageWhole(sceneOutput)
            }
            wlr_output_schedule_frame(output.wlrOutput)
        }
    }

    /// The surface of `window` when it is mapped.
    func mappedSurface(of window: WindowID?) -> UnsafeMutablePointer<wlr_surface>? {
        guard let window else { return nil }
        return stack.first { $0.id == window && $0.isMapped }?.surface
    }

    /// The window whose toplevel surface is `surface`.
    func windowID(of surface: UnsafeMutablePointer<wlr_surface>?) -> WindowID? {
        guard let surface else { return nil }
        return stack.first { $0.surface == surface }?.id
    }

    /// The scene node a toplevel surface is drawn at.
    func sceneNode(of surface: UnsafeMutablePointer<wlr_surface>) -> UnsafeMutablePointer<wlr_scene_node>? {
        stack.first { $0.surface == surface }?.sceneNode
    }
}
