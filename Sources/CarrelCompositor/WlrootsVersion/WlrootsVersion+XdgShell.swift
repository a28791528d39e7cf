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

    static func setFullscreen(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>, _ fullscreen: Bool) {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_xdg_toplevel_set_fullscreen(xdgSurface.pointee.toplevel, fullscreen)
        #else
        wlr_xdg_toplevel_set_fullscreen(xdgSurface, fullscreen)
        #endif
    }

    static func setSize(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>, width: Int, height: Int) {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_xdg_toplevel_set_size(xdgSurface.pointee.toplevel, Int32(width), Int32(height))
        #else
        wlr_xdg_toplevel_set_size(xdgSurface, UInt32(width), UInt32(height))
        #endif
    }

    static func setActivated(_ xdgSurface: UnsafeMutablePointer<wlr_xdg_surface>, _ activated: Bool) {
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
