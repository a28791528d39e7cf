import CarrelCore
import CarrelShim

/// The layer shell, for the on-screen keyboard's band. (0.15 creates it with
/// the display alone and announces a surface at its first commit; 0.17+ take
/// the version offered, and 0.18 announces it at creation and wants the first
/// configure only once the client's initial commit arrived.)
extension WlrootsVersion {
    /// zwlr_layer_shell_v1, version 4 on every wlroots (what 0.15 offers).
    static func createLayerShell(_ display: OpaquePointer) -> UnsafeMutablePointer<wlr_layer_shell_v1> {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_layer_shell_v1_create(display, 4)!
        #else
        wlr_layer_shell_v1_create(display)!
        #endif
    }

    /// The layer a surface asked for when it was created.
    static func requestedLayer(_ surface: UnsafeMutablePointer<wlr_layer_surface_v1>) -> OnScreenKeyboard.Layer? {
        OnScreenKeyboard.Layer(rawValue: surface.pointee.pending.layer.rawValue)
    }

    /// What the surface's committed state asks for.
    static func committedRequest(_ surface: UnsafeMutablePointer<wlr_layer_surface_v1>) -> OnScreenKeyboard.Request {
        let state = surface.pointee.current
        return OnScreenKeyboard.Request(layer: OnScreenKeyboard.Layer(rawValue: state.layer.rawValue),
                                        anchor: OnScreenKeyboard.Anchor(rawValue: state.anchor),
                                        keyboardInteractive: state.keyboard_interactive.rawValue != 0,
                                        desiredHeight: Int(state.desired_height))
    }

    /// Whether a configure may be sent now.
    static func acceptsConfigure(_ surface: UnsafeMutablePointer<wlr_layer_surface_v1>) -> Bool {
        #if CARREL_WLROOTS_SINCE_0_17
        surface.pointee.initialized
        #else
        true
        #endif
    }

    /// Whether the client has a buffer on screen (mapped).
    static func isMapped(_ surface: UnsafeMutablePointer<wlr_layer_surface_v1>) -> Bool {
        #if CARREL_WLROOTS_SINCE_0_17
        surface.pointee.surface.pointee.mapped
        #else
        surface.pointee.mapped
        #endif
    }

    /// Sends `closed`: the client must destroy the surface; its commits are
    /// ignored from now on (the call is named `destroy` in every version).
    static func closeLayerSurface(_ surface: UnsafeMutablePointer<wlr_layer_surface_v1>) {
        wlr_layer_surface_v1_destroy(surface)
    }
}
