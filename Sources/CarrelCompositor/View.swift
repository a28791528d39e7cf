import CarrelCore
import CarrelShim

/// One xdg toplevel and its scene node. Popups live in the toplevel's scene
/// subtree, so they are shown and hidden with it.
final class View {
    let id: WindowID
    let role: Role
    /// Whose window this is, for the session's visibility decisions.
    let owner: WindowOwner
    let xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>
    /// Carrel's own node above the window's: wlroots enables and disables the
    /// xdg surface's node itself on map and unmap, so whether a session shows
    /// the window is decided here, where wlroots never writes.
    let container: UnsafeMutablePointer<wlr_scene_tree>
    /// The xdg surface's scene node (positioned; popups hang below it).
    let sceneNode: UnsafeMutablePointer<wlr_scene_node>
    private unowned let server: Server
    private var listeners = ListenerBag()
    private(set) var isMapped = false
    private(set) var isPlaced = false

    init(id: WindowID, owner: WindowOwner, xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>,
         layer: UnsafeMutablePointer<wlr_scene_tree>, server: Server) {
        self.id = id
        self.role = owner.role
        self.owner = owner
        self.xdgSurface = xdgSurface
        self.server = server
        container = WlrootsVersion.createTree(under: WlrootsVersion.node(of: layer))
        sceneNode = WlrootsVersion.createXdgSurfaceNode(under: WlrootsVersion.node(of: container), xdgSurface)
        // Popups find their parent's scene node through `data`.
        xdgSurface.pointee.data = UnsafeMutableRawPointer(sceneNode)
        listeners.on(&xdgSurface.pointee.surface.pointee.events.commit) { [unowned self] _ in handleCommit() }
        listeners.on(WlrootsVersion.mapSignal(xdgSurface)) { [unowned self] _ in handleMap() }
        listeners.on(WlrootsVersion.unmapSignal(xdgSurface)) { [unowned self] _ in handleUnmap() }
        listeners.on(WlrootsVersion.toplevelDestroySignal(xdgSurface)) { [unowned self] _ in handleDestroy() }
        listeners.on(&xdgSurface.pointee.toplevel.pointee.events.request_fullscreen) { [unowned self] _ in
            // Kiosk windows stay as placed; answer with a configure anyway, as
            // xdg-shell requires one in reply to a request.
            WlrootsVersion.scheduleConfigure(self.xdgSurface)
        }
        listeners.on(&xdgSurface.pointee.toplevel.pointee.events.request_maximize) { [unowned self] _ in
            WlrootsVersion.scheduleConfigure(self.xdgSurface)
        }
    }

    var surface: UnsafeMutablePointer<wlr_surface> { xdgSurface.pointee.surface }

    var parentView: View? {
        guard let parent = WlrootsVersion.parentOfToplevel(xdgSurface) else { return nil }
        return server.view(for: parent)
    }

    var summary: WindowSummary { WindowSummary(id: id, role: role, isMapped: isMapped) }

    /// Decides the size on the client's initial commit, so the first buffer it
    /// draws already has the kiosk size and no frame shows it any other way.
    private func handleCommit() {
        server.textInput?.surfaceCommitted(surface)
        WlrootsVersion.configureOnInitialCommit(xdgSurface)
        guard !isPlaced else { return }
        isPlaced = true
        server.placeBeforeMap(self)
    }

    private func handleMap() {
        isMapped = true
        server.viewMapped(self)
    }

    private func handleUnmap() {
        isMapped = false
        server.viewUnmapped(self)
    }

    /// Shows or hides the window (and its popups and subsurfaces) in every frame.
    func setShown(_ shown: Bool) {
        wlr_scene_node_set_enabled(&container.pointee.node, shown)
    }

    /// Confines everything the window draws — its buffer whatever its window
    /// geometry, subsurfaces at any offset and however late their buffers
    /// come, popups and theirs — to `area` (layout coordinates), Core's
    /// rectangle for it; the frame renders nothing of it outside.
    func confine(to area: Rect) {
        WlrootsVersion.setClip(container, wlr_box(x: Int32(area.x), y: Int32(area.y),
                                                  width: Int32(area.width), height: Int32(area.height)))
    }

    /// What the frame draws for the window, in layout coordinates (the audit's view).
    var drawnRect: Rect? {
        WlrootsVersion.drawnBox(container).map { Rect(x: Int($0.x), y: Int($0.y), width: Int($0.width), height: Int($0.height)) }
    }

    func raiseToTop() {
        wlr_scene_node_raise_to_top(&container.pointee.node)
    }

    private func handleDestroy() {
        listeners.disconnectAll()
        // wlroots destroyed the xdg surface's node; the container is ours,
        // and its clip goes first (the frame must never see a freed node).
        WlrootsVersion.setClip(container, nil)
        wlr_scene_node_destroy(&container.pointee.node)
        server.viewDestroyed(self)
    }
}
