import CarrelCore
import CarrelShim

/// The magnifier Carrel draws itself (`screen_magnifier`): Core decides its
/// zoom and filter; here it follows the pointer and the text cursor, and
/// every output repaints through it.
extension Server {
    /// What Core says to draw for `screen_magnifier`.
    var magnifier: Magnifier { desk.magnifier }

    /// Core's `.drawMagnifier` (the Desk holds the new state): from the next
    /// frame every output shows it.
    func drawMagnifier() {
        // Damaged whole both ways: turning it off must repaint what it drew.
        repaintOutputs()
    }

    /// The pointer is at (x, y) in layout coordinates: a zoomed view follows it
    /// when it moved.
    func magnifierPointerMoved(x: Double, y: Double) {
        if magnifierFocus.pointerMoved(to: Point(x: Int(x.rounded(.down)), y: Int(y.rounded(.down)))),
           magnifier.zoom > 1 { repaintOutputs() }
    }

    /// The focused text input reported its cursor (layout coordinates).
    func magnifierTextCursorReported(_ rectangle: Rect) {
        if magnifierFocus.textCursorReported(rectangle), magnifier.zoom > 1 { repaintOutputs() }
    }

    /// The region of `output` the magnifier shows, in output-local pixels;
    /// nil when it draws nothing.
    func magnifiedRegion(of output: UnsafeMutablePointer<wlr_output>) -> Rect? {
        guard magnifier.isDrawn else { return nil }
        let size = Size(width: Int(output.pointee.width), height: Int(output.pointee.height))
        let box = WlrootsVersion.layoutBox(outputLayout, output)
        let focus = magnifierFocus.point.map { Point(x: $0.x - Int(box?.x ?? 0), y: $0.y - Int(box?.y ?? 0)) }
        return magnifier.visibleRegion(around: focus, output: size)
    }
}
