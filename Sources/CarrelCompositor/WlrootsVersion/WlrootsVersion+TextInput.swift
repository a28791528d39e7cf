import CarrelShim

/// The input method's objects: 0.15 embeds an input device in the virtual
/// keyboard and gives popups map/unmap signals of their own; 0.17+ embed a
/// wlr_keyboard (with its base input device) and map popups through their
/// wl_surface.
extension WlrootsVersion {
    /// The virtual keyboard's input device.
    static func device(of keyboard: UnsafeMutablePointer<wlr_virtual_keyboard_v1>) -> UnsafeMutablePointer<wlr_input_device> {
        #if CARREL_WLROOTS_SINCE_0_17
        let offset = MemoryLayout<wlr_virtual_keyboard_v1>.offset(of: \.keyboard)! + MemoryLayout<wlr_keyboard>.offset(of: \.base)!
        #else
        let offset = MemoryLayout<wlr_virtual_keyboard_v1>.offset(of: \.input_device)!
        #endif
        return (UnsafeMutableRawPointer(keyboard) + offset).assumingMemoryBound(to: wlr_input_device.self)
    }

    /// Emitted when the virtual keyboard goes (0.17+: its input device's destroy).
    static func destroySignal(of keyboard: UnsafeMutablePointer<wlr_virtual_keyboard_v1>) -> UnsafeMutablePointer<wl_signal> {
        #if CARREL_WLROOTS_SINCE_0_17
        return withUnsafeMutablePointer(to: &device(of: keyboard).pointee.events.destroy) { $0 }
        #else
        return withUnsafeMutablePointer(to: &keyboard.pointee.events.destroy) { $0 }
        #endif
    }

    /// The popup's map and unmap signals.
    static func mapSignals(of popup: UnsafeMutablePointer<wlr_input_popup_surface_v2>)
        -> (map: UnsafeMutablePointer<wl_signal>, unmap: UnsafeMutablePointer<wl_signal>) {
        #if CARREL_WLROOTS_SINCE_0_17
        let surface = popup.pointee.surface!
        return (withUnsafeMutablePointer(to: &surface.pointee.events.map) { $0 },
                withUnsafeMutablePointer(to: &surface.pointee.events.unmap) { $0 })
        #else
        return (withUnsafeMutablePointer(to: &popup.pointee.events.map) { $0 },
                withUnsafeMutablePointer(to: &popup.pointee.events.unmap) { $0 })
        #endif
    }

    /// Whether the popup's surface is mapped.
    static func isMapped(_ popup: UnsafeMutablePointer<wlr_input_popup_surface_v2>) -> Bool {
        #if CARREL_WLROOTS_SINCE_0_17
        popup.pointee.surface.pointee.mapped
        #else
        popup.pointee.mapped
        #endif
    }

    /// A scene subtree drawing `surface` and its subsurfaces, under `tree`.
    @discardableResult
    static func createSurfaceTree(under tree: UnsafeMutablePointer<wlr_scene_tree>,
                                  _ surface: UnsafeMutablePointer<wlr_surface>) -> Bool {
        #if CARREL_WLROOTS_SINCE_0_17
        wlr_scene_subsurface_tree_create(tree, surface) != nil
        #else
        wlr_scene_subsurface_tree_create(node(of: tree), surface) != nil
        #endif
    }
}
