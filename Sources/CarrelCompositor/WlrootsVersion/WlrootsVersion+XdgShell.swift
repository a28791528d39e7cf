import CarrelShim

/// xdg-shell's differences. 0.15 announces an xdg surface once it has a role
/// and sends the first configure itself; 0.17 announces it on its first
/// commit; 0.18 announces toplevels and popups on signals of their own (a
/// surface on `new_surface` has no role yet) and leaves the first configure,
/// due on the initial commit, to the compositor: without it no window maps.
/// 0.17+ also moved map and unmap to the wl_surface, and the toplevel calls
/// take the toplevel rather than its xdg surface.
extension WlrootsVersion {
    /// Calls `handler` with every new xdg surface once its role is known.
    static func onNewXdgSurface(_ shell: UnsafeMutablePointer<wlr_xdg_shell>, _ listeners: inout ListenerBag,
                                _ handler: @escaping (UnsafeMutablePointer<wlr_xdg_surface>) -> Void) {
        #if CARREL_WLROOTS_SINCE_0_18
        listeners.on(&shell.pointee.events.new_toplevel) { data in
            handler(data!.assumingMemoryBound(to: wlr_xdg_toplevel.self).pointee.base)
        }
        listeners.on(&shell.pointee.events.new_popup) { data in
            handler(data!.assumingMemoryBound(to: wlr_xdg_popup.self).pointee.base)
        }
        #else
        listeners.on(&shell.pointee.events.new_surface) { data in
            handler(data!.assumingMemoryBound(to: wlr_xdg_surface.self))
        }
        #endif
    }

    /// Sends the first configure when `xdgSurface` just made its initial
    /// commit and none is scheduled yet (0.18; older wlroots send it themselves).
    static func configureOnInitialCommit(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) {
        #if CARREL_WLROOTS_SINCE_0_18
        if xdgSurface.pointee.initial_commit {
            wlr_xdg_surface_schedule_configure(xdgSurface)
        }
        #endif
    }

    /// The same for a popup, which has no commit handler of Carrel's: the
    /// shim listens for its initial commit (0.18; nothing to do before).
    static func configurePopupOnInitialCommit(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> Bool {
        carrel_xdg_configure_on_initial_commit(xdgSurface)
    }

    static func mapSignal(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> UnsafeMutablePointer<wl_signal> {
        #if CARREL_WLROOTS_SINCE_0_17
        withUnsafeMutablePointer(to: &xdgSurface.pointee.surface.pointee.events.map) { $0 }
        #else
        withUnsafeMutablePointer(to: &xdgSurface.pointee.events.map) { $0 }
        #endif
    }

    /// The end of a toplevel window: 0.18+ destroy the xdg_toplevel (the role
    /// object, with its request signals) before the xdg_surface, and 0.19+
    /// assert that no listener is left on those signals when it goes; 0.15 and
    /// 0.17 destroy both with the xdg_surface.
    static func toplevelDestroySignal(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> UnsafeMutablePointer<wl_signal> {
        #if CARREL_WLROOTS_SINCE_0_18
        withUnsafeMutablePointer(to: &xdgSurface.pointee.toplevel.pointee.events.destroy) { $0 }
        #else
        withUnsafeMutablePointer(to: &xdgSurface.pointee.events.destroy) { $0 }
        #endif
    }

    static func unmapSignal(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> UnsafeMutablePointer<wl_signal> {
        #if CARREL_WLROOTS_SINCE_0_17
        withUnsafeMutablePointer(to: &xdgSurface.pointee.surface.pointee.events.unmap) { $0 }
        #else
        withUnsafeMutablePointer(to: &xdgSurface.pointee.events.unmap) { $0 }
        #endif
    }

    /// The xdg surface of a wl_surface, nil when it has none.
    static func xdgSurface(of surface: UnsafeMutablePointer<wlr_surface>) -> UnsafeMutablePointer<wlr_xdg_surface>? {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_xdg_surface_try_from_wlr_surface(surface)
        #else
        wlr_surface_is_xdg_surface(surface) ? wlr_xdg_surface_from_wlr_surface(surface) : nil
        #endif
    }

    /// The xdg surface of a toplevel's parent toplevel, nil when it has none.
    static func parentOfToplevel(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> UnsafeMutablePointer<wlr_xdg_surface>? {
        #if CARREL_WLROOTS_SINCE_0_17
        xdgSurface.pointee.toplevel.pointee.parent?.pointee.base
        #else
        xdgSurface.pointee.toplevel.pointee.parent
        #endif
    }

    /// Schedules a configure, answering a client's request. Before the
    /// initial commit there is nothing to answer yet (the initial commit's
    /// configure carries the scheduled state): 0.18 logs and ignores such a
    /// configure, 0.19+ assert that the surface is initialized.
    static func scheduleConfigure(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) {
        #if CARREL_WLROOTS_SINCE_0_18
        guard xdgSurface.pointee.initialized else { return }
        #endif
        wlr_xdg_surface_schedule_configure(xdgSurface)
    }

    /// Keeps a popup inside `box` (in its toplevel's coordinates). A popup is
    /// announced before its initial commit (0.18+); wlroots' own function
    /// schedules a configure, which 0.19+ assert against then: the geometry
    /// goes only into the scheduled state, which the initial commit's
    /// configure sends.
    static func unconstrainPopup(_ popup: UnsafeMutablePointer<wlr_xdg_popup>, toplevelBox: wlr_box) {
        var box = toplevelBox
        #if CARREL_WLROOTS_SINCE_0_19
        if !popup.pointee.base.pointee.initialized {
            var sx: Int32 = 0, sy: Int32 = 0
            wlr_xdg_popup_get_toplevel_coords(popup, 0, 0, &sx, &sy)
            var constraint = wlr_box(x: box.x - sx, y: box.y - sy, width: box.width, height: box.height)
            var rules = popup.pointee.scheduled.rules
            wlr_xdg_positioner_rules_unconstrain_box(&rules, &constraint, &popup.pointee.scheduled.geometry)
            return
        }
        #endif
        wlr_xdg_popup_unconstrain_from_box(popup, &box)
    }

    /// Server-side decorations (none drawn: a kiosk has no frames). A client
    /// may ask before its toplevel's initial commit; then 0.19+ take the mode
    /// only into the scheduled state, which the initial configure carries.
    static func setServerSideDecoration(_ decoration: UnsafeMutablePointer<wlr_xdg_toplevel_decoration_v1>) {
        #if CARREL_WLROOTS_SINCE_0_19
        guard decoration.pointee.toplevel.pointee.base.pointee.initialized else {
            decoration.pointee.scheduled_mode = WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE
            return
        }
        #endif
        wlr_xdg_toplevel_decoration_v1_set_mode(decoration, WLR_XDG_TOPLEVEL_DECORATION_V1_MODE_SERVER_SIDE)
    }

    // The setters below: before the initial commit 0.19+ take the state only
    // into `scheduled` (wlroots' own setters would schedule a configure and
    // assert); the initial commit's configure then carries it.

    static func setFullscreen(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>, _ fullscreen: Bool) {
        #if CARREL_WLROOTS_SINCE_0_19
        guard xdgSurface.pointee.initialized else {
            xdgSurface.pointee.toplevel.pointee.scheduled.fullscreen = fullscreen
            return
        }
        #endif
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_xdg_toplevel_set_fullscreen(xdgSurface.pointee.toplevel, fullscreen)
        #else
        wlr_xdg_toplevel_set_fullscreen(xdgSurface, fullscreen)
        #endif
    }

    static func setSize(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>, width: Int, height: Int) {
        #if CARREL_WLROOTS_SINCE_0_19
        guard xdgSurface.pointee.initialized else {
            xdgSurface.pointee.toplevel.pointee.scheduled.width = Int32(width)
            xdgSurface.pointee.toplevel.pointee.scheduled.height = Int32(height)
            return
        }
        #endif
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_xdg_toplevel_set_size(xdgSurface.pointee.toplevel, Int32(width), Int32(height))
        #else
        wlr_xdg_toplevel_set_size(xdgSurface, UInt32(width), UInt32(height))
        #endif
    }

    static func setActivated(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>, _ activated: Bool) {
        #if CARREL_WLROOTS_SINCE_0_19
        guard xdgSurface.pointee.initialized else {
            xdgSurface.pointee.toplevel.pointee.scheduled.activated = activated
            return
        }
        #endif
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_xdg_toplevel_set_activated(xdgSurface.pointee.toplevel, activated)
        #else
        wlr_xdg_toplevel_set_activated(xdgSurface, activated)
        #endif
    }

    /// The window geometry: what the client set, within the surface's extents
    /// (0.15–0.18 compute it on request; 0.19+ keep it computed at each commit).
    static func geometry(of xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>) -> wlr_box {
        #if CARREL_WLROOTS_SINCE_0_19
        return xdgSurface.pointee.geometry
        #else
        var box = wlr_box()
        wlr_xdg_surface_get_geometry(xdgSurface, &box)
        return box
        #endif
    }

    /// How far a surface and its subsurfaces reach (0.19 fixed the function's
    /// name's spelling).
    static func extents(of surface: UnsafeMutablePointer<wlr_surface>) -> wlr_box {
        var box = wlr_box()
        #if CARREL_WLROOTS_SINCE_0_19
        wlr_surface_get_extents(surface, &box)
        #else
        wlr_surface_get_extends(surface, &box)
        #endif
        return box
    }
}
