/// What Carrel draws over the outputs for the `screen_magnifier` feature:
/// a zoom of the output around a point, and a colour filter over the whole
/// image. Off (zoom 1, no filter) outside a session that allows the
/// feature; the person at the machine changes it with the policy's
/// `[magnifier]` keys.
///
/// ```swift
/// var magnifier = Magnifier()
/// magnifier.zoomIn()                 // 2×
/// magnifier.visibleRegion(around: Point(x: 400, y: 300), output: Size(width: 800, height: 600))
///                                    // 400x300+200+150: (400, 300) stays where it is
/// ```
public struct Magnifier: Sendable, Hashable, CustomStringConvertible {
    /// The zoom factors the keys step through. Whole numbers, so every
    /// output pixel is exactly one source pixel repeated: text stays crisp
    /// and nothing is interpolated.
    public static let zoomLevels = [1, 2, 3, 4, 6, 8]

    /// The current zoom factor, one of `zoomLevels`.
    public private(set) var zoom = 1
    /// The colour filter over the output image.
    public private(set) var colourFilter = ColourFilter.none

    public init() {}

    /// Nothing to draw: the output is rendered as it is.
    public static let off = Magnifier()

    /// Whether Carrel must post-process the output image.
    public var isDrawn: Bool { zoom > 1 || colourFilter != .none }

    /// One zoom level up; stays at the highest. Returns whether it changed.
    @discardableResult
    public mutating func zoomIn() -> Bool {
        guard let next = Self.zoomLevels.first(where: { $0 > zoom }) else { return false }
        zoom = next
        return true
    }

    /// One zoom level down; stays at 1 (no zoom). Returns whether it changed.
    @discardableResult
    public mutating func zoomOut() -> Bool {
        guard let previous = Self.zoomLevels.last(where: { $0 < zoom }) else { return false }
        zoom = previous
        return true
    }

    /// Back to no zoom; the colour filter stays. Returns whether it changed.
    @discardableResult
    public mutating func zoomOff() -> Bool {
        defer { zoom = 1 }
        return zoom != 1
    }

    /// The next colour filter in `ColourFilter.allCases`, after the last none.
    public mutating func nextColourFilter() {
        colourFilter = colourFilter.next
    }

    /// The part of an output of `output` size that fills it at this zoom,
    /// in output-local pixels: `output / zoom` in size, placed so that
    /// `focus` (the pointer or the text cursor) shows where it is on the
    /// output: while the view follows the pointer, the pointer lies over what
    /// it points at, so a click lands on what the person sees under it. The
    /// region follows the focus to every edge and never shows anything
    /// outside the output; with no focus yet it is the output's centre.
    public func visibleRegion(around focus: Point?, output: Size) -> Rect {
        let focus = focus ?? Point(x: output.width / 2, y: output.height / 2)
        let width = max(1, (output.width + zoom - 1) / zoom)
        let height = max(1, (output.height + zoom - 1) / zoom)
        let x = Self.clamp(focus.x, 0, output.width), y = Self.clamp(focus.y, 0, output.height)
        // focus = origin + (focus / zoom): the origin moves (1 − 1/zoom) as far as the focus.
        return Rect(x: Self.clamp(x - x / zoom, 0, output.width - width),
                    y: Self.clamp(y - y / zoom, 0, output.height - height),
                    width: width, height: height)
    }

    private static func clamp(_ value: Int, _ lower: Int, _ upper: Int) -> Int {
        max(lower, min(value, max(lower, upper)))
    }

    public var description: String { isDrawn ? "zoom \(zoom)×, colour filter \(colourFilter)" : "off" }
}
