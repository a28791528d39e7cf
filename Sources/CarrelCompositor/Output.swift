import CarrelShim
import Logging

/// One display. Renders the scene when wlroots asks for a frame; the scene
/// only repaints damaged regions, so an unchanging screen costs no rendering.
final class Output {
    let wlrOutput: UnsafeMutablePointer<wlr_output>
    private unowned let server: Server
    private var listeners = ListenerBag()

    init(_ wlrOutput: UnsafeMutablePointer<wlr_output>, server: Server) {
        self.wlrOutput = wlrOutput
        self.server = server
        listeners.on(&wlrOutput.pointee.events.frame) { [unowned self] _ in handleFrame() }
        listeners.on(&wlrOutput.pointee.events.destroy) { [unowned self] _ in handleDestroy() }
    }

    var name: String { String(cString: wlrOutput.pointee.name) }

    private func handleFrame() {
        guard let sceneOutput = wlr_scene_get_scene_output(server.scene, wlrOutput) else { return }
        wlr_scene_output_commit(sceneOutput)
        var now = carrel_now()
        wlr_scene_output_send_frame_done(sceneOutput, &now)
    }

    private func handleDestroy() {
        listeners.disconnectAll()
        server.outputDestroyed(self)
    }
}
