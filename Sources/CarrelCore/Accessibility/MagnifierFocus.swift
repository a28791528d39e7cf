/// Where the magnifier looks, in layout coordinates: wherever the person's
/// attention moved last, the pointer or the text cursor of the focused text
/// input (as text input reports it, after typing moved it).
public struct MagnifierFocus: Sendable, Hashable {
    /// The point the visible region is centred on; nil before anything moved.
    public private(set) var point: Point?
    /// The text cursor last reported: clients repeat it with every text
    /// input commit, and only a move should take the view from the pointer.
    private var textCursor: Rect?
    /// The pointer's last position: the compositor reports it again when
    /// windows change under a still pointer, and only a move should take the
    /// view from the text cursor.
    private var pointer: Point?

    public init(point: Point? = nil) { self.point = point }

    /// The pointer is at `point`: when it moved, the magnifier follows it.
    /// Returns whether the focus moved.
    @discardableResult
    public mutating func pointerMoved(to point: Point) -> Bool {
        guard point != pointer else { return false }
        pointer = point
        self.point = point
        return true
    }

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
