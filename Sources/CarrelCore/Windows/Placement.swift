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

/// Where a session that shows participants puts its windows: the exam keeps
/// the larger left part of the primary output and the participants share a
/// column on the right, one above the other. Side by side, because a
/// calculator or a dictionary is used while reading the question: neither
/// covers the other, and the column is reserved from the start so the exam
/// does not change size when a participant's window arrives.
public struct SessionLayout: Sendable, Equatable {
    /// The exam's area.
    public var exam: Rect
    /// One area per participant, in the order the configuration names them.
    public var participants: [Rect]

    /// The participants' column is a third of the output, at least 320
    /// pixels where the output allows it, at most half of it.
    public init(output: Rect, participantCount: Int) {
        guard participantCount > 0 else {
            exam = output
            participants = []
            return
        }
        let column = min(max(output.width / 3, min(320, output.width / 2)), output.width / 2)
        exam = Rect(x: output.x, y: output.y, width: output.width - column, height: output.height)
        let height = output.height / participantCount
        participants = (0..<participantCount).map { index in
            // The last one takes what integer division left over.
            let top = output.y + index * height
            let bottom = index == participantCount - 1 ? output.y + output.height : top + height
            return Rect(x: output.x + output.width - column, y: top, width: column, height: bottom - top)
        }
    }
}

/// Where a window's popups (menus, tooltips, completion lists) may go: inside
/// the area of the window they belong to, never merely on the output, so a
/// participant's menu cannot open over the exam nor the exam's over a
/// participant's column. The scene clips whatever a client draws anyway;
/// this is where the popup is asked to be.
public enum PopupBounds {
    /// The box popups of a toplevel are constrained to, in the coordinates
    /// the toplevel's popups are positioned in (its window's origin at
    /// `toplevelOrigin` in layout coordinates).
    ///
    /// - Parameters:
    ///   - area: the toplevel's area (`Desk.area(for:output:)`), layout coordinates.
    ///   - toplevelOrigin: where the toplevel's window sits in layout coordinates.
    public static func constraint(area: Rect, toplevelOrigin: Point) -> Rect {
        area.relative(to: toplevelOrigin)
    }
}
