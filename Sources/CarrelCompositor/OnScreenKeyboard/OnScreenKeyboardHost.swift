import CarrelCore
import CarrelShim
import Glibc
import Logging

/// The on-screen keyboard as the compositor carries it out: the layer-shell
/// global, the policy's keyboard program launched on a socket pair of the
/// on-screen-keyboard role while a session allows it (and stopped, its
/// surface gone, when none does), and its one layer surface, placed where
/// Core's Desk says. Its keys go through `VirtualKeyboardHost`.
final class OnScreenKeyboardHost {
    private unowned let server: Server
    private let logger: Logger
    /// Above the app layer, below the curtains: the band.
    private let layer: UnsafeMutablePointer<wlr_scene_tree>
    private var listeners = ListenerBag()
    private var process: LaunchedApp?
    /// Keyboards stopped (SIGKILL sent) and not yet reaped.
    private var dying: [LaunchedApp] = []
    /// The keyboard's pids when Carrel started it itself: the running
    /// one's, and any stopped one's not yet reaped.
    var pids: [pid_t] { ((process.map { [$0] } ?? []) + dying).compactMap(\.childPid) }
    private var surface: OnScreenKeyboardSurface?

    init(server: Server, above appLayer: UnsafeMutablePointer<wlr_scene_tree>, logger: Logger) {
        self.server = server
        self.logger = logger
        layer = WlrootsVersion.createTree(in: server.scene)
        wlr_scene_node_place_above(WlrootsVersion.node(of: layer), WlrootsVersion.node(of: appLayer))
        let shell = WlrootsVersion.createLayerShell(server.display)
        listeners.on(&shell.pointee.events.new_surface) { [unowned self] data in
            created(data!.assumingMemoryBound(to: wlr_layer_surface_v1.self))
        }
    }

    // MARK: - The program

    /// Restrictions went up or changed (`restrictions`), or came down (nil):
    /// the keyboard runs exactly while they allow it.
    func follow(_ restrictions: RestrictionSet?, command: [String]) {
        let wanted = OnScreenKeyboard.runs(under: restrictions)
        if wanted, process == nil, !endedInSession {
            // One the helper is still starting is wanted again, not started twice.
            if !starting.wantAgain(.onScreenKeyboard) { start(command) }
        } else if !wanted {
            stop()
        }
    }

    /// The keyboard ended or could not start while the restrictions allowed
    /// it: it is not started again until they come down (an update that
    /// still allows it starts nothing).
    private var endedInSession = false
    /// The privileged helper is starting it (asked, not yet answered); what
    /// its answer means is Core's (`StartsInFlight`): stopped meanwhile, it
    /// goes as soon as the helper names it.
    private var starting = StartsInFlight<PrivilegedRequest.SpawnRole>()

    private func start(_ command: [String]) {
        do {
            let socket = try server.roles.connect(.onScreenKeyboard)
            // With the privileged helper: as the keyboard's own user, in a
            // cgroup of its own, with a private home and runtime directory;
            // its answer comes later, from the loop.
            if try server.launchThroughHelperLater(.onScreenKeyboard, argv: command, connection: socket,
                                                   label: "on-screen keyboard", done: { [weak self] in self?.started($0) }) {
                starting.ask(.onScreenKeyboard)
                return
            }
            defer { close(socket) }
            // No session bus: the keyboard reaches nothing but Carrel's socket.
            // Without the helper it runs as Carrel's user: wvkbd as nobody
            // cannot make its buffers in Carrel's runtime directory.
            process = try server.launchInOwnCgroup(.onScreenKeyboard) {
                try AppProcess.launch(command, connection: .connectedSocket(socket),
                                      environment: ["DBUS_SESSION_BUS_ADDRESS": nil], logger: logger,
                                      label: "on-screen keyboard", ownProcessGroup: true)
            }
        } catch {
            endedInSession = true
            server.roles.disconnectClients(of: .onScreenKeyboard)
            logger.error("on-screen keyboard: could not be started: \(error); the session goes on without it (check [on_screen_keyboard] command)")
        }
    }

    /// The helper answered the start: the keyboard runs, or goes at once
    /// if it was stopped meanwhile; a failure is the session going on without it.
    private func started(_ result: Result<LaunchedApp, CompositorError>) {
        let wanted = starting.answered(.onScreenKeyboard) == .keep
        switch result {
        case .success(let launched):
            process = launched
            if !wanted { stop() }
        case .failure(let error):
            guard wanted else { return }
            endedInSession = true
            server.roles.disconnectClients(of: .onScreenKeyboard)
            logger.error("on-screen keyboard: could not be started: \(error); the session goes on without it (check [on_screen_keyboard] command)")
        }
    }

    /// Ends the keyboard: its connection first (its surface leaves the
    /// screen at once), then its process group.
    func stop() {
        starting.stop(.onScreenKeyboard)
        endedInSession = false
        server.roles.disconnectClients(of: .onScreenKeyboard)
        guard let process else { return }
        self.process = nil
        // At once, without waiting: SIGCHLD reaps it (`reap`).
        process.kill()
        server.killRoleCgroup(.onScreenKeyboard)
        dying.append(process)
        logger.notice("on-screen keyboard (\(process.label)) stopped: SIGKILL sent to it and everything it started")
    }

    /// SIGCHLD: the keyboard ended on its own (its band goes with its
    /// connection; it is not relaunched within the session).
    func reap() {
        let before = dying.count
        dying.removeAll { $0.reap() != nil }
        // The last stopped one is gone and none runs: its cgroup goes.
        if dying.count < before, dying.isEmpty, process == nil { server.releaseRoleCgroup(.onScreenKeyboard) }
        guard let process, let status = process.reap() else { return }
        process.endGroup()
        self.process = nil
        endedInSession = true
        server.roles.disconnectClients(of: .onScreenKeyboard)
        if dying.isEmpty { server.releaseRoleCgroup(.onScreenKeyboard) } else { server.killRoleCgroup(.onScreenKeyboard) }
        logger.warning("on-screen keyboard (\(process.label)) ended: \(status); the session goes on without it")
    }

    /// The helper said its program `id` ended: the keyboard it was, if any, hears it.
    func helperProgramExited(_ id: UInt64, waitStatus: Int32) {
        for case let program as HelperLaunchedApp in (process.map { [$0] } ?? []) + dying where program.isProgram(id) {
            program.exited(waitStatus: waitStatus)
        }
    }

    // MARK: - Its surface

    private func created(_ layerSurface: UnsafeMutablePointer<wlr_layer_surface_v1>) {
        let client = wl_resource_get_client(layerSurface.pointee.resource)!
        let (accepted, effects) = server.decide {
            $0.layerSurfaceCreated(by: server.clientID(client), role: server.role(of: client),
                                   layer: WlrootsVersion.requestedLayer(layerSurface))
        }
        server.carryOut(effects)
        guard accepted else {
            WlrootsVersion.closeLayerSurface(layerSurface)
            return
        }
        surface = OnScreenKeyboardSurface(layerSurface, layer: layer, host: self)
        // 0.15 and 0.17 announce the surface inside its first commit, before
        // the commit listener existed: that commit is handled now.
        if WlrootsVersion.acceptsConfigure(layerSurface), let surface { committed(surface) }
    }

    func committed(_ surface: OnScreenKeyboardSurface) {
        let client = server.clientID(surface.client)
        let (placement, effects) = server.decide {
            $0.onScreenKeyboardCommitted(by: client, surface.request, extents: surface.extents, output: server.primaryOutputBox)
        }
        switch placement {
        case .close:
            surface.remove(sendClosed: true)
            if self.surface === surface { self.surface = nil }
            // Its destroy listener is gone with it: Core hears here (nothing
            // happens if Core already let the client go).
            server.drive { $0.onScreenKeyboardSurfaceGone(client) }
        case .place(let band, let shown):
            if surface.place(band: band, shown: shown, output: server.outputs.first?.wlrOutput) {
                // A band that stops being drawn must not keep its last pixels.
                server.repaintOutputs()
            }
        }
        server.carryOut(effects)
    }

    func surfaceDestroyed(_ surface: OnScreenKeyboardSurface) {
        if self.surface === surface { self.surface = nil }
        server.drive { $0.onScreenKeyboardSurfaceGone(server.clientID(surface.client)) }
        server.repaintOutputs()
    }

    /// The outputs changed: the band follows the primary output.
    func outputsChanged() {
        if let surface { committed(surface) }
    }

    func destroy() {
        surface?.remove()
        surface = nil
        listeners.disconnectAll()
    }
}
