import CarrelShim

/// The calls whose shape differs between the wlroots versions Carrel builds
/// against: 0.15 (Debian bookworm), 0.17 (Ubuntu 24.04) and 0.18 (Debian
/// trixie). The rest of the compositor calls these version-neutral forms; the
/// build picks the version (`CARREL_WLROOTS`, see Package.swift), and only the
/// files of this folder and the shim test it. This file: creation, outputs and
/// the guards; the scene, xdg-shell and input differences have their own files.
enum WlrootsVersion {
    /// The backend wlroots picks from the environment (WLR_BACKENDS), and the
    /// session it opened, if any (only a real seat has one: virtual terminals).
    /// (0.15: from the display, session asked for afterwards; 0.17+: from the
    /// event loop, session returned alongside.)
    static func createBackend(_ display: OpaquePointer) -> (backend: UnsafeMutablePointer<wlr_backend>, session: UnsafeMutablePointer<wlr_session>?)? {
        #if CARREL_WLROOTS_SINCE_0_17
        var session: UnsafeMutablePointer<wlr_session>?
        #if CARREL_WLROOTS_SINCE_0_18
        guard let backend = wlr_backend_autocreate(wl_display_get_event_loop(display), &session) else { return nil }
        #else
        guard let backend = wlr_backend_autocreate(display, &session) else { return nil }
        #endif
        return (backend, session)
        #else
        guard let backend = wlr_backend_autocreate(display) else { return nil }
        return (backend, wlr_backend_get_session(backend))
        #endif
    }

    /// wl_compositor and wl_subcompositor. (0.15 creates the subcompositor
    /// with the compositor; 0.16+ has a call of its own, and the compositor
    /// takes the protocol version it offers.)
    static func createCompositor(_ display: OpaquePointer, _ renderer: UnsafeMutablePointer<wlr_renderer>) {
        #if CARREL_WLROOTS_SINCE_0_17
        // Version 4, what 0.15 offers: the same protocol on every wlroots.
        wlr_compositor_create(display, 4, renderer)
        wlr_subcompositor_create(display)
        #else
        wlr_compositor_create(display, renderer)
        #endif
    }

    /// xdg_wm_base. (0.17+ take the version offered: 2, what 0.15 offers, so
    /// clients see the same protocol on every wlroots.)
    static func createXdgShell(_ display: OpaquePointer) -> UnsafeMutablePointer<wlr_xdg_shell> {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_xdg_shell_create(display, 2)!
        #else
        wlr_xdg_shell_create(display)!
        #endif
    }

    /// An empty output layout. (0.18 ties it to the display.)
    static func createOutputLayout(_ display: OpaquePointer) -> UnsafeMutablePointer<wlr_output_layout> {
        #if CARREL_WLROOTS_SINCE_0_18
        wlr_output_layout_create(display)!
        #else
        wlr_output_layout_create()!
        #endif
    }

    /// wp_presentation, with the scene sending its feedback. (0.18's scene
    /// does so by itself.)
    static func createPresentation(_ display: OpaquePointer, _ backend: UnsafeMutablePointer<wlr_backend>,
                                   scene: UnsafeMutablePointer<wlr_scene>) {
        #if CARREL_WLROOTS_SINCE_0_19
        // 0.19 asks which version to offer: 1, as 0.15–0.18 offer.
        let presentation = wlr_presentation_create(display, backend, 1)
        #else
        let presentation = wlr_presentation_create(display, backend)
        #endif
        #if !CARREL_WLROOTS_SINCE_0_18
        wlr_scene_set_presentation(scene, presentation)
        #else
        _ = presentation
        #endif
    }

    /// Enables an output at its preferred mode, or at `width`×`height` when it
    /// has none (headless, nested). Returns whether the output took it.
    /// (0.15: pending state on the output; 0.17+: an explicit output state.)
    static func enableOutput(_ output: UnsafeMutablePointer<wlr_output>, width: Int32, height: Int32) -> Bool {
        #if CARREL_WLROOTS_SINCE_0_17
        var state = wlr_output_state()
        wlr_output_state_init(&state)
        defer { wlr_output_state_finish(&state) }
        wlr_output_state_set_enabled(&state, true)
        if let mode = wlr_output_preferred_mode(output) {
            wlr_output_state_set_mode(&state, mode)
        } else {
            wlr_output_state_set_custom_mode(&state, width, height, 0)
        }
        return wlr_output_commit_state(output, &state)
        #else
        if let mode = wlr_output_preferred_mode(output) {
            wlr_output_set_mode(output, mode)
        } else {
            wlr_output_set_custom_mode(output, width, height, 0)
        }
        wlr_output_enable(output, true)
        return wlr_output_commit(output)
        #endif
    }

    /// Whether an output commit (its `commit` event's data) carried a buffer.
    static func commitCarriesBuffer(_ data: UnsafeMutableRawPointer) -> Bool {
        let event = data.assumingMemoryBound(to: wlr_output_event_commit.self).pointee
        #if CARREL_WLROOTS_SINCE_0_17
        return event.state.pointee.committed & WLR_OUTPUT_STATE_BUFFER.rawValue != 0
        #else
        return event.buffer != nil
        #endif
    }

    /// An output's box in layout coordinates, nil when it is not in the
    /// layout. (0.15 returns a pointer to an internal box; 0.16+ fills a
    /// caller's box, empty when the output is not in the layout.)
    static func layoutBox(_ layout: UnsafeMutablePointer<wlr_output_layout>,
                          _ output: UnsafeMutablePointer<wlr_output>) -> wlr_box? {
        #if CARREL_WLROOTS_SINCE_0_17
        var box = wlr_box()
        wlr_output_layout_get_box(layout, output, &box)
        return wlr_box_empty(&box) ? nil : box
        #else
        wlr_output_layout_get_box(layout, output)?.pointee
        #endif
    }

    /// Refuses popups whose parent is themselves or one of their descendants.
    /// 0.15 accepts both and then crashes on them; 0.17 and 0.18 still accept
    /// a popup as its own parent (they only check the parent has a role).
    /// Returns the guard (a protocol logger) for `wl_protocol_logger_destroy`
    /// before the display goes.
    static func guardPopupParents(_ display: OpaquePointer) -> OpaquePointer? {
        carrel_install_popup_guard(display)
    }

    /// Refuses restacking (and desyncing) a subsurface whose parent surface
    /// is gone, which 0.15 answers with a NULL dereference. 0.16+ destroys
    /// such a subsurface with its parent: there the shim installs nothing
    /// (nil).
    static func guardOrphanedSubsurfaces(_ display: OpaquePointer) -> OpaquePointer? {
        carrel_install_subsurface_guard(display)
    }

    /// Gives wlroots a sealed copy of a virtual keyboard's keymap, its text up
    /// to the first NUL: a client's file shorter than the size it gave would
    /// be SIGBUS in Carrel (every version), and 0.19+ compile the whole
    /// buffer and refuse one padded with NULs (bookworm's wvkbd pads it).
    static func guardPaddedKeymaps(_ display: OpaquePointer) -> OpaquePointer? {
        carrel_install_keymap_guard(display)
    }

    /// Frees a drag Carrel refused: no wlroots (0.15 to 0.18) frees one that
    /// never started and has no data source (see the shim).
    static func destroyRefusedDrag(_ drag: UnsafeMutablePointer<wlr_drag>) {
        carrel_drag_destroy_refused(drag)
    }

    /// Ignores requests on an xdg_toplevel whose wl_surface was destroyed and
    /// refuses get_popup on such an xdg_surface: 0.15 dereferences NULL for
    /// them. 0.18's handlers would too, but 0.18 disconnects such a client
    /// first; the guard stays as a second line (see the shim).
    static func guardInertXdgObjects(_ display: OpaquePointer) -> OpaquePointer? {
        carrel_install_inert_xdg_guard(display)
    }

    /// Fails pending capture frames (of one output, or all): wlroots offers
    /// no call for it (see the shim). `each` hears every frame's client first.
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
