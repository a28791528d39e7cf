import CarrelAudit
import CarrelCore
import CarrelShim
import Glibc
import Logging

/// What the composition root hands the compositor.
public struct CompositorOptions {
    /// The exam app and its arguments; empty runs the compositor alone.
    public var app: [String]
    /// Written with the public socket name once clients can connect.
    public var readyFD: Int32?
    /// Which globals each role sees.
    public var access: GlobalAccess
    public var logLevel: Logger.Level
    /// Size of outputs that have no modes of their own (a window on X11 or
    /// Wayland, headless outputs).
    public var windowSize: Size
    /// The administrator's policy, validated (`--policy`).
    public var policy: Policy
    /// Who may lock, time limits, participants, the bounded wait for `began`:
    /// the policy's `session`.
    public var sessionPolicy: SessionPolicy {
        get { policy.session }
        set { policy.session = newValue }
    }
    /// Single App Mode: relaunch the app when it exits, never showing
    /// anything else in between (`--kiosk` or the policy's `[kiosk]`).
    public var kiosk: KioskPolicy {
        get { policy.kiosk }
        set { policy.kiosk = newValue }
    }
    /// `--assessment`: begin a session on the app's behalf when its first
    /// window maps, with this configuration; nil: off.
    public var assessmentMode: AssessmentConfiguration?
    /// Where the admin control socket lives and who may use it: the
    /// policy's `[control]`, or `--control-socket`.
    public var control: ControlPolicy {
        get { policy.control }
        set { policy.control = newValue }
    }
    /// Where the policy came from and how to read it again (`carrelctl
    /// reload`); nil: reload is refused.
    public var policySource: PolicySource?
    /// The policy file Carrel runs under (nil: the built-in policy), whose
    /// ownership is a precondition of every session.
    public var policyPath: String?
    /// Whether Carrel must stop when the control socket cannot be opened
    /// (a path given on the command line); otherwise it logs and runs without.
    public var requireControlSocket: Bool
    /// App-requested lock (ASAM): allowlist, confirmation, banner: the
    /// policy's `[app_lock]` with the command line's overrides.
    public var appLock: AppLockPolicy {
        get { policy.appLock }
        set { policy.appLock = newValue }
    }
    /// Restriction providers beyond the display (network, media): the
    /// policy's `[providers]` with the command line's additions.
    public var providers: ProvidersPolicy {
        get { policy.providers }
        set { policy.providers = newValue }
    }

    public init(app: [String], readyFD: Int32?, access: GlobalAccess = .standard, logLevel: Logger.Level = .info,
                windowSize: Size = Size(width: 1280, height: 720), policy: Policy = .builtIn, requireControlSocket: Bool = false) {
        self.app = app
        self.readyFD = readyFD
        self.access = access
        self.logLevel = logLevel
        self.windowSize = windowSize
        self.policy = policy
        self.requireControlSocket = requireControlSocket
    }
}

/// The policy file Carrel started with, and a way to read and validate it
/// again (with the command line's overrides) for `carrelctl reload`.
public struct PolicySource: Sendable {
    /// The file, as the log and `carrelctl reload` name it.
    public var path: String
    /// The whole policy again, or every problem in one message.
    public var load: @Sendable () -> Result<Policy, ReloadFailure>

    public init(path: String, load: @escaping @Sendable () -> Result<Policy, ReloadFailure>) {
        self.path = path
        self.load = load
    }
}

/// Why a reload found no usable policy: the running one stays.
public struct ReloadFailure: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// The compositor: owns the Wayland display, the wlroots objects and every
/// Swift handle that holds a wlroots pointer.
///
/// Threading: everything here runs on the one thread that calls `run()`,
/// inside libwayland's event loop; signals (SIGCHLD, SIGTERM, SIGINT) arrive
/// as loop events through signalfd, so no other thread touches this state.
public final class Server {
    let display: OpaquePointer
    let backend: UnsafeMutablePointer<wlr_backend>
    let renderer: UnsafeMutablePointer<wlr_renderer>
    let allocator: UnsafeMutablePointer<wlr_allocator>
    let scene: UnsafeMutablePointer<wlr_scene>
    let outputLayout: UnsafeMutablePointer<wlr_output_layout>
    let xdgShell: UnsafeMutablePointer<wlr_xdg_shell>
    private(set) var input: Input!
    private(set) var assessment: AssessmentService!
    /// wlroots' screencopy, when the policy enables capture outside sessions.
    private(set) var screencopy: UnsafeMutablePointer<wlr_screencopy_manager_v1>?
    private var controlSocket: ControlSocket?
    /// Every decision that combines sessions, modes, keys and windows.
    private(set) var desk: Desk
    /// The session whose restrictions the providers and the scene hold,
    /// so a revert undoes exactly what was applied.
    private var restrictionsHeldFor: SessionID?
    /// The audit log; opened first in init, before any wlroots object.
    var audit: AuditLog!
    /// What the preconditions are checked against.
    var environment: EnvironmentProbe!
    var auditWatch: OpaquePointer?
    /// The client of the last selection or drag request, so that a refusal
    /// (reported by wlroots without its client) can name it.
    var selectionRequester: OpaquePointer?
    let logger: Logger
    let options: CompositorOptions
    let roles: ClientRoles
    /// Scene layers, bottom to top: untrusted clients' windows under the app's.
    private let untrustedLayer: UnsafeMutablePointer<wlr_scene_tree>
    private let appLayer: UnsafeMutablePointer<wlr_scene_tree>
    /// Above everything: plain colour over outputs other than the primary
    /// while a session holds restrictions.
    let curtainLayer: UnsafeMutablePointer<wlr_scene_tree>
    /// Above the curtains: what Carrel draws itself (confirmation, banner).
    private let overlayLayer: UnsafeMutablePointer<wlr_scene_tree>
    private(set) var overlay: Overlay!

    private var listeners = ListenerBag()
    private var outputs: [Output] = []
    /// Toplevels in stacking order, bottom to top.
    private(set) var stack: [View] = []
    private var views: [UnsafeMutablePointer<wlr_xdg_surface>: View] = [:]
    private var decorations: [Decoration] = []
    private var nextWindowID: UInt64 = 1
    private var signals: [EventLoopSignal] = []
    /// Protocol loggers that refuse requests wlroots 0.15 would crash on.
    private var protocolGuards: [OpaquePointer] = []
    private var hotplugHook: OutputHotplugHook?
    private var app: AppProcess?
    /// Single App Mode's relaunch timer, armed when Core says so.
    private var relaunchTimer: EventLoopTimer?
    /// Launches the app again (set once the app socket is open).
    private var launchApp: (() throws -> Void)?
    /// Restriction providers (network, media): recovery, cgroup, verify timer.
    private var providerHost: ProviderHost?
    private var exitStatus: Int32 = 0
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
        } catch {
            wl_display_destroy(display)
            throw error
        }
        guard let backend = wlr_backend_autocreate(display) else {
            throw CompositorError.backend("wlroots found no usable backend; for a headless run set WLR_BACKENDS=headless WLR_RENDERER=pixman, for a window run under X11 or Wayland")
        }
        self.backend = backend
        // Single App Mode starts in its gap: nothing but the app until the
        // app's first window maps (Core decides, from the policy).
        desk = Desk(Desk.Setup(
            policy: options.policy, appName: options.app.first, assessment: options.assessmentMode,
            emergency: try options.policy.emergencyBinding.map { try Self.resolve($0, for: "emergency.binding") },
            unlockKeys: try options.policy.guidedAccess.unlockKeys.map { try Self.resolve($0, for: "guided_access.unlock_keys") },
            hasVirtualTerminals: wlr_backend_get_session(backend) != nil))
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

        // wl_compositor; wlroots 0.15 creates wl_subcompositor with it.
        wlr_compositor_create(display, renderer)
        wlr_data_device_manager_create(display)
        wlr_primary_selection_v1_device_manager_create(display)

        outputLayout = wlr_output_layout_create()
        wlr_xdg_output_manager_v1_create(display, outputLayout)
        scene = wlr_scene_create()
        // Also creates and positions a scene output for every layout output.
        wlr_scene_attach_output_layout(scene, outputLayout)
        untrustedLayer = wlr_scene_tree_create(&scene.pointee.node)
        appLayer = wlr_scene_tree_create(&scene.pointee.node)
        curtainLayer = wlr_scene_tree_create(&scene.pointee.node)
        overlayLayer = wlr_scene_tree_create(&scene.pointee.node)
        overlay = Overlay(layer: overlayLayer)

        let presentation = wlr_presentation_create(display, backend)
        wlr_scene_set_presentation(scene, presentation)
        wlr_viewporter_create(display)
        wlr_idle_inhibit_v1_create(display)

        xdgShell = wlr_xdg_shell_create(display)
        // Before any client connects: wlroots 0.15 must never see a popup
        // that is its own ancestor, nor restack an orphaned subsurface, nor
        // act on an inert xdg_toplevel (see the shim).
        protocolGuards = [WlrootsVersion.guardPopupParents(display),
                          WlrootsVersion.guardOrphanedSubsurfaces(display),
                          WlrootsVersion.guardInertXdgObjects(display)].compactMap { $0 }
        // Before any client connects: no client may hold wl_shm pools without end.
        ShmPoolGuard.install(on: display, limit: .standard, logger: logger)
        let decorationManager = wlr_xdg_decoration_manager_v1_create(display)!

        // The assessment global goes exactly to the roles the policy entitles.
        let access = options.access.applying(options.policy)
        roles = ClientRoles(display: display, access: access, appLock: options.appLock, logger: logger)
        // Capture exists only when the policy enables it outside sessions;
        // while a session holds restrictions the global is hidden and every
        // pending frame fails (at begin, and before each output commit).
        if options.policy.capture.enabledOutsideSessions {
            screencopy = wlr_screencopy_manager_v1_create(display)
        }

        listeners.on(&backend.pointee.events.new_output) { [unowned self] data in
            handleNewOutput(data!.assumingMemoryBound(to: wlr_output.self))
        }
        listeners.on(&xdgShell.pointee.events.new_surface) { [unowned self] data in
            handleNewXdgSurface(data!.assumingMemoryBound(to: wlr_xdg_surface.self))
        }
        listeners.on(&decorationManager.pointee.events.new_toplevel_decoration) { [unowned self] data in
            let decoration = Decoration(data!.assumingMemoryBound(to: wlr_xdg_toplevel_decoration_v1.self), server: self)
            decorations.append(decoration)
        }
        roles.sessionActive = { [unowned self] in restrictionsActive }
        // Before any client connects: every blocked attempt is recorded.
        installAudit()
        input = Input(server: self)
        assessment = AssessmentService(server: self, logger: logger)
        setUntrustedLayerVisible(!screenRules.hidesUntrustedLayer)
    }

    // MARK: - Running

    /// Starts the backend, opens the sockets, launches the app, and runs the
    /// event loop until the app exits or a signal asks Carrel to stop.
    /// Returns the process exit status Carrel should end with.
    public func run() throws -> Int32 {
        let runtimeDirectory = try Self.runtimeDirectory()
        guard let socket = wl_display_add_socket_auto(display) else {
            throw CompositorError.socket("no free wayland-N name in \(runtimeDirectory)")
        }
        publicSocketName = String(cString: socket)
        let appSocket = try roles.openAppSocket(runtimeDirectory: runtimeDirectory)
        let providerHost = ProviderHost(policy: policy.providers, runtimeDirectory: runtimeDirectory,
                                        loop: wl_display_get_event_loop(display), logger: logger)
        providerHost.integrityLost = { [unowned self] message in
            audit.record(AuditEvent.providerFailed, session: restrictionsSession, reason: "verify", detail: message)
            drive { $0.integrityLost(message) }
        }
        self.providerHost = providerHost

        guard wlr_backend_start(backend) else {
            throw CompositorError.backend("the backend did not start (no seat, no outputs, or no access to them)")
        }
        installSignalHandlers()
        audit.record(AuditEvent.started, detail: auditStartDetail, sync: true)
        logger.notice("audit log \(audit.path) (run \(audit.run)); \(environment.virtualMachine.summary)")
        controlSocket = try openControlSocket()
        if OutputHotplugHook.isEnabled {
            hotplugHook = OutputHotplugHook(display: display, backend: backend)
            logger.warning("test hook on: SIGUSR1 plugs and SIGUSR2 unplugs a headless output")
        }

        // The readiness fd is Carrel's alone: the app must not inherit it.
        if let fd = options.readyFD { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        if !options.app.isEmpty {
            let launch = { [unowned self] in
                app = try providerHost.launch { try AppProcess.launch(options.app, appSocket: appSocket, logger: logger) }
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
    private func handleChildExit() {
        guard let app, let status = app.reap() else { return }
        self.app = nil
        drive { $0.appExited(status: status.carrelExitStatus, description: status.description, now: AssessmentService.now()) }
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
        if let app {
            app.terminate(grace: 2.0)
            self.app = nil
        }
        controlSocket?.close()
        controlSocket = nil
        assessment.shutdown()
        providerHost?.shutdown()
        for signal in signals { signal.cancel() }
        signals.removeAll()
        hotplugHook?.remove()
        hotplugHook = nil
        roles.close()
        wl_display_destroy_clients(display)
        // After the clients: their sessions' last records and pending counts
        // come before `stopped`.
        audit?.close(detail: "carrel pid \(getpid()) stopping with status \(exitStatus)")
        if let auditWatch { wl_protocol_logger_destroy(auditWatch) }
        auditWatch = nil
        for decoration in decorations { decoration.detach() }
        decorations.removeAll()
        input.destroy()
        listeners.disconnectAll()
        wlr_backend_destroy(backend)
        wlr_scene_node_destroy(&scene.pointee.node)
        wlr_allocator_destroy(allocator)
        wlr_renderer_destroy(renderer)
        wlr_output_layout_destroy(outputLayout)
        for logger in protocolGuards { wl_protocol_logger_destroy(logger) }
        protocolGuards.removeAll()
        wl_display_destroy(display)
    }

    // MARK: - Outputs

    private func handleNewOutput(_ wlrOutput: UnsafeMutablePointer<wlr_output>) {
        wlr_output_init_render(wlrOutput, allocator, renderer)
        if let mode = wlr_output_preferred_mode(wlrOutput) {
            wlr_output_set_mode(wlrOutput, mode)
        } else {
            wlr_output_set_custom_mode(wlrOutput, Int32(options.windowSize.width), Int32(options.windowSize.height), 0)
        }
        wlr_output_enable(wlrOutput, true)
        guard wlr_output_commit(wlrOutput) else {
            logger.error("output \(String(cString: wlrOutput.pointee.name)) could not be enabled")
            return
        }
        let output = Output(wlrOutput, server: self)
        outputs.append(output)
        wlr_output_layout_add_auto(outputLayout, wlrOutput)
        logger.info("output \(output.name) \(wlrOutput.pointee.width)x\(wlrOutput.pointee.height)")
        // The curtain goes up before the output's first frame.
        updateCurtains()
        replaceAll()
        outputAddedDuringSession(output)
    }

    func outputDestroyed(_ output: Output) {
        outputs.removeAll { $0 === output }
        assessment.outputRemoved(output)
        updateCurtains()
        replaceAll()
    }

    /// The primary output's box in layout coordinates: the first output still
    /// present. Nil when there is none (everything waits for one).
    var primaryOutputBox: Rect? {
        guard let output = outputs.first else { return nil }
        guard let box = WlrootsVersion.layoutBox(outputLayout, output.wlrOutput) else { return nil }
        return Rect(x: Int(box.x), y: Int(box.y), width: Int(box.width), height: Int(box.height))
    }

    // MARK: - Windows

    private func handleNewXdgSurface(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) {
        switch xdgSurface.pointee.role {
        case WLR_XDG_SURFACE_ROLE_POPUP:
            addPopup(xdgSurface)
        case WLR_XDG_SURFACE_ROLE_TOPLEVEL:
            let client = wl_resource_get_client(xdgSurface.pointee.resource)!
            let role = roles.role(of: client)
            let owner = WindowOwner(client: clientID(client), role: role)
            let layer = role == .untrusted ? untrustedLayer : appLayer
            let view = View(id: WindowID(nextWindowID), owner: owner, xdgSurface: xdgSurface,
                            parentNode: &layer.pointee.node, server: self)
            nextWindowID += 1
            views[xdgSurface] = view
            // Decided before the client can commit a buffer: a window the
            // session hides is never enabled in the scene, not even for a frame.
            drive { $0.toplevelCreated(view.id, owner: owner) }
            logger.debug("new toplevel \(view.id) of role \(role)")
        default:
            break
        }
    }

    /// Popups hang in their parent's scene subtree and are kept on the output.
    private func addPopup(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) {
        guard let parentSurface = xdgSurface.pointee.popup.pointee.parent,
              wlr_surface_is_xdg_surface(parentSurface),
              let parent = wlr_xdg_surface_from_wlr_surface(parentSurface),
              let parentNode = parent.pointee.data?.assumingMemoryBound(to: wlr_scene_node.self) else {
            return
        }
        let node = wlr_scene_xdg_surface_create(parentNode, xdgSurface)
        xdgSurface.pointee.data = UnsafeMutableRawPointer(node)
        // The unconstrain box is in the toplevel's coordinate space.
        var toplevel = parent
        while toplevel.pointee.role == WLR_XDG_SURFACE_ROLE_POPUP,
              let next = toplevel.pointee.popup.pointee.parent.flatMap({ wlr_xdg_surface_from_wlr_surface($0) }) {
            toplevel = next
        }
        guard let view = views[toplevel], let output = primaryOutputBox else { return }
        var lx: Int32 = 0, ly: Int32 = 0
        wlr_scene_node_coords(view.sceneNode, &lx, &ly)
        var box = wlr_box(x: Int32(output.x) - lx, y: Int32(output.y) - ly,
                          width: Int32(output.width), height: Int32(output.height))
        wlr_xdg_popup_unconstrain_from_box(xdgSurface.pointee.popup, &box)
    }

    func view(for xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> View? {
        views[xdgSurface]
    }

    /// Sends the kiosk size with the first configure. Dialogs choose their size.
    func placeBeforeMap(_ view: View) {
        guard view.parentView == nil, let output = primaryOutputBox else { return }
        let placement = Placement.toplevel(output: output, parent: nil, requested: Size(width: 0, height: 0))
        wlr_xdg_toplevel_set_fullscreen(view.xdgSurface, true)
        wlr_xdg_toplevel_set_size(view.xdgSurface, UInt32(placement.rect.width), UInt32(placement.rect.height))
        wlr_scene_node_set_position(view.sceneNode, Int32(placement.rect.x), Int32(placement.rect.y))
    }

    /// Re-applies placement after the outputs changed.
    private func replaceAll() {
        for view in stack where view.isMapped { place(view) }
        for view in views.values where !view.isMapped && view.isPlaced { placeBeforeMap(view) }
    }

    private func place(_ view: View) {
        guard let output = primaryOutputBox else { return }
        var geometry = wlr_box()
        wlr_xdg_surface_get_geometry(view.xdgSurface, &geometry)
        let parentRect = view.parentView.map { parent -> Rect in
            var lx: Int32 = 0, ly: Int32 = 0
            wlr_scene_node_coords(parent.sceneNode, &lx, &ly)
            var g = wlr_box()
            wlr_xdg_surface_get_geometry(parent.xdgSurface, &g)
            return Rect(x: Int(lx), y: Int(ly), width: Int(g.width), height: Int(g.height))
        }
        let placement = Placement.toplevel(output: output, parent: parentRect,
                                           requested: Size(width: Int(geometry.width), height: Int(geometry.height)))
        switch placement {
        case .fullscreen(let rect):
            wlr_xdg_toplevel_set_fullscreen(view.xdgSurface, true)
            wlr_xdg_toplevel_set_size(view.xdgSurface, UInt32(rect.width), UInt32(rect.height))
            wlr_scene_node_set_position(view.sceneNode, Int32(rect.x), Int32(rect.y))
        case .floating(let rect):
            wlr_scene_node_set_position(view.sceneNode, Int32(rect.x), Int32(rect.y))
        }
    }

    /// Disabled scene nodes are skipped by rendering and by hit tests: no
    /// frame shows them and no pointer reaches them.
    func setUntrustedLayerVisible(_ visible: Bool) {
        wlr_scene_node_set_enabled(&untrustedLayer.pointee.node, visible)
    }

    var untrustedLayerEnabled: Bool { WlrootsVersion.isEffectivelyEnabled(&untrustedLayer.pointee.node) }

    func viewMapped(_ view: View) {
        place(view)
        stack.removeAll { $0 === view }
        stack.append(view)
        view.raiseToTop()
        logger.debug("mapped toplevel \(view.id) of role \(view.role)")
        drive { $0.toplevelMapped(view.id, now: AssessmentService.now()) }
    }

    func viewUnmapped(_ view: View) {
        drive { $0.toplevelUnmapped(view.id) }
    }

    func viewDestroyed(_ view: View) {
        views[view.xdgSurface] = nil
        stack.removeAll { $0 === view }
        drive { $0.toplevelDestroyed(view.id) }
    }

    /// The session's restrictions and the kiosk gap, as Core holds them.
    var screenRules: ScreenRules { desk.screenRules }

    /// Makes the scene and curtains match `rules`: windows they hide leave
    /// the scene (disabled, not covered) before any frame could show them.
    func applyScreenRules(_ rules: ScreenRules) {
        setUntrustedLayerVisible(!rules.hidesUntrustedLayer)
        for view in views.values {
            view.setShown(rules.shows(view.owner))
        }
        updateCurtains()
        failCaptureFrames(on: nil)
        // Pointer focus may sit on a window that just left the scene.
        input?.pointerFocusChanged()
    }

    /// Shows or hides one window, as Core decided when it was created.
    func setWindowShown(_ id: WindowID, _ shown: Bool) {
        views.values.first { $0.id == id }?.setShown(shown)
    }

    /// Keyboard focus on `target` (Core's choice), activated; none when nil.
    func focus(_ target: WindowID?) {
        guard let input else { return }
        let targetView = stack.first { $0.id == target && $0.isMapped }
        for view in stack where view.isMapped {
            wlr_xdg_toplevel_set_activated(view.xdgSurface, view === targetView)
        }
        input.focusKeyboard(on: targetView?.surface)
    }

    /// The surface under a layout point, with surface-local coordinates.
    func surface(atLayoutX lx: Double, y ly: Double) -> (surface: UnsafeMutablePointer<wlr_surface>, sx: Double, sy: Double)? {
        var sx = 0.0, sy = 0.0
        guard let node = wlr_scene_node_at(&scene.pointee.node, lx, ly, &sx, &sy),
              node.pointee.type == WLR_SCENE_NODE_SURFACE,
              let sceneSurface = wlr_scene_surface_from_node(node) else { return nil }
        return (sceneSurface.pointee.surface, sx, sy)
    }
}

/// Asks every client for no client-side decorations: a kiosk draws none.
final class Decoration {
    private let decoration: UnsafeMutablePointer<wlr_xdg_toplevel_decoration_v1>
    private var listeners = ListenerBag()
    private unowned let server: Server

    init(_ decoration: UnsafeMutablePointer<wlr_xdg_toplevel_decoration_v1>, server: Server) {
        self.decoration = decoration
        self.server = server
        listeners.on(&decoration.pointee.events.request_mode) { [unowned self] _ in applyMode() }
        listeners.on(&decoration.pointee.events.destroy) { [unowned self] _ in
            detach()
            server.decorationDestroyed(self)
        }
        applyMode()
    }

    private func applyMode() {
        wlr_xdg_toplevel_decoration_v1_set_mode(decoration, WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE)
    }

    func detach() { listeners.disconnectAll() }
}

extension Server {
    func decorationDestroyed(_ decoration: Decoration) {
        decorations.removeAll { $0 === decoration }
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

    /// A client's identity for Core. The wl_client address is unique while the
    /// client is connected, and Core forgets a client's sessions when it goes.
    func clientID(_ client: OpaquePointer) -> ClientID {
        ClientID(UInt64(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(client)))))
    }

    /// Whether `surface` is a mapped toplevel of `client`, for `begin`.
    func readiness(of surface: UnsafeMutablePointer<wlr_surface>, client: OpaquePointer) -> SurfaceReadiness {
        guard wlr_surface_is_xdg_surface(surface), let xdgSurface = wlr_xdg_surface_from_wlr_surface(surface),
              xdgSurface.pointee.role == WLR_XDG_SURFACE_ROLE_TOPLEVEL, let view = view(for: xdgSurface) else {
            return .notToplevel
        }
        return view.isMapped ? .mappedToplevel : .unmappedToplevel
    }

    /// Puts up what the providers enforce for `set`; the scene follows when
    /// Core hears the outcome (other clients' windows leave the scene, focus
    /// stays on the session's windows). All or nothing.
    func applyRestrictions(_ set: RestrictionSet) -> RestrictionOutcome {
        // A new session: the machine must meet the preconditions first.
        if restrictionsHeldFor != set.session, let unmet = unmetPreconditions(for: set.session) {
            return .unsupported(unmet)
        }
        // Providers first: if one fails, nothing here has changed.
        if case .failed(let message)? = providerHost?.apply(set) {
            audit.record(AuditEvent.providerFailed, session: set.session, reason: "apply", detail: message)
            return .failed(message)
        }
        restrictionsHeldFor = set.session
        logger.info("restrictions up for \(set.session)")
        audit.record("restrictions_applied", session: set.session, detail: set.description)
        return .applied
    }

    /// Takes down what the providers hold for `id`; Core has already
    /// decided what the scene shows without it.
    func revertRestrictions(for id: SessionID) {
        guard restrictionsHeldFor == id else { return }
        providerHost?.revert()
        restrictionsHeldFor = nil
        logger.info("restrictions reverted for \(id)")
        audit.record("restrictions_reverted", session: id)
    }

    /// While a session holds restrictions no capture frame completes: the
    /// pending ones of `output` (nil: all) fail before anything is copied.
    func failCaptureFrames(on output: UnsafeMutablePointer<wlr_output>?) {
        guard restrictions != nil, let screencopy else { return }
        let failed = WlrootsVersion.failCaptureFrames(screencopy, output: output) { client in
            blocked(AuditKind.capture, client: client, "a screen capture frame asked for while a session holds restrictions; failed, nothing copied")
        }
        if failed > 0 { logger.notice("failed \(failed) capture frame(s): a session holds restrictions") }
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

    /// Empties the clipboard and the primary selection.
    func clearSelections() {
        wlr_seat_set_selection(input.seat, nil, wl_display_next_serial(display))
        wlr_seat_set_primary_selection(input.seat, nil, wl_display_next_serial(display))
    }

    func outputPresented(_ output: Output) {
        assessment.outputPresented(output)
    }

    /// Windows the session must hide but the scene would draw; checked for
    /// every rendered frame in debug builds.
    func sceneViolations() -> [WindowID] {
        let entries = views.values.map { view in
            SceneAudit.Entry(window: view.id, owner: view.owner,
                             isEnabled: WlrootsVersion.isEffectivelyEnabled(view.sceneNode))
        }
        return SceneAudit.violations(entries, under: screenRules)
    }

    /// A display was connected: during a session that is a change nobody
    /// vetted, so the session hears `interrupted(integrity)`.
    func outputAddedDuringSession(_ output: Output) {
        guard restrictions != nil else { return }
        drive { $0.integrityLost("output \(output.name) was connected during the session") }
    }

    /// Outputs other than the primary show a plain colour during a session;
    /// every output does in Single App Mode's gap.
    func updateCurtains() {
        let rules = screenRules
        for (index, output) in outputs.enumerated() {
            output.setCurtain(up: rules.curtainUp(outputIndex: index), layout: outputLayout)
        }
    }
}
