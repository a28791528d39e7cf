import CarrelAudit
import CarrelCore
import CarrelShim
import CarrelSystem
import Glibc
import Logging

/// The compositor: owns the Wayland display, the wlroots objects and every
/// Swift handle that holds a wlroots pointer.
///
/// Threading: everything here runs on the one thread that calls `run()`,
/// inside libwayland's event loop; signals (SIGCHLD, SIGTERM, SIGINT) arrive
/// as loop events through signalfd, so no other thread touches this state.
public final class Server {
    let display: OpaquePointer
    let backend: UnsafeMutablePointer<wlr_backend>
    /// The seat session wlroots opened (a real seat: virtual terminals), if any.
    let session: UnsafeMutablePointer<wlr_session>?
    let renderer: UnsafeMutablePointer<wlr_renderer>
    let allocator: UnsafeMutablePointer<wlr_allocator>
    let scene: UnsafeMutablePointer<wlr_scene>
    let outputLayout: UnsafeMutablePointer<wlr_output_layout>
    /// What ties scene outputs to the layout (wlroots 0.17+; nil on 0.15).
    private var sceneLayout: OpaquePointer?
    let xdgShell: UnsafeMutablePointer<wlr_xdg_shell>
    private(set) var input: Input!
    private(set) var assessment: AssessmentService!
    /// wlroots' screencopy, when the policy enables capture outside sessions.
    private(set) var screencopy: UnsafeMutablePointer<wlr_screencopy_manager_v1>?
    /// Whether a capture client waits for an output's next frame.
    var captureWaiting: Bool {
        guard let screencopy else { return false }
        return wl_list_empty(&screencopy.pointee.frames) == 0
    }
    private var controlSocket: ControlSocket?
    /// Every decision that combines sessions, modes, keys and windows.
    private(set) var desk: Desk
    /// The session whose restrictions the providers hold (its preconditions
    /// were met), so a revert undoes exactly what was applied.
    var restrictionsHeldFor: SessionID?
    /// Runs the restriction plans one at a time, each step's result heard
    /// when it comes (the providers' from the loop).
    lazy var restrictionRunner = RestrictionRunner(server: self)
    /// The audit log; opened first in init, before any wlroots object.
    var audit: AuditLog!
    /// What the preconditions are checked against.
    var environment: EnvironmentProbe!
    /// Signs statements about sessions for exam servers (the policy's key).
    private(set) var attestor: Attestor!
    /// `carrel.prom` for node-exporter, when the policy's `[metrics]` asks for it.
    var metricsFile: MetricsTextfile?
    var auditWatch: OpaquePointer?
    /// The client of the last selection or drag request, so that a refusal
    /// (reported by wlroots without its client) can name it.
    var selectionRequester: OpaquePointer?
    let logger: Logger
    let options: CompositorOptions
    let roles: ClientRoles
    /// Scene layers, bottom to top: untrusted clients' windows under the app's.
    let untrustedLayer: UnsafeMutablePointer<wlr_scene_tree>
    let appLayer: UnsafeMutablePointer<wlr_scene_tree>
    /// Above everything: plain colour over outputs other than the primary
    /// while a session holds restrictions.
    let curtainLayer: UnsafeMutablePointer<wlr_scene_tree>
    /// Above the curtains: what Carrel draws itself (confirmation, banner).
    private let overlayLayer: UnsafeMutablePointer<wlr_scene_tree>
    private(set) var overlay: Overlay!

    private var listeners = ListenerBag()
    private(set) var outputs: [Output] = []
    /// Toplevels in stacking order, bottom to top.
    var stack: [View] = []
    /// Every toplevel, mapped or not.
    var views: [UnsafeMutablePointer<wlr_xdg_surface>: View] = [:]
    private var decorations: [Decoration] = []
    var nextWindowID: UInt64 = 1
    private var signals: [EventLoopSignal] = []
    /// Protocol loggers that refuse requests wlroots 0.15 would crash on.
    private var protocolGuards: [OpaquePointer] = []
    private var hotplugHook: OutputHotplugHook?
    private(set) var app: LaunchedApp?
    /// `--trace FILE`, when given.
    private(set) var trace: TraceFile?
    /// `--privileged-helper`: the connection to carrel-privileged.
    private(set) var privilegedHelper: PrivilegedHelperLink?
    /// Apps of force-ended sessions in their grace period before SIGKILL.
    var appStops: [AppStop] = []
    /// Single App Mode's relaunch timer, armed when Core says so.
    private var relaunchTimer: EventLoopTimer?
    /// Launches the app again (set once the app socket is open).
    private var launchApp: (() throws -> Void)?
    /// Restriction providers (network, media): recovery, cgroup, verify timer.
    private(set) var providerHost: ProviderHost?
    private var exitStatus: Int32 = 0
    /// Where the magnifier looks: the pointer or the text cursor, whichever moved last.
    var magnifierFocus = MagnifierFocus()
    /// Text input and the input method, when the policy names one.
    var textInput: TextInputRelay?
    var inputMethodProcess: InputMethodProcess?
    var inputMethodTimer: EventLoopTimer?
    /// The engine being replaced (SIGTERM sent, not yet reaped) and the timer
    /// that kills it if it lingers.
    var retiringInputMethod: InputMethodProcess?
    var inputMethodStopTimer: EventLoopTimer?
    /// The privileged helper is starting the engine (asked, not answered);
    /// Carrel stopping meanwhile makes the answer's engine go at once.
    var inputMethodStart = StartsInFlight<PrivilegedRequest.SpawnRole>()
    /// The engine's private HOME.
    var inputMethodDirectory: String?
    /// Who the engine runs as when Carrel runs as root.
    var inputMethodUser: HelperUser?
    /// The virtual keyboards of the input method and the on-screen keyboard.
    private(set) var virtualKeyboards: VirtualKeyboardHost!
    /// The on-screen keyboard of sessions that allow it.
    private(set) var onScreenKeyboard: OnScreenKeyboardHost!
    /// The live session's participant programs.
    private(set) var participants: Participants!
    /// `XDG_RUNTIME_DIR`, where the private sockets live (set in `run`).
    private(set) var runtimeDirectory = ""
    private(set) public var publicSocketName: String = ""

    public init(options: CompositorOptions, logger: Logger) throws {
        self.options = options
        self.logger = logger
        WlrootsLog.install(level: options.logLevel)

        display = wl_display_create()
        // The audit log first: Carrel does not start without it, and failing
        // here leaves nothing of wlroots' behind.
        do {
            audit = try AuditLog(path: options.policy.audit.path, loop: wl_display_get_event_loop(display), logger: logger)
            audit.journal = JournalForwarder(socketPath: options.journalSocket, exportPath: options.journalExport,
                                             run: audit.run, loop: wl_display_get_event_loop(display), logger: logger)
            trace = try options.tracePath.map(TraceFile.init(path:))
        } catch {
            wl_display_destroy(display)
            throw error
        }
        guard let (backend, session) = WlrootsVersion.createBackend(display) else {
            throw CompositorError.backend("wlroots found no usable backend; for a headless run set WLR_BACKENDS=headless WLR_RENDERER=pixman, for a window run under X11 or Wayland")
        }
        self.backend = backend
        self.session = session
        // Single App Mode starts in its gap: nothing but the app until the
        // app's first window maps (Core decides, from the policy).
        desk = Desk(Desk.Setup(
            policy: options.policy, appName: options.app.first, assessment: options.assessmentMode,
            emergency: try options.policy.emergencyBinding.map { try Self.resolve($0, for: "emergency.binding") },
            unlockKeys: try options.policy.guidedAccess.unlockKeys.map { try Self.resolve($0, for: "guided_access.unlock_keys") },
            hasVirtualTerminals: session != nil,
            magnifierKeys: try Self.resolve(options.policy.magnifier)))
        guard let renderer = wlr_renderer_autocreate(backend) else {
            throw CompositorError.backend("no renderer; without a GPU set WLR_RENDERER=pixman")
        }
        self.renderer = renderer
        wlr_renderer_init_wl_display(renderer, display)
        guard let allocator = wlr_allocator_autocreate(backend, renderer) else {
            throw CompositorError.backend("no buffer allocator for this backend and renderer")
        }
        self.allocator = allocator
        environment = EnvironmentProbe(backend: backend, policyPath: options.policyPath)
        attestor = Attestor(options: options, logger: logger)

        // wl_compositor and wl_subcompositor.
        WlrootsVersion.createCompositor(display, renderer)
        wlr_data_device_manager_create(display)
        wlr_primary_selection_v1_device_manager_create(display)

        outputLayout = WlrootsVersion.createOutputLayout(display)
        wlr_xdg_output_manager_v1_create(display, outputLayout)
        scene = WlrootsVersion.createScene()
        // Scene outputs follow their layout outputs' positions.
        sceneLayout = WlrootsVersion.attachOutputLayout(scene, outputLayout)
        untrustedLayer = WlrootsVersion.createTree(in: scene)
        appLayer = WlrootsVersion.createTree(in: scene)
        curtainLayer = WlrootsVersion.createTree(in: scene)
        overlayLayer = WlrootsVersion.createTree(in: scene)
        overlay = Overlay(layer: overlayLayer, logger: logger)

        WlrootsVersion.createPresentation(display, backend, scene: scene)
        wlr_viewporter_create(display)
        wlr_idle_inhibit_v1_create(display)

        xdgShell = WlrootsVersion.createXdgShell(display)
        // Before any client connects: wlroots must never see a popup that
        // is its own ancestor, nor (0.15) restack an orphaned subsurface, nor
        // act on an inert xdg_toplevel (see the shim; a guard a version does
        // not need is nil).
        protocolGuards = [WlrootsVersion.guardPopupParents(display),
                          WlrootsVersion.guardOrphanedSubsurfaces(display),
                          WlrootsVersion.guardInertXdgObjects(display),
                          WlrootsVersion.guardPaddedKeymaps(display)].compactMap { $0 }
        // Before any client connects: no client may hold wl_shm pools without end.
        ShmPoolGuard.install(on: display, limit: .standard, logger: logger)
        let decorationManager = wlr_xdg_decoration_manager_v1_create(display)!

        // The assessment global goes exactly to the roles the policy entitles.
        let access = options.access.applying(desk.policy)
        roles = ClientRoles(display: display, access: access, appLock: desk.policy.appLock, logger: logger)
        // What Carrel launches and what they start stay findable: an orphan
        // of theirs becomes Carrel's child (not init's), is refused on the
        // private sockets and is ended with the session.
        if !carrel_become_child_subreaper() {
            logger.warning("could not become the child subreaper of the programs Carrel launches (\(SystemError.current)); a process that double-forks out of a participant is not ended with its session")
        }
        // Capture exists only when the policy enables it outside sessions;
        // while a session holds restrictions the global is hidden and every
        // pending frame fails (at begin, and before each output commit).
        if desk.policy.capture.enabledOutsideSessions {
            screencopy = wlr_screencopy_manager_v1_create(display)
        }

        listeners.on(&backend.pointee.events.new_output) { [unowned self] data in
            handleNewOutput(data!.assumingMemoryBound(to: wlr_output.self))
        }
        WlrootsVersion.onNewXdgSurface(xdgShell, &listeners) { [unowned self] xdgSurface in
            handleNewXdgSurface(xdgSurface)
        }
        listeners.on(&decorationManager.pointee.events.new_toplevel_decoration) { [unowned self] data in
            let decoration = Decoration(data!.assumingMemoryBound(to: wlr_xdg_toplevel_decoration_v1.self), server: self)
            decorations.append(decoration)
        }
        roles.sessionActive = { [unowned self] in restrictionsActive }
        roles.launchedPrograms = { [unowned self] in launchedPrograms() }
        roles.refused = { [unowned self] socket, why in
            let name: String
            switch socket {
            case .app: name = "app"
            case .participant(let id): name = "participant-\(id)"
            }
            trace?.event("connection_refused", ["socket": .string(name), "why": .string(why)])
        }
        // Before any client connects: every blocked attempt is recorded.
        installAudit()
        input = Input(server: self)
        createTextInputRelay()
        virtualKeyboards = VirtualKeyboardHost(server: self, seat: input.seat)
        onScreenKeyboard = OnScreenKeyboardHost(server: self, above: appLayer, logger: logger)
        assessment = AssessmentService(server: self, logger: logger)
        participants = Participants(roles: roles, logger: logger)
        setUntrustedLayerVisible(!screenRules.hidesUntrustedLayer)
    }

    // MARK: - Running

    /// Starts the backend, opens the sockets, launches the app, and runs the
    /// event loop until the app exits or a signal asks Carrel to stop.
    /// Returns the process exit status Carrel should end with.
    public func run() throws -> Int32 {
        let runtimeDirectory = try Self.runtimeDirectory()
        self.runtimeDirectory = runtimeDirectory
        // Not earlier, though it would show sooner: wlroots may run this
        // event loop while it makes the backend (waiting for a GPU), and a
        // client accepted then would meet none of the roles and guards above.
        guard let socket = wl_display_add_socket_auto(display) else {
            throw CompositorError.socket("no free wayland-N name in \(runtimeDirectory)")
        }
        publicSocketName = String(cString: socket)
        let appUser = try options.appUser.map(AppUser.init(name:))
        if let appUser { roles.appSocketOwner = (appUser.uid, appUser.gid) }
        let helper = try connectPrivilegedHelper()
        let appSocket = try roles.openAppSocket(runtimeDirectory: runtimeDirectory)
        let providerHost = ProviderHost(policy: policy.providers, runtimeDirectory: runtimeDirectory,
                                        loop: wl_display_get_event_loop(display), logger: logger, helper: helper)
        providerHost.ownerProcess = { [unowned self] owner in roles.process { clientID($0) == owner } }
        providerHost.integrityLost = { [unowned self] message in
            audit.record(AuditEvent.providerFailed, session: restrictionsSession, reason: "verify", detail: message)
            drive { $0.integrityLost(message) }
        }
        providerHost.participantsWithNetwork = { [unowned self] set in
            ParticipantNetwork.allowed(set, policy: policy.participants)
        }
        participants.launch = { id, participant, body in
            try providerHost.launchParticipant(id, network: participant.network, body)
        }
        participants.stopped = { id in providerHost.participantStopped(id) }
        participants.killCgroup = { id in providerHost.killParticipantCgroup(id) }
        if let helper {
            // Answered later, from the loop: a begin never waits for the helper's spawn.
            participants.startThroughHelper = { [unowned self] id, participant, done in
                let cgroup = try providerHost.participantCgroup(id)
                spawnThroughHelperLater(helper, role: .participant, argv: participant.command, cgroup: cgroup,
                                        connection: try roles.connectParticipant(id), label: "participant \(id)", done: done)
            }
        }
        self.providerHost = providerHost
        // After the providers: through the helper, the engine starts in a cgroup of Carrel's.
        try startInputMethod(runtimeDirectory: runtimeDirectory)

        guard wlr_backend_start(backend) else {
            throw CompositorError.backend("the backend did not start (no seat, no outputs, or no access to them)")
        }
        installSignalHandlers()
        audit.record(AuditEvent.started, detail: auditStartDetail, sync: true)
        logger.notice("audit log \(audit.path) (run \(audit.run)); \(environment.virtualMachine.summary)")
        startMetrics()
        // The chain is checked on a thread (AuditLog): its outcome joins the metrics when known.
        audit.chainChecked = { [unowned self] in updateMetrics() }
        controlSocket = try openControlSocket()
        if OutputHotplugHook.isEnabled {
            hotplugHook = OutputHotplugHook(display: display, backend: backend)
            logger.warning("test hook on: SIGUSR1 plugs and SIGUSR2 unplugs a headless output")
        }

        // The readiness fd is Carrel's alone: the app must not inherit it.
        if let fd = options.readyFD { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        if !options.app.isEmpty {
            let launch = { [unowned self] in
                if let helper {
                    app = try launchThroughHelper(helper, cgroup: providerHost.appCgroup)
                    return
                }
                app = try providerHost.launch {
                    guard let appUser else { return try AppProcess.launch(options.app, appSocket: appSocket, logger: logger) }
                    // The socket's private directory, which the app user owns.
                    let directory = String(appSocket[..<(appSocket.lastIndex(of: "/") ?? appSocket.endIndex)])
                    return try AppProcess.launch(appUser.wrap(options.app), connection: .socketPath(appSocket),
                                                 environment: appUser.environment(runtimeDirectory: directory),
                                                 logger: logger, label: "app (as \(appUser.name))", ownProcessGroup: false)
                }
            }
            try launch()
            launchApp = launch
            drive { $0.appLaunched(now: AssessmentService.now()) }
        }
        logger.notice("listening on \(publicSocketName) (public) and \(appSocket) (app)")
        Readiness.announce(socketName: publicSocketName, readyFD: options.readyFD, logger: logger)

        wl_display_run(display)
        return exitStatus
    }

    /// With `--privileged-helper`: Carrel must not be root (the helper exists
    /// so that it is not), and connects; a helper not there yet is retried,
    /// and sessions fail to begin until it is. Without: a warning when root.
    private func connectPrivilegedHelper() throws -> PrivilegedHelperLink? {
        guard let path = options.privilegedHelper else {
            if geteuid() == 0 {
                logger.warning("Carrel runs as root: every Wayland client's requests are parsed with root's powers; on an exam machine run it as its own user with carrel-privileged (docs/DEPLOY.md)")
            }
            return nil
        }
        guard geteuid() != 0 else {
            throw CompositorError.configuration("--privileged-helper \(path): Carrel is running as root, which the helper exists to avoid; run Carrel as its own user (User=carrel in carrel-kiosk.service)")
        }
        let link = PrivilegedHelperLink(socketPath: path, loop: wl_display_get_event_loop(display), logger: logger)
        link.exited = { [unowned self] id, status in
            if let launched = app as? HelperLaunchedApp, launched.isProgram(id) { launched.exited(waitStatus: status) }
            participants.helperProgramExited(id, waitStatus: status)
            onScreenKeyboard.helperProgramExited(id, waitStatus: status)
            inputMethodHelperProgramExited(id, waitStatus: status)
            handleChildExit()
        }
        link.lost = { [unowned self] message in
            guard restrictionsSession != nil else { return }
            audit.record(AuditEvent.providerFailed, session: restrictionsSession, reason: "privileged_helper", detail: message)
            drive { $0.integrityLost(message) }
        }
        link.connect()
        privilegedHelper = link
        return link
    }

    /// Starts the app through the helper, as the helper's app user, in the
    /// session cgroup, on a connection Carrel already accepted as the app's
    /// (no path to Carrel's sockets is needed).
    private func launchThroughHelper(_ helper: PrivilegedHelperLink, cgroup: String?) throws -> LaunchedApp {
        guard let cgroup else {
            throw CompositorError.launch("the app has no session cgroup in Carrel's unit (\(providerHost?.cgroupProblem ?? "unknown reason")); the privileged helper starts programs only in one (Delegate=yes in carrel-kiosk.service)")
        }
        return try spawnThroughHelper(helper, role: .app, argv: options.app, cgroup: cgroup, connection: try roles.connect(.app), label: "app")
    }

    /// Launches the input method or the keyboard (without the helper) in a
    /// cgroup of its own where Carrel may make one (`ProviderHost.launchInOwnCgroup`).
    func launchInOwnCgroup<T>(_ role: PrivilegedRequest.SpawnRole, _ body: () throws -> T) throws -> T {
        guard let providerHost else { return try body() }
        return try providerHost.launchInOwnCgroup(SessionCgroup.roleName(role), body)
    }

    /// The input method or the keyboard ended and was reaped: whatever is
    /// left in its cgroup is killed, and the cgroup removed once empty.
    func releaseRoleCgroup(_ role: PrivilegedRequest.SpawnRole) {
        killRoleCgroup(role)
        providerHost?.removeWhenEmpty(SessionCgroup.roleName(role))
    }

    /// Kills everything left in the input method's or the keyboard's cgroup.
    func killRoleCgroup(_ role: PrivilegedRequest.SpawnRole) {
        if let problem = SessionCgroup.kill(relativePath: SessionCgroup.roleName(role)) {
            logger.error("could not kill what is left of the \(role.rawValue) in its cgroup (\(problem))")
        }
    }

    private func spawnThroughHelper(_ helper: PrivilegedHelperLink, role: PrivilegedRequest.SpawnRole, argv: [String],
                                    cgroup: String, connection socket: Int32, label: String,
                                    files: [String: String] = [:]) throws -> LaunchedApp {
        // Closing Carrel's copy: on failure that also ends the client made for it.
        defer { close(socket) }
        let id: UInt64?
        do {
            id = try helper.request(.spawn(role: role, argv: argv, environment: Self.spawnEnvironment(role),
                                           cgroup: cgroup, files: files),
                                    passing: socket)
        } catch {
            throw CompositorError.launch(error.message)
        }
        guard let id else { throw CompositorError.launch("the privileged helper started \(label) but gave no id") }
        logger.notice("launched \(label) \(argv[0]) through the privileged helper (helper program \(id))")
        return HelperLaunchedApp(id: id, link: helper, logger: logger)
    }

    private static func runtimeDirectory() throws -> String {
        guard let value = getenv("XDG_RUNTIME_DIR"), value.pointee != 0 else {
            throw CompositorError.socket("XDG_RUNTIME_DIR is not set; set it to a private directory (mode 0700) owned by this user")
        }
        return String(cString: value)
    }

    private func installSignalHandlers() {
        let loop = wl_display_get_event_loop(display)!
        for number in [SIGTERM, SIGINT] {
            if let signal = EventLoopSignal(loop: loop, signal: number, { [unowned self] number in
                logger.notice("received signal \(number); shutting down")
                stop(status: 0)
            }) {
                signals.append(signal)
            }
        }
        if let signal = EventLoopSignal(loop: loop, signal: SIGCHLD, { [unowned self] _ in handleChildExit() }) {
            signals.append(signal)
        }
    }

    /// The app ended: what that means (end its session, relaunch, stop) is Core's.
    func handleChildExit() {
        defer { reapStrays() }
        _ = reapInputMethod()
        onScreenKeyboard.reap()
        for (id, status) in participants.reap() {
            drive { $0.participantExited(id, description: status.description, now: AssessmentService.now()) }
        }
        guard let app, let status = app.reap() else { return }
        self.app = nil
        drive { $0.appExited(status: status.carrelExitStatus, description: status.description, now: AssessmentService.now()) }
    }

    /// The programs Carrel launched that are its own children now, by pid:
    /// the app, the participants, the input method (a retiring one too) and
    /// the on-screen keyboard. Who may connect through which private socket
    /// (`ProcessLineage`) and which children are strays follow from it.
    func launchedPrograms() -> [pid_t: LaunchedProgram] {
        var programs: [pid_t: LaunchedProgram] = [:]
        if let pid = app?.childPid { programs[pid] = .app }
        for (pid, id) in participants.childPids { programs[pid] = .participant(id) }
        for pid in [inputMethodProcess, retiringInputMethod].compactMap({ $0?.childPid }) { programs[pid] = .inputMethod }
        for pid in onScreenKeyboard.pids { programs[pid] = .onScreenKeyboard }
        return programs
    }

    /// Carrel's children that it never launched: orphans it took in as the
    /// subreaper, left by a program that double-forked. A command Carrel
    /// runs itself is either reaped before the loop runs again
    /// (`BoundedCommand`) or known while it runs (`LoopCommand`), so none of
    /// those is ever taken for a stray.
    private func strays() -> [pid_t] {
        ProcessLineage.strays(children: ProcessTable.children(of: getpid()).map(\.pid),
                              launched: Set(launchedPrograms().keys).union(LoopCommand.running))
    }

    /// Collects strays that have ended (Carrel is their parent now).
    private func reapStrays() {
        for pid in strays() {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                logger.info("reaped pid \(pid), an orphan of a program Carrel launched")
            }
        }
    }

    /// Ends every stray and what it started: nothing a participant, the
    /// input method, the keyboard or the app left behind outlives a session
    /// (run when the session's restrictions come down, before `ended`) or Carrel.
    func endStrays() {
        let found = strays()
        guard !found.isEmpty else { return }
        var killed = 0
        for pid in found { killed += ProcessTable.killTree(pid) }
        if killed > 0 {
            trace?.event("strays_ended", ["processes": .integer(Int64(killed))])
            logger.notice("ended \(killed) process(es) that left the programs Carrel launched (orphans Carrel took in: \(found.map(String.init).joined(separator: ", ")))")
        }
        reapStrays()
    }

    /// Single App Mode: launch the app again after `delay`.
    func relaunchApp(after delay: Duration) {
        if relaunchTimer == nil {
            relaunchTimer = EventLoopTimer(loop: wl_display_get_event_loop(display)) { [unowned self] in relaunchNow() }
        }
        guard let relaunchTimer else {
            logger.error("kiosk: could not create a timer; giving up")
            stop(status: 1)
            return
        }
        relaunchTimer.arm(after: delay)
    }

    private func relaunchNow() {
        guard let launchApp else { return }
        do {
            try launchApp()
            drive { $0.appLaunched(now: AssessmentService.now()) }
        } catch {
            drive { $0.appLaunchFailed("\(error)", now: AssessmentService.now()) }
        }
    }

    /// Ends the event loop; `run()` then returns `status`. Sessions hear of the
    /// shutdown at once (a pending one fails with `cancelled`), so a frame
    /// presented before the loop returns cannot begin a session on the way out.
    func stop(status: Int32) {
        exitStatus = status
        assessment.shutdown()
        wl_display_terminate(display)
    }

    /// Tears everything down in the order wlroots requires: clients first (so
    /// their surfaces go before the outputs and scene), then the backend.
    public func shutdown() {
        relaunchTimer?.cancel()
        relaunchTimer = nil
        for stop in appStops { stop.cancel() }
        appStops.removeAll()
        if let app {
            app.terminate(grace: 2.0)
            self.app = nil
        }
        participants.stop()
        onScreenKeyboard.stop()
        endStrays()
        controlSocket?.close()
        controlSocket = nil
        stopInputMethod()
        assessment.shutdown()
        providerHost?.shutdown()
        privilegedHelper?.close()
        for signal in signals { signal.cancel() }
        signals.removeAll()
        hotplugHook?.remove()
        hotplugHook = nil
        roles.close()
        wl_display_destroy_clients(display)
        // The input method's virtual keyboards went with their client.
        WlrootsVersion.freeRetiredKeyboards()
        // After the clients: their sessions' last records and pending counts
        // come before `stopped`.
        audit?.close(detail: "carrel pid \(getpid()) stopping with status \(exitStatus)")
        updateMetrics()
        metricsFile?.close()
        metricsFile = nil
        if let auditWatch { wl_protocol_logger_destroy(auditWatch) }
        auditWatch = nil
        for decoration in decorations { decoration.detach() }
        decorations.removeAll()
        textInput?.destroy()
        virtualKeyboards.destroy()
        onScreenKeyboard.destroy()
        input.destroy()
        listeners.disconnectAll()
        wlr_backend_destroy(backend)
        wlr_scene_node_destroy(WlrootsVersion.rootNode(scene))
        wlr_allocator_destroy(allocator)
        wlr_renderer_destroy(renderer)
        wlr_output_layout_destroy(outputLayout)
        for logger in protocolGuards { wl_protocol_logger_destroy(logger) }
        protocolGuards.removeAll()
        wl_display_destroy(display)
    }

    func decorationDestroyed(_ decoration: Decoration) {
        decorations.removeAll { $0 === decoration }
    }

    // MARK: - Outputs

    private func handleNewOutput(_ wlrOutput: UnsafeMutablePointer<wlr_output>) {
        wlr_output_init_render(wlrOutput, allocator, renderer)
        // Whether wlroots lit the output with a black buffer of its own
        // (it does where a mode cannot be set without one).
        var litWithBuffer = false
        var enabling = ListenerBag()
        enabling.on(&wlrOutput.pointee.events.commit) { data in
            if WlrootsVersion.commitCarriesBuffer(data!) { litWithBuffer = true }
        }
        let enabled = WlrootsVersion.enableOutput(wlrOutput, width: Int32(options.windowSize.width),
                                                  height: Int32(options.windowSize.height))
        enabling.disconnectAll()
        guard enabled else {
            logger.error("output \(String(cString: wlrOutput.pointee.name)) could not be enabled")
            return
        }
        // No screen to show anything on: as good as black.
        let output = Output(wlrOutput, server: self, screenBlack: litWithBuffer || wlr_output_is_headless(wlrOutput))
        outputs.append(output)
        WlrootsVersion.addOutput(wlrOutput, to: outputLayout, scene: scene, sceneLayout: sceneLayout)
        logger.info("output \(output.name) \(wlrOutput.pointee.width)x\(wlrOutput.pointee.height)")
        // The curtain goes up before the output's first frame.
        updateCurtains()
        replaceAll()
        onScreenKeyboard?.outputsChanged()
        outputAddedDuringSession(output)
    }

    func outputDestroyed(_ output: Output) {
        outputs.removeAll { $0 === output }
        assessment.outputRemoved(output)
        updateCurtains()
        replaceAll()
        onScreenKeyboard?.outputsChanged()
    }

    /// The primary output's box in layout coordinates: the first output still
    /// present. Nil when there is none (everything waits for one).
    var primaryOutputBox: Rect? {
        guard let output = outputs.first else { return nil }
        guard let box = WlrootsVersion.layoutBox(outputLayout, output.wlrOutput) else { return nil }
        return Rect(x: Int(box.x), y: Int(box.y), width: Int(box.width), height: Int(box.height))
    }

}

// MARK: - Assessment hooks

extension Server {
    var enabledOutputs: [Output] { outputs.filter { $0.wlrOutput.pointee.enabled } }

    func role(of client: OpaquePointer) -> Role { roles.role(of: client) }

    /// The client's executable as read when it connected (app-lock allowlist).
    func executable(of client: OpaquePointer) -> String? { roles.executable(of: client) }

    var restrictionsActive: Bool { restrictions != nil }

    /// Gives the Desk an input and returns its decision without carrying it
    /// out (see `drive`): the only way anything changes the Desk.
    func decide<T>(_ input: (inout Desk) -> T) -> T {
        input(&desk)
    }

    /// The restrictions the compositor holds (Core's record of them).
    var restrictions: RestrictionSet? { desk.restrictions }

    /// The policy in force: the one Carrel started with, or the last reload.
    var policy: Policy { desk.policy }

    static func resolve(_ combination: KeyCombination, for key: String) throws -> EmergencyBinding {
        let keysym = xkb_keysym_from_name(combination.keyName, XKB_KEYSYM_CASE_INSENSITIVE)
        guard keysym != 0 else {
            throw CompositorError.configuration("\(key): \"\(combination.keyName)\" is not a key name xkbcommon knows; use a keysym name such as Escape, F12 or q")
        }
        return EmergencyBinding(modifiers: combination.modifiers, keysym: xkb_keysym_to_lower(keysym))
    }

    /// The policy's `[magnifier]` keys, resolved like the emergency binding.
    static func resolve(_ magnifier: MagnifierPolicy) throws -> MagnifierKeys {
        var keys = MagnifierKeys()
        for (action, key, combination) in magnifier.combinations {
            keys.bindings[action] = try resolve(combination, for: "magnifier.\(key)")
        }
        return keys
    }

    /// A client's identity for Core. The wl_client address is unique while the
    /// client is connected, and Core forgets a client's sessions when it goes.
    func clientID(_ client: OpaquePointer) -> ClientID {
        ClientID(UInt64(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(client)))))
    }

    /// Whether `surface` is a mapped toplevel of `client`, for `begin`.
    func readiness(of surface: UnsafeMutablePointer<wlr_surface>, client: OpaquePointer) -> SurfaceReadiness {
        guard let xdgSurface = WlrootsVersion.xdgSurface(of: surface),
              xdgSurface.pointee.role == WLR_XDG_SURFACE_ROLE_TOPLEVEL, let view = view(for: xdgSurface) else {
            return .notToplevel
        }
        return view.isMapped ? .mappedToplevel : .unmappedToplevel
    }

    /// Shows Carrel's own prompt or banner on the primary output; false if
    /// there is no output or it could not be drawn.
    func showOverlay(_ kind: Overlay.Kind, text: String) -> Bool {
        guard let output = primaryOutputBox else { return false }
        return overlay.show(kind, text: text, output: output)
    }

    func hideOverlay(_ kind: Overlay.Kind) {
        overlay.hide(kind)
    }

    func outputPresented(_ output: Output) {
        assessment.outputPresented(output)
    }
}
