/// Where the input method's candidate popup goes and how much it may draw:
/// a list of candidates under the text cursor, never a second screen. The
/// engine is third-party code; whatever size it commits, the scene draws at
/// most `clip`, inside the area of the window being typed into.
public struct CandidatePopupPlacement: Sendable, Equatable {
    /// The popup's top left, in layout coordinates.
    public var origin: Point
    /// The rectangle the popup may draw in (layout coordinates): at its
    /// origin, no larger than its size or the bound, inside the area.
    public var clip: Rect

    /// The largest share of the window's area a popup may take: half its
    /// width, a third of its height (a candidate list of ten rows at the
    /// sizes engines draw fits well within a third of a laptop screen).
    public static func maximumSize(in area: Rect) -> Size {
        Size(width: area.width / 2, height: area.height / 3)
    }

    /// Just under the cursor when it fits there, else just above it; moved
    /// left to stay in the area; never larger than `maximumSize(in:)`.
    /// Nil when the area is empty (nothing may be drawn).
    ///
    /// - Parameters:
    ///   - size: the size the popup's surface has (0 when not yet known).
    ///   - cursor: the text cursor rectangle, layout coordinates.
    ///   - area: the area of the window being typed into (`Desk.area(for:output:)`).
    public static func place(size: Size, cursor: Rect, area: Rect) -> CandidatePopupPlacement? {
        let bound = maximumSize(in: area)
        guard bound.width > 0, bound.height > 0 else { return nil }
        let width = min(max(size.width, 0), bound.width)
        let height = min(max(size.height, 0), bound.height)
        let x = min(max(cursor.x, area.x), area.x + area.width - width)
        let below = cursor.y + cursor.height
        let y = below + height <= area.y + area.height
            ? max(below, area.y)
            : max(min(cursor.y - height, area.y + area.height - height), area.y)
        return CandidatePopupPlacement(origin: Point(x: x, y: y),
                                       clip: Rect(x: x, y: y, width: bound.width, height: bound.height).clipped(to: area))
    }
}
