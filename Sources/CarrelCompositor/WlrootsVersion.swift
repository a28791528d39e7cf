import CarrelShim

/// Accessors whose shape changed between wlroots 0.15 and 0.17+. Keeping them
/// here keeps the planned port to a few lines.
enum WlrootsVersion {
    /// Whether a scene node and all its ancestors are enabled, i.e. whether
    /// rendering may draw it. (0.15: `node.state.enabled`; 0.17: `node.enabled`.)
    static func isEffectivelyEnabled(_ node: UnsafeMutablePointer<wlr_scene_node>) -> Bool {
        var current: UnsafeMutablePointer<wlr_scene_node>? = node
        while let n = current {
            if !n.pointee.state.enabled { return false }
            current = n.pointee.parent
        }
        return true
    }

    /// An output's box in layout coordinates. (0.15 returns a pointer to an
    /// internal box; 0.16+ fills a caller's box.)
    static func layoutBox(_ layout: UnsafeMutablePointer<wlr_output_layout>,
                          _ output: UnsafeMutablePointer<wlr_output>) -> wlr_box? {
        wlr_output_layout_get_box(layout, output)?.pointee
    }

    /// Damages a whole scene output so the next frame repaints everything.
    /// (0.15: the scene output's wlr_output_damage; 0.17: its damage ring.)
    static func damageWhole(_ sceneOutput: UnsafeMutablePointer<wlr_scene_output>) {
        wlr_output_damage_add_whole(sceneOutput.pointee.damage)
    }

    /// Whether a scene output has anything to paint: damage, or wlroots asked
    /// for a frame (a cursor change, a mode change). On the headless backend
    /// wlroots 0.15 ticks frames forever; skipping the commit then keeps an
    /// unchanging screen from costing any rendering. (0.17: damage_ring.current.)
    static func hasPendingDamage(_ sceneOutput: UnsafeMutablePointer<wlr_scene_output>) -> Bool {
        if sceneOutput.pointee.output.pointee.needs_frame { return true }
        return pixman_region32_not_empty(&sceneOutput.pointee.damage.pointee.current) != 0
    }

    /// Refuses popups whose parent is themselves or one of their descendants,
    /// which 0.15 accepts and then crashes on (0.17 refuses them itself; the
    /// guard can go with the port).
    /// Returns the guard (a protocol logger) for `wl_protocol_logger_destroy`
    /// before the display goes.
    static func guardPopupParents(_ display: OpaquePointer) -> OpaquePointer? {
        carrel_install_popup_guard(display)
    }

    /// Refuses restacking (and desyncing) a subsurface whose parent surface
    /// is gone, which 0.15 answers with a NULL dereference (0.16+ destroys
    /// such a subsurface with its parent; the guard can go with the port).
    static func guardOrphanedSubsurfaces(_ display: OpaquePointer) -> OpaquePointer? {
        carrel_install_subsurface_guard(display)
    }

    /// Frees a drag Carrel refused: 0.15 leaks one without a data source
    /// (see the shim; re-check at the port).
    static func destroyRefusedDrag(_ drag: UnsafeMutablePointer<wlr_drag>) {
        carrel_drag_destroy_refused(drag)
    }

    /// Ignores requests on an xdg_toplevel whose wl_surface was destroyed and
    /// refuses get_popup on such an xdg_surface: 0.15 dereferences NULL for
    /// them (see the shim; re-check at the port).
    static func guardInertXdgObjects(_ display: OpaquePointer) -> OpaquePointer? {
        carrel_install_inert_xdg_guard(display)
    }

    /// Fails pending capture frames (of one output, or all): 0.15 offers no
    /// call for it (see the shim). `each` hears every frame's client first.
    /// Returns how many failed.
    @discardableResult
    static func failCaptureFrames(_ manager: UnsafeMutablePointer<wlr_screencopy_manager_v1>,
                                  output: UnsafeMutablePointer<wlr_output>?,
                                  each: (OpaquePointer) -> Void) -> Int {
        withoutActuallyEscaping(each) { each in
            var box = each
            return withUnsafeMutablePointer(to: &box) { pointer in
                Int(carrel_screencopy_fail_frames(manager, output, { data, client in
                    data!.assumingMemoryBound(to: ((OpaquePointer) -> Void).self).pointee(client!)
                }, pointer))
            }
        }
    }
}
