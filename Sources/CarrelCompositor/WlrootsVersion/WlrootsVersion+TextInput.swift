import CarrelShim
import Glibc

/// The input method's objects: 0.15 embeds an input device in the virtual
/// keyboard and gives popups map/unmap signals of their own; 0.17+ embed a
/// wlr_keyboard (with its base input device) and map popups through their
/// wl_surface.
extension WlrootsVersion {
    /// The signal announcing a new text input (0.20 renamed it `new_text_input`).
    static func newTextInputSignal(_ manager: UnsafeMutablePointer<wlr_text_input_manager_v3>) -> UnsafeMutablePointer<wl_signal> {
        #if CARREL_WLROOTS_SINCE_0_20
        return withUnsafeMutablePointer(to: &manager.pointee.events.new_text_input) { $0 }
        #else
        return withUnsafeMutablePointer(to: &manager.pointee.events.text_input) { $0 }
        #endif
    }

    /// The signal announcing a new input method (0.20 renamed it `new_input_method`).
    static func newInputMethodSignal(_ manager: UnsafeMutablePointer<wlr_input_method_manager_v2>) -> UnsafeMutablePointer<wl_signal> {
        #if CARREL_WLROOTS_SINCE_0_20
        return withUnsafeMutablePointer(to: &manager.pointee.events.new_input_method) { $0 }
        #else
        return withUnsafeMutablePointer(to: &manager.pointee.events.input_method) { $0 }
        #endif
    }

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

/// Two leaks of wlroots 0.15 that an input method triggers, undone here
/// (0.17 fixed both; AddressSanitizer's leak check found them).
extension WlrootsVersion {
    /// 0.15 replaces an input method's current state at each commit without
    /// freeing the previous commit and preedit strings. Called once Carrel has
    /// relayed a commit: the strings are freed and forgotten (0.15 frees
    /// whatever is left when the input method goes).
    static func releaseCommittedStrings(_ inputMethod: UnsafeMutablePointer<wlr_input_method_v2>) {
        #if !CARREL_WLROOTS_SINCE_0_17
        free(inputMethod.pointee.current.commit_text)
        inputMethod.pointee.current.commit_text = nil
        free(inputMethod.pointee.current.preedit.text)
        inputMethod.pointee.current.preedit.text = nil
        #endif
    }

    /// 0.15 allocates a virtual keyboard's wlr_keyboard separately and never
    /// frees it (its keyboard destroy hook is empty). Called from the virtual
    /// keyboard's destroy signal: once wlroots has finished tearing it down
    /// (the next idle turn of the loop, or `freeRetiredKeyboards` at
    /// shutdown, whichever comes first), the struct is freed.
    static func releaseVirtualKeyboard(_ keyboard: UnsafeMutablePointer<wlr_virtual_keyboard_v1>, loop: OpaquePointer) {
        #if !CARREL_WLROOTS_SINCE_0_17
        guard let wlrKeyboard = keyboard.pointee.input_device.keyboard else { return }
        RetiredKeyboards.pending.append(UnsafeMutableRawPointer(wlrKeyboard))
        if RetiredKeyboards.idle == nil {
            RetiredKeyboards.idle = wl_event_loop_add_idle(loop, { _ in WlrootsVersion.freeRetiredKeyboards() }, nil)
        }
        #endif
    }

    /// Frees the keyboards `releaseVirtualKeyboard` retired. Carrel's shutdown
    /// calls it after the clients are gone, when no idle turn will come.
    static func freeRetiredKeyboards() {
        if let idle = RetiredKeyboards.idle { wl_event_source_remove(idle) }
        RetiredKeyboards.idle = nil
        for keyboard in RetiredKeyboards.pending { free(keyboard) }
        RetiredKeyboards.pending.removeAll()
    }
}

/// Keyboards wlroots 0.15 has torn down but not freed, and the idle source
/// that frees them. Only the event loop's thread touches them.
private enum RetiredKeyboards {
    static var pending: [UnsafeMutableRawPointer] = []
    static var idle: OpaquePointer?
}
