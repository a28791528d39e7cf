import CarrelCore
import CarrelShim

/// The on-screen keyboard's accepted layer surface: configured to the band
/// Core decides, drawn in Carrel's keyboard layer at the band, clipped to
/// it, and only while its contents stay inside it.
final class OnScreenKeyboardSurface {
    let layerSurface: UnsafeMutablePointer<wlr_layer_surface_v1>
    let client: OpaquePointer
    /// Carrel's own tree holding the surface tree: wlroots destroys the
    /// surface tree with the surface, Carrel this tree with the band.
    private let container: UnsafeMutablePointer<wlr_scene_tree>
    private var listeners = ListenerBag()
    /// The size last sent in a configure.
    private var configured: Size?

    init(_ layerSurface: UnsafeMutablePointer<wlr_layer_surface_v1>, layer: UnsafeMutablePointer<wlr_scene_tree>,
         host: OnScreenKeyboardHost) {
        self.layerSurface = layerSurface
        client = wl_resource_get_client(layerSurface.pointee.resource)
        container = WlrootsVersion.createTree(under: WlrootsVersion.node(of: layer))
        wlr_scene_node_set_enabled(WlrootsVersion.node(of: container), false)
        // False only when out of memory: the container then holds nothing to show.
        WlrootsVersion.createSurfaceTree(under: container, layerSurface.pointee.surface)
        listeners.on(&layerSurface.pointee.surface.pointee.events.commit) { [unowned self, unowned host] _ in
            host.committed(self)
        }
        listeners.on(&layerSurface.pointee.events.destroy) { [unowned self, unowned host] _ in
            remove()
            host.surfaceDestroyed(self)
        }
    }

    /// What the committed state asks for, and how far its contents reach.
    var request: OnScreenKeyboard.Request { WlrootsVersion.committedRequest(layerSurface) }

    var extents: Rect {
        let box = WlrootsVersion.extents(of: layerSurface.pointee.surface)
        return Rect(x: Int(box.x), y: Int(box.y), width: Int(box.width), height: Int(box.height))
    }

    /// Configures the surface to `band`'s size (once per size) and shows it
    /// there when `shown` and mapped. True when it was drawn and now is not.
    @discardableResult
    func place(band: Rect, shown: Bool, output: UnsafeMutablePointer<wlr_output>?) -> Bool {
        if layerSurface.pointee.output == nil { layerSurface.pointee.output = output }
        if configured != band.size, band.width > 0, WlrootsVersion.acceptsConfigure(layerSurface) {
            configured = band.size
            wlr_layer_surface_v1_configure(layerSurface, UInt32(band.width), UInt32(band.height))
        }
        let node = WlrootsVersion.node(of: container)
        let wasShown = WlrootsVersion.isEffectivelyEnabled(node)
        let visible = shown && WlrootsVersion.isMapped(layerSurface)
        wlr_scene_node_set_position(node, Int32(band.x), Int32(band.y))
        // Whatever the keyboard commits later (a desynchronised subsurface
        // above the band, a popup, a larger buffer), the frame draws nothing
        // of it outside the band.
        WlrootsVersion.setClip(container, wlr_box(x: Int32(band.x), y: Int32(band.y),
                                                  width: Int32(band.width), height: Int32(band.height)))
        wlr_scene_node_set_enabled(node, visible)
        return wasShown && !visible
    }

    /// Draws nothing more of it and stops listening; with `sendClosed`, tells
    /// the client its surface is closed (a refused one).
    func remove(sendClosed: Bool = false) {
        listeners.disconnectAll()
        if sendClosed { WlrootsVersion.closeLayerSurface(layerSurface) }
        WlrootsVersion.setClip(container, nil)
        wlr_scene_node_destroy(WlrootsVersion.node(of: container))
    }
}
