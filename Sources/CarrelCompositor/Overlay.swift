import CCairoLib
import CarrelCore
import CarrelShim

/// What Carrel draws itself, above every client and the curtains: the
/// confirmation prompt of an app-requested lock and the banner at `began`.
///
/// Each is one line of text on a flat colour, drawn once with cairo into a
/// buffer in plain memory (the shim's `carrel_memory_buffer_create`) and shown
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
    private var nodes: [Kind: UnsafeMutablePointer<wlr_scene_buffer>] = [:]

    init(layer: UnsafeMutablePointer<wlr_scene_tree>) {
        self.layer = layer
    }

    /// Shows `text` as `kind` on `output` (the primary output's box),
    /// replacing what that kind showed before. False if it could not be drawn.
    @discardableResult
    func show(_ kind: Kind, text: String, output: Rect) -> Bool {
        hide(kind)
        let textSize = Self.measure(text, size: kind.fontSize)
        let wanted = Size(width: textSize.width + 2 * kind.padding, height: textSize.height + 2 * kind.padding)
        let rect = kind == .prompt ? AppLock.promptPlacement(output: output, size: wanted)
                                   : AppLock.bannerPlacement(output: output, size: wanted)
        var data: UnsafeMutableRawPointer?
        var stride: Int32 = 0
        guard let buffer = carrel_memory_buffer_create(Int32(rect.width), Int32(rect.height), &data, &stride),
              let data else { return false }
        Self.draw(text, kind: kind, into: data, width: rect.width, height: rect.height, stride: Int(stride))
        let node = WlrootsVersion.createBuffer(in: layer, buffer)
        // The scene node holds its own lock; ours goes.
        wlr_buffer_drop(buffer)
        guard let node else { return false }
        wlr_scene_node_set_position(&node.pointee.node, Int32(rect.x), Int32(rect.y))
        nodes[kind] = node
        return true
    }

    func hide(_ kind: Kind) {
        guard let node = nodes.removeValue(forKey: kind) else { return }
        wlr_scene_node_destroy(&node.pointee.node)
    }

    func isShowing(_ kind: Kind) -> Bool { nodes[kind] != nil }

    /// The text's advance width and line height, in pixels.
    private static func measure(_ text: String, size: Double) -> Size {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1) else { return Size(width: 0, height: 0) }
        defer { cairo_surface_destroy(surface) }
        let cairo = cairo_create(surface)!
        defer { cairo_destroy(cairo) }
        setFont(cairo, size: size)
        var text_ = cairo_text_extents_t()
        cairo_text_extents(cairo, text, &text_)
        var font = cairo_font_extents_t()
        cairo_font_extents(cairo, &font)
        return Size(width: Int(text_.x_advance.rounded(.up)), height: Int((font.ascent + font.descent).rounded(.up)))
    }

    private static func draw(_ text: String, kind: Kind, into data: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int) {
        guard let surface = cairo_image_surface_create_for_data(data.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_ARGB32,
                                                                Int32(width), Int32(height), Int32(stride)) else { return }
        defer { cairo_surface_destroy(surface) }
        let cairo = cairo_create(surface)!
        defer { cairo_destroy(cairo) }
        let (r, g, b) = kind.background
        cairo_set_source_rgb(cairo, r, g, b)
        cairo_paint(cairo)
        // A white frame, so the box stands apart from whatever is beneath.
        cairo_set_source_rgb(cairo, 1, 1, 1)
        cairo_set_line_width(cairo, 2)
        cairo_rectangle(cairo, 1, 1, Double(width - 2), Double(height - 2))
        cairo_stroke(cairo)
        setFont(cairo, size: kind.fontSize)
        var font = cairo_font_extents_t()
        cairo_font_extents(cairo, &font)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cairo, text, &extents)
        let x = (Double(width) - extents.x_advance) / 2
        let y = (Double(height) - (font.ascent + font.descent)) / 2 + font.ascent
        cairo_move_to(cairo, x, y)
        cairo_show_text(cairo, text)
        cairo_surface_flush(surface)
    }

    private static func setFont(_ cairo: OpaquePointer, size: Double) {
        cairo_select_font_face(cairo, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cairo, size)
    }
}
