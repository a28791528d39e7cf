import CarrelCore
import CarrelShim
import Logging

/// One display. Renders the scene when wlroots asks for a frame; the scene
/// only repaints damaged regions, so an unchanging screen costs no rendering.
final class Output {
    let wlrOutput: UnsafeMutablePointer<wlr_output>
    private unowned let server: Server
    private var listeners = ListenerBag()
    /// A session waits for this output to present a frame with its
    /// restrictions in place; `armed` once such a frame was committed.
    private var presentRequested = false
    private var presentArmed = false
    /// Whether a frame of the scene was committed here, and whether before
    /// that the screen was black already (`OutputFrame`).
    private var sceneFrameShown = false
    private let screenBlack: Bool
    /// Offers a frame again while the scene is empty (`OutputFrame.awaitContent`).
    private var awaitingContent: EventLoopTimer?

    /// The policy's curtain colour over this output during a session (when
    /// not the primary).
    private let curtain: UnsafeMutablePointer<wlr_scene_rect>

    init(_ wlrOutput: UnsafeMutablePointer<wlr_output>, server: Server, screenBlack: Bool) {
        self.wlrOutput = wlrOutput
        self.server = server
        self.screenBlack = screenBlack
        // The policy's `[outputs] curtain_colour`; it changes only with a restart.
        var colour = server.policy.outputs.curtainComponents
        curtain = WlrootsVersion.createRect(in: server.curtainLayer, width: 0, height: 0, colour: &colour)
        wlr_scene_node_set_enabled(&curtain.pointee.node, false)
        awaitingContent = EventLoopTimer(loop: wl_display_get_event_loop(server.display)) { [unowned self] in
            wlr_output_schedule_frame(self.wlrOutput)
        }
        listeners.on(&wlrOutput.pointee.events.frame) { [unowned self] _ in handleFrame() }
        listeners.on(&wlrOutput.pointee.events.present) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: wlr_output_event_present.self).pointee
            guard presentArmed, event.presented else { return }
            presentArmed = false
            server.outputPresented(self)
        }
        listeners.on(&wlrOutput.pointee.events.destroy) { [unowned self] _ in handleDestroy() }
        // Before any commit (ours or wlroots'): capture frames copy on commit.
        listeners.on(&wlrOutput.pointee.events.precommit) { [unowned self] _ in
            server.failCaptureFrames(on: self.wlrOutput)
        }
    }

    var name: String { String(cString: wlrOutput.pointee.name) }

    /// Repaints the whole output at the next frame and reports when that
    /// frame has been presented (the frame `began` waits for).
    func requestFullFrame() {
        presentRequested = true
        if let sceneOutput = wlr_scene_get_scene_output(server.scene, wlrOutput) {
            WlrootsVersion.damageWhole(sceneOutput)
        }
        wlr_output_schedule_frame(wlrOutput)
    }

    private func handleFrame() {
        guard let sceneOutput = wlr_scene_get_scene_output(server.scene, wlrOutput) else { return }
        #if DEBUG
        // The invariant behind every session: no frame renders a window the
        // session hides. A violation is a compositor bug; stop at once.
        let violations = server.sceneViolations()
        if !violations.isEmpty {
            server.logger.critical("scene invariant broken: windows \(violations) are enabled during a session")
            fatalError("hidden window enabled in a rendered frame")
        }
        // And no window draws a pixel outside the area Core gave it.
        let outside = server.sceneAreaViolations()
        if !outside.isEmpty {
            server.logger.critical("scene invariant broken: windows \(outside) draw outside their areas")
            fatalError("window drawn outside its area in a rendered frame")
        }
        #endif
        let decision = OutputFrame.decide(
            sessionFrameRequested: presentRequested, heldForComposition: server.textInput?.holdsFrames == true,
            damaged: WlrootsVersion.hasPendingDamage(sceneOutput), frameWanted: server.captureWaiting,
            sceneFrameShown: sceneFrameShown,
            screenBlack: screenBlack, sceneHasContent: carrel_scene_has_content(server.scene))
        if decision == .hold { return }
        defer { server.textInput?.frameRendered() }
        if decision == .awaitContent {
            awaitingContent?.arm(after: .milliseconds(Self.refreshMilliseconds(wlrOutput)))
        } else if decision == .render {
            awaitingContent?.disarm()
            if presentRequested {
                // Armed before committing: some backends present synchronously.
                presentRequested = false
                presentArmed = true
            }
            if commit(sceneOutput) {
                sceneFrameShown = true
            } else {
                // Tried again at the next frame, whatever its damage.
                presentArmed = false
                presentRequested = true
            }
        }
        // Clients get their frame callbacks whether or not anything was
        // rendered, so they keep their own pace.
        var now = carrel_now()
        wlr_scene_output_send_frame_done(sceneOutput, &now)
    }

    /// The output's refresh period in whole milliseconds (16 when it has
    /// no refresh rate, as nested and headless outputs may not).
    private static func refreshMilliseconds(_ output: UnsafeMutablePointer<wlr_output>) -> Int {
        let millihertz = Int(output.pointee.refresh)
        return millihertz > 0 ? max(1, 1_000_000 / millihertz) : 16
    }

    /// Commits the scene as it is, or through the magnifier while Core has
    /// one drawn (then every frame is repainted in full: zoomed or filtered,
    /// any pixel may change).
    private func commit(_ sceneOutput: UnsafeMutablePointer<wlr_scene_output>) -> Bool {
        guard let region = server.magnifiedRegion(of: wlrOutput) else { return WlrootsVersion.commit(sceneOutput) }
        WlrootsVersion.damageWhole(sceneOutput)
        return WlrootsVersion.commitMagnified(sceneOutput, magnifier: server.magnifier, region: region)
    }

    func setCurtain(up: Bool, layout: UnsafeMutablePointer<wlr_output_layout>) {
        if up, let box = WlrootsVersion.layoutBox(layout, wlrOutput) {
            wlr_scene_node_set_position(&curtain.pointee.node, box.x, box.y)
            wlr_scene_rect_set_size(curtain, box.width, box.height)
        }
        wlr_scene_node_set_enabled(&curtain.pointee.node, up)
    }

    private func handleDestroy() {
        awaitingContent = nil
        wlr_scene_node_destroy(&curtain.pointee.node)
        listeners.disconnectAll()
        server.outputDestroyed(self)
    }
}
