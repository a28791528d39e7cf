/// Kiosk placement: where a toplevel goes, decided before it is shown.
public enum Placement: Sendable, Equatable {
    /// Fill the output (the app's main windows).
    case fullscreen(Rect)
    /// Keep the client's size and put it at this position (dialogs).
    case floating(Rect)

    public var rect: Rect {
        switch self {
        case .fullscreen(let r), .floating(let r): return r
        }
    }

    /// Parentless toplevels fill the primary output. A toplevel with a parent
    /// (a dialog) keeps its own size, clamped to the output, centred over its
    /// parent and kept fully on the output.
    ///
    /// - Parameters:
    ///   - output: the primary output's box in layout coordinates.
    ///   - parent: the parent's box, when the toplevel has one.
    ///   - requested: the size the client asked for (0 means "you choose").
    public static func toplevel(output: Rect, parent: Rect?, requested: Size) -> Placement {
        guard let parent else { return .fullscreen(output) }
        var width = requested.width > 0 ? requested.width : output.width / 2
        var height = requested.height > 0 ? requested.height : output.height / 2
        width = min(width, output.width)
        height = min(height, output.height)
        var x = parent.x + (parent.width - width) / 2
        var y = parent.y + (parent.height - height) / 2
        x = min(max(x, output.x), output.x + output.width - width)
        y = min(max(y, output.y), output.y + output.height - height)
        return .floating(Rect(x: x, y: y, width: width, height: height))
    }
}
