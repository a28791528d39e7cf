import CarrelCore
import CarrelShim
import Logging

/// What Carrel draws itself, above every client and the curtains: the
/// confirmation prompt of an app-requested lock and the banner at `began`.
///
/// Each is one line of text on a flat colour, drawn once with cairo (which
/// the shim loads the first time, `carrel_text_load`) into a buffer in plain
/// memory (the shim's `carrel_memory_buffer_create`) and shown
/// as a scene buffer node in the overlay layer. Capture never sees them: both
/// only exist while a session holds restrictions, when every capture frame fails.
/// Placement is Core's (`AppLock.promptPlacement`, `AppLock.bannerPlacement`).
final class Overlay {
    /// What the overlay shows; each kind has its own colours and place.
    enum Kind {
        case prompt
        case banner

        /// Background, opaque (premultiplied ARGB components 0...1).
        var background: (Double, Double, Double) {
            switch self {
            case .prompt: return (0x1a / 255.0, 0x3a / 255.0, 0x6e / 255.0)  // #1a3a6e
            case .banner: return (0x8a / 255.0, 0x1c / 255.0, 0x7c / 255.0)  // #8a1c7c
            }
        }

        var fontSize: Double { self == .prompt ? 26 : 22 }
        var padding: Int { self == .prompt ? 48 : 18 }
    }

    private let layer: UnsafeMutablePointer<wlr_scene_tree>
    private let logger: Logger
    private var nodes: [Kind: UnsafeMutablePointer<wlr_scene_buffer>] = [:]
    private var reportedLoadFailure = false

    init(layer: UnsafeMutablePointer<wlr_scene_tree>, logger: Logger) {
        self.layer = layer
        self.logger = logger
    }

    /// Shows `text` as `kind` on `output` (the primary output's box),
    /// replacing what that kind showed before. False if it could not be
    /// drawn (cairo could not be loaded: logged once).
    @discardableResult
    func show(_ kind: Kind, text: String, output: Rect) -> Bool {
        hide(kind)
        guard cairoLoaded() else { return false }
        var textWidth: Int32 = 0
        var textHeight: Int32 = 0
        guard carrel_text_measure(text, kind.fontSize, &textWidth, &textHeight) else { return false }
        let wanted = Size(width: Int(textWidth) + 2 * kind.padding, height: Int(textHeight) + 2 * kind.padding)
        let rect = kind == .prompt ? AppLock.promptPlacement(output: output, size: wanted)
                                   : AppLock.bannerPlacement(output: output, size: wanted)
        var data: UnsafeMutableRawPointer?
        var stride: Int32 = 0
        guard let buffer = carrel_memory_buffer_create(Int32(rect.width), Int32(rect.height), &data, &stride),
              let data else { return false }
        let (r, g, b) = kind.background
        guard carrel_text_draw_box(data, Int32(rect.width), Int32(rect.height), stride, r, g, b, text, kind.fontSize) else {
            wlr_buffer_drop(buffer)
            return false
        }
        let node = WlrootsVersion.createBuffer(in: layer, buffer)
        // The scene node holds its own lock; ours goes.
        wlr_buffer_drop(buffer)
        guard let node else { return false }
        wlr_scene_node_set_position(&node.pointee.node, Int32(rect.x), Int32(rect.y))
        nodes[kind] = node
        return true
    }

    /// Whether cairo is there to draw with; the first failure is logged.
    private func cairoLoaded() -> Bool {
        var error: UnsafePointer<CChar>?
        if carrel_text_load(&error) { return true }
        if !reportedLoadFailure {
            reportedLoadFailure = true
            logger.error("overlay: cairo could not be loaded (\(error.map { String(cString: $0) } ?? "unknown error")); Carrel's prompts and banners cannot be drawn: install libcairo2")
        }
        return false
    }

    func hide(_ kind: Kind) {
        guard let node = nodes.removeValue(forKey: kind) else { return }
        wlr_scene_node_destroy(&node.pointee.node)
    }

    func isShowing(_ kind: Kind) -> Bool { nodes[kind] != nil }
}
