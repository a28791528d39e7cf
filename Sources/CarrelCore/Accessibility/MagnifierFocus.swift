/// Where the magnifier looks, in layout coordinates: wherever the person's
/// attention moved last, the pointer or the text cursor of the focused text
/// input (as text input reports it, after typing moved it).
public struct MagnifierFocus: Sendable, Hashable {
    /// The point the visible region is centred on; nil before anything moved.
    public private(set) var point: Point?
    /// The text cursor last reported: clients repeat it with every text
    /// input commit, and only a move should take the view from the pointer.
    private var textCursor: Rect?

    public init(point: Point? = nil) { self.point = point }

    /// The pointer moved: the magnifier follows it.
    public mutating func pointerMoved(to point: Point) { self.point = point }

    /// The focused text input reported its cursor rectangle (layout
    /// coordinates): when it moved, the magnifier follows its centre, so
    /// typed text stays in view. Returns whether the focus moved.
    @discardableResult
    public mutating func textCursorReported(_ rectangle: Rect) -> Bool {
        guard rectangle != textCursor else { return false }
        textCursor = rectangle
        point = Point(x: rectangle.x + rectangle.width / 2, y: rectangle.y + rectangle.height / 2)
        return true
    }
}
