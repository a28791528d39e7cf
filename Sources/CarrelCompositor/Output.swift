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

    init(_ wlrOutput: UnsafeMutablePointer<wlr_output>, server: Server) {
        self.wlrOutput = wlrOutput
        self.server = server
        listeners.on(&wlrOutput.pointee.events.frame) { [unowned self] _ in handleFrame() }
        listeners.on(&wlrOutput.pointee.events.present) { [unowned self] data in
            let event = data!.assumingMemoryBound(to: wlr_output_event_present.self).pointee
            guard presentArmed, event.presented else { return }
            presentArmed = false
            server.outputPresented(self)
        }
        listeners.on(&wlrOutput.pointee.events.destroy) { [unowned self] _ in handleDestroy() }
    }

    var name: String { String(cString: wlrOutput.pointee.name) }

    /// Repaints the whole output at the next frame and reports when that
    /// frame has been presented (the frame `began` waits for).
    func requestFullFrame() {
        presentRequested = true
        if let sceneOutput = wlr_scene_get_scene_output(server.scene, wlrOutput) {
            // wlroots 0.15: scene outputs track damage with wlr_output_damage.
            wlr_output_damage_add_whole(sceneOutput.pointee.damage)
        }
        wlr_output_schedule_frame(wlrOutput)
    }

    private func handleFrame() {
        guard let sceneOutput = wlr_scene_get_scene_output(server.scene, wlrOutput) else { return }
        if presentRequested {
            // Armed before committing: some backends present synchronously.
            presentRequested = false
            presentArmed = true
        }
        if !wlr_scene_output_commit(sceneOutput) {
            presentArmed = false
            presentRequested = true
        }
        var now = carrel_now()
        wlr_scene_output_send_frame_done(sceneOutput, &now)
    }

    private func handleDestroy() {
        listeners.disconnectAll()
        server.outputDestroyed(self)
    }
}
