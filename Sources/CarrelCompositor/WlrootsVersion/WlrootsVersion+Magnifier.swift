import CarrelCore
import CarrelShim

/// Drawing the magnifier into an output's frame. The pixel work and the
/// version differences (0.15 renders by hand into the output's buffer; 0.17+
/// post-process the scene's built state) live in the shim's output_magnifier.c.
extension WlrootsVersion {
    /// Whether `renderer` lets Carrel draw the magnifier: only the pixman
    /// renderer hands over the rendered pixels. With GLES2 it cannot.
    static func canDrawMagnifier(_ renderer: UnsafeMutablePointer<wlr_renderer>) -> Bool {
        carrel_magnifier_can_draw(renderer)
    }

    /// Renders the whole scene output, draws `magnifier` over it (showing
    /// `region` zoomed) and commits it.
    static func commitMagnified(_ sceneOutput: UnsafeMutablePointer<wlr_scene_output>, magnifier: Magnifier,
                                region: Rect) -> Bool {
        let filter: carrel_colour_filter
        switch magnifier.colourFilter {
        case .none: filter = CARREL_COLOUR_FILTER_NONE
        case .inverted: filter = CARREL_COLOUR_FILTER_INVERTED
        case .highContrast: filter = CARREL_COLOUR_FILTER_HIGH_CONTRAST
        }
        var view = carrel_magnifier_view(zoom: Int32(magnifier.zoom), region_x: Int32(region.x), region_y: Int32(region.y),
                                         region_width: Int32(region.width), region_height: Int32(region.height),
                                         filter: filter)
        return carrel_scene_output_commit_magnified(sceneOutput, &view)
    }
}
