import CarrelCore
import CarrelShim
import Logging

/// The toplevels and popups in the scene: where they go, their layer, and
/// Core's focus and visibility decisions carried out on them.
extension Server {
    func handleNewXdgSurface(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) {
        switch xdgSurface.pointee.role {
        case WLR_XDG_SURFACE_ROLE_POPUP:
            addPopup(xdgSurface)
        case WLR_XDG_SURFACE_ROLE_TOPLEVEL:
            let client = wl_resource_get_client(xdgSurface.pointee.resource)!
            let role = roles.role(of: client)
            let owner = WindowOwner(client: clientID(client), role: role, participantID: roles.participantID(of: client))
            let layer = role == .untrusted ? untrustedLayer : appLayer
            let view = View(id: WindowID(nextWindowID), owner: owner, xdgSurface: xdgSurface,
                            layer: layer, server: self)
            nextWindowID += 1
            views[xdgSurface] = view
            confine(view)
            // Decided before the client can commit a buffer: a window the
            // session hides is never enabled in the scene, not even for a frame.
            drive { $0.toplevelCreated(view.id, owner: owner) }
            logger.debug("new toplevel \(view.id) of role \(role)")
        default:
            break
        }
    }

    /// Popups hang in their parent's scene subtree, so the scene clips them
    /// to their toplevel's area, and are asked to stay inside that area.
    private func addPopup(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) {
        guard let parentSurface = xdgSurface.pointee.popup.pointee.parent,
              let parent = WlrootsVersion.xdgSurface(of: parentSurface),
              let parentNode = parent.pointee.data?.assumingMemoryBound(to: wlr_scene_node.self) else {
            return
        }
        guard WlrootsVersion.configurePopupOnInitialCommit(xdgSurface) else {
            wl_client_post_no_memory(wl_resource_get_client(xdgSurface.pointee.resource))
            return
        }
        let node = WlrootsVersion.createXdgSurfaceNode(under: parentNode, xdgSurface)
        xdgSurface.pointee.data = UnsafeMutableRawPointer(node)
        // The unconstrain box is in the toplevel's coordinate space.
        var toplevel = parent
        while toplevel.pointee.role == WLR_XDG_SURFACE_ROLE_POPUP,
              let next = toplevel.pointee.popup.pointee.parent.flatMap({ WlrootsVersion.xdgSurface(of: $0) }) {
            toplevel = next
        }
        guard let view = views[toplevel], let output = primaryOutputBox else { return }
        var lx: Int32 = 0, ly: Int32 = 0
        wlr_scene_node_coords(view.sceneNode, &lx, &ly)
        let bounds = PopupBounds.constraint(area: desk.area(for: view.owner, output: output),
                                            toplevelOrigin: Point(x: Int(lx), y: Int(ly)))
        WlrootsVersion.unconstrainPopup(xdgSurface.pointee.popup,
                                        toplevelBox: wlr_box(x: Int32(bounds.x), y: Int32(bounds.y),
                                                             width: Int32(bounds.width), height: Int32(bounds.height)))
    }

    func view(for xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> View? {
        views[xdgSurface]
    }

    /// Sends the kiosk size with the first configure. Dialogs choose their size.
    func placeBeforeMap(_ view: View) {
        guard view.parentView == nil, let output = primaryOutputBox else { return }
        let area = desk.area(for: view.owner, output: output)
        let placement = Placement.toplevel(output: area, parent: nil, requested: Size(width: 0, height: 0))
        WlrootsVersion.setFullscreen(view.xdgSurface, area == output)
        WlrootsVersion.setSize(view.xdgSurface, width: placement.rect.width, height: placement.rect.height)
        wlr_scene_node_set_position(view.sceneNode, Int32(placement.rect.x), Int32(placement.rect.y))
    }

    /// Confines the window to the area Core gives its owner now (the whole
    /// primary output outside a session; no output, nothing to draw on:
    /// an empty area).
    func confine(_ view: View) {
        view.confine(to: primaryOutputBox.map { desk.area(for: view.owner, output: $0) } ?? Rect(x: 0, y: 0, width: 0, height: 0))
    }

    /// Re-applies placement and confinement after the outputs or the
    /// session's layout changed.
    func replaceAll() {
        for view in views.values { confine(view) }
        for view in stack where view.isMapped { place(view) }
        for view in views.values where !view.isMapped && view.isPlaced { placeBeforeMap(view) }
    }

    private func place(_ view: View) {
        guard let output = primaryOutputBox.map({ desk.area(for: view.owner, output: $0) }) else { return }
        let geometry = WlrootsVersion.geometry(of: view.xdgSurface)
        let parentRect = view.parentView.map { parent -> Rect in
            var lx: Int32 = 0, ly: Int32 = 0
            wlr_scene_node_coords(parent.sceneNode, &lx, &ly)
            let g = WlrootsVersion.geometry(of: parent.xdgSurface)
            return Rect(x: Int(lx), y: Int(ly), width: Int(g.width), height: Int(g.height))
        }
        let placement = Placement.toplevel(output: output, parent: parentRect,
                                           requested: Size(width: Int(geometry.width), height: Int(geometry.height)))
        switch placement {
        case .fullscreen(let rect):
            WlrootsVersion.setFullscreen(view.xdgSurface, primaryOutputBox == rect)
            WlrootsVersion.setSize(view.xdgSurface, width: rect.width, height: rect.height)
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
        // The app's first window since it had none: a seat's boot figure
        // (unit start → the exam on screen) is read from this line.
        if view.role == .app, !views.values.contains(where: { $0 !== view && $0.role == .app && $0.isMapped }) {
            logger.notice("the app's window \(view.id) is mapped; the next frame shows it")
        }
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

    /// Shows or hides one window, as Core decided when it was created.
    func setWindowShown(_ id: WindowID, _ shown: Bool) {
        views.values.first { $0.id == id }?.setShown(shown)
    }

    /// Puts a mapped window on top of its layer (Core's focus switch).
    func raise(_ id: WindowID) {
        guard let view = stack.first(where: { $0.id == id && $0.isMapped }) else { return }
        stack.removeAll { $0 === view }
        stack.append(view)
        view.raiseToTop()
    }

    /// Keyboard focus on `target` (Core's choice), activated; none when nil.
    func focus(_ target: WindowID?) {
        guard let input else { return }
        let targetView = stack.first { $0.id == target && $0.isMapped }
        for view in stack where view.isMapped {
            WlrootsVersion.setActivated(view.xdgSurface, view === targetView)
        }
        input.focusKeyboard(on: targetView?.surface)
        textInput?.focusChanged()
    }

    /// Where the input method's popup of `size` goes under the text cursor
    /// `cursor` (layout coordinates) and what it may draw: Core's bound
    /// inside the focused window's area. Nil: it may draw nothing.
    func candidatePopupPlacement(size: Size, cursor: wlr_box) -> CandidatePopupPlacement? {
        guard let output = primaryOutputBox, let area = desk.focusedArea(output: output) else { return nil }
        return CandidatePopupPlacement.place(
            size: size, cursor: Rect(x: Int(cursor.x), y: Int(cursor.y), width: Int(cursor.width), height: Int(cursor.height)),
            area: area)
    }

    /// The surface under a layout point, with surface-local coordinates.
    func surface(atLayoutX lx: Double, y ly: Double) -> (surface: UnsafeMutablePointer<wlr_surface>, sx: Double, sy: Double)? {
        WlrootsVersion.surface(at: lx, ly, in: scene)
    }
}
