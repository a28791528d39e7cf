/// A size in layout pixels.
public struct Size: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)" }
}

/// A rectangle in layout coordinates.
public struct Rect: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public var size: Size { Size(width: width, height: height) }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    /// Whether every pixel of `other` lies in this rectangle.
    public func contains(_ other: Rect) -> Bool {
        other.x >= x && other.y >= y && other.x + other.width <= x + width && other.y + other.height <= y + height
    }

    /// The part of this rectangle inside `other` (empty, at this origin, when none).
    public func clipped(to other: Rect) -> Rect {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
        guard right > left, bottom > top else { return Rect(x: x, y: y, width: 0, height: 0) }
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The same rectangle seen from `origin` (its coordinates minus the origin's).
    public func relative(to origin: Point) -> Rect {
        Rect(x: x - origin.x, y: y - origin.y, width: width, height: height)
    }
}

/// A point in layout (or output-local) pixels.
public struct Point: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public init(x: Int, y: Int) { self.x = x; self.y = y }
    public var description: String { "(\(x), \(y))" }
}
