import CarrelCore
import CarrelShim

/// The input method's candidate popup: drawn in Carrel's popup layer above
/// the app layer, at the text cursor, and only while Core lets it show.
final class CandidatePopup {
    let popup: UnsafeMutablePointer<wlr_input_popup_surface_v2>
    let client: OpaquePointer
    /// Carrel's own tree holding the popup's surface tree: wlroots destroys
    /// the surface tree with the surface, Carrel this tree with the popup.
    private let container: UnsafeMutablePointer<wlr_scene_tree>
    private var listeners = ListenerBag()

    init(_ popup: UnsafeMutablePointer<wlr_input_popup_surface_v2>, layer: UnsafeMutablePointer<wlr_scene_tree>,
         relay: TextInputRelay) {
        self.popup = popup
        client = wl_resource_get_client(popup.pointee.resource)
        container = WlrootsVersion.createTree(under: WlrootsVersion.node(of: layer))
        wlr_scene_node_set_enabled(WlrootsVersion.node(of: container), false)
        // False only when out of memory: the container then holds nothing to show.
        WlrootsVersion.createSurfaceTree(under: container, popup.pointee.surface)
        let signals = WlrootsVersion.mapSignals(of: popup)
        listeners.on(signals.map) { [unowned relay] _ in relay.updatePopups() }
        listeners.on(signals.unmap) { [unowned relay] _ in relay.updatePopups() }
        listeners.on(&popup.pointee.surface.pointee.events.commit) { [unowned relay] _ in relay.updatePopups() }
        listeners.on(&popup.pointee.events.destroy) { [unowned self, unowned relay] _ in
            listeners.disconnectAll()
            relay.popupDestroyed(self)
        }
    }

    /// Whether the popup was drawn at the last placement.
    private(set) var wasShown = false
    /// The cursor rectangle the engine was last told, so an unchanged one
    /// (every commit of the popup and of the text input places it again)
    /// does not wake the engine.
    private var toldRectangle: (width: Int32, height: Int32)?

    /// The size the engine's popup surface has now.
    var size: Size {
        Size(width: Int(popup.pointee.surface.pointee.current.width), height: Int(popup.pointee.surface.pointee.current.height))
    }

    /// Shows the popup where Core placed it, drawing nothing outside Core's
    /// bound, under the text cursor `cursor`; or hides it (not shown, or no
    /// placement). True when it was shown and now is not.
    @discardableResult
    func place(shown: Bool, placement: CandidatePopupPlacement?, cursor: wlr_box) -> Bool {
        let visible = shown && placement != nil && WlrootsVersion.isMapped(popup)
        let hidden = wasShown && !visible
        wasShown = visible
        wlr_scene_node_set_enabled(WlrootsVersion.node(of: container), visible)
        guard visible, let placement else { return hidden }
        WlrootsVersion.setClip(container, wlr_box(x: Int32(placement.clip.x), y: Int32(placement.clip.y),
                                                  width: Int32(placement.clip.width), height: Int32(placement.clip.height)))
        wlr_scene_node_set_position(WlrootsVersion.node(of: container), Int32(placement.origin.x), Int32(placement.origin.y))
        // Relative to the popup: the cursor sits just above it.
        guard toldRectangle.map({ $0 != (cursor.width, cursor.height) }) ?? true else { return false }
        toldRectangle = (cursor.width, cursor.height)
        var rectangle = wlr_box(x: 0, y: -cursor.height, width: cursor.width, height: cursor.height)
        wlr_input_popup_surface_v2_send_text_input_rectangle(popup, &rectangle)
        return false
    }

    func remove() {
        listeners.disconnectAll()
        WlrootsVersion.setClip(container, nil)
        wlr_scene_node_destroy(WlrootsVersion.node(of: container))
    }
}
