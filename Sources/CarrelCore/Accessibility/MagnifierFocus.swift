/// Where the magnifier looks, in layout coordinates: wherever the person's
/// attention moved last, the pointer or the text cursor of the focused text
/// input (as text input reports it, after typing moved it).
public struct MagnifierFocus: Sendable, Hashable {
    /// The point the visible region is centred on; nil before anything moved.
    public private(set) var point: Point?

    public init(point: Point? = nil) { self.point = point }

    /// The pointer moved: the magnifier follows it.
    public mutating func pointerMoved(to point: Point) { self.point = point }

    /// The focused text input reported its cursor rectangle (layout
    /// coordinates): the magnifier follows its centre, so typed text stays in view.
    public mutating func textCursorMoved(to rectangle: Rect) {
        point = Point(x: rectangle.x + rectangle.width / 2, y: rectangle.y + rectangle.height / 2)
    }
}
