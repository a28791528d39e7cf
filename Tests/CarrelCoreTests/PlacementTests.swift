import CarrelCore
import Testing

/// Kiosk placement: main windows fill the output, dialogs keep their size,
/// centred over their parent and kept whole on the output.
@Suite("Toplevel placement")
struct PlacementTests {
    /// Outputs at the origin and elsewhere in the layout, including negative
    /// coordinates (an output left of or above the primary one).
    static let outputs = [
        Rect(x: 0, y: 0, width: 1920, height: 1080),
        Rect(x: 1920, y: 0, width: 1280, height: 720),
        Rect(x: -1280, y: -200, width: 1280, height: 1024),
    ]

    @Test("A parentless toplevel fills the output", arguments: outputs, [
        Size(width: 0, height: 0), Size(width: 300, height: 200), Size(width: 4000, height: 3000),
    ])
    func parentlessIsFullscreen(output: Rect, requested: Size) {
        #expect(Placement.toplevel(output: output, parent: nil, requested: requested) == .fullscreen(output))
    }

    struct DialogCase: CustomTestStringConvertible, Sendable {
        var name: String
        var output: Rect
        var parent: Rect
        var requested: Size
        var expected: Rect
        var testDescription: String { name }
    }

    static let dialogCases: [DialogCase] = [
        DialogCase(name: "centred over a fullscreen parent",
                   output: Rect(x: 0, y: 0, width: 1920, height: 1080),
                   parent: Rect(x: 0, y: 0, width: 1920, height: 1080),
                   requested: Size(width: 300, height: 200),
                   expected: Rect(x: 810, y: 440, width: 300, height: 200)),
        DialogCase(name: "centred over a parent on an output at a non-zero origin",
                   output: Rect(x: 1920, y: 0, width: 1280, height: 720),
                   parent: Rect(x: 1920, y: 0, width: 1280, height: 720),
                   requested: Size(width: 300, height: 200),
                   expected: Rect(x: 2410, y: 260, width: 300, height: 200)),
        DialogCase(name: "centred over a smaller parent, not the output",
                   output: Rect(x: 0, y: 0, width: 1920, height: 1080),
                   parent: Rect(x: 100, y: 100, width: 800, height: 600),
                   requested: Size(width: 200, height: 100),
                   expected: Rect(x: 400, y: 350, width: 200, height: 100)),
        DialogCase(name: "no size requested: half the output",
                   output: Rect(x: 0, y: 0, width: 1920, height: 1080),
                   parent: Rect(x: 0, y: 0, width: 1920, height: 1080),
                   requested: Size(width: 0, height: 0),
                   expected: Rect(x: 480, y: 270, width: 960, height: 540)),
        DialogCase(name: "larger than the output: clamped to it",
                   output: Rect(x: 0, y: 0, width: 1280, height: 720),
                   parent: Rect(x: 0, y: 0, width: 1280, height: 720),
                   requested: Size(width: 2000, height: 1000),
                   expected: Rect(x: 0, y: 0, width: 1280, height: 720)),
        DialogCase(name: "larger than an output at a non-zero origin",
                   output: Rect(x: -1280, y: -200, width: 1280, height: 1024),
                   parent: Rect(x: -1280, y: -200, width: 1280, height: 1024),
                   requested: Size(width: 1500, height: 1500),
                   expected: Rect(x: -1280, y: -200, width: 1280, height: 1024)),
        DialogCase(name: "wider only: width clamped, height kept and centred",
                   output: Rect(x: 0, y: 0, width: 1280, height: 720),
                   parent: Rect(x: 0, y: 0, width: 1280, height: 720),
                   requested: Size(width: 3000, height: 200),
                   expected: Rect(x: 0, y: 260, width: 1280, height: 200)),
        DialogCase(name: "parent at the bottom-right edge: pushed back inside",
                   output: Rect(x: 0, y: 0, width: 1920, height: 1080),
                   parent: Rect(x: 1720, y: 880, width: 200, height: 200),
                   requested: Size(width: 400, height: 300),
                   expected: Rect(x: 1520, y: 780, width: 400, height: 300)),
        DialogCase(name: "parent at the top-left edge of an offset output",
                   output: Rect(x: 1920, y: 0, width: 1280, height: 720),
                   parent: Rect(x: 1920, y: 0, width: 100, height: 100),
                   requested: Size(width: 300, height: 200),
                   expected: Rect(x: 1920, y: 0, width: 300, height: 200)),
        DialogCase(name: "parent partly off the output",
                   output: Rect(x: 0, y: 0, width: 1920, height: 1080),
                   parent: Rect(x: -300, y: 1000, width: 400, height: 400),
                   requested: Size(width: 300, height: 200),
                   expected: Rect(x: 0, y: 880, width: 300, height: 200)),
    ]

    @Test("A dialog is placed over its parent", arguments: dialogCases)
    func dialog(_ c: DialogCase) {
        let placement = Placement.toplevel(output: c.output, parent: c.parent, requested: c.requested)
        #expect(placement == .floating(c.expected))
        #expect(placement.rect == c.expected)
    }

    @Test("A dialog always lies wholly on the output, no bigger than asked")
    func dialogStaysOnOutput() {
        let output = Rect(x: 1920, y: -100, width: 1280, height: 720)
        let offsets = [-2000, -500, -1, 0, 1, 300, 1279, 2000]
        let sizes = [0, 1, 199, 640, 1279, 1280, 1281, 5000]
        for dx in offsets {
            for dy in offsets {
                for width in sizes {
                    for height in sizes {
                        let parent = Rect(x: output.x + dx, y: output.y + dy, width: 400, height: 300)
                        let requested = Size(width: width, height: height)
                        let rect = Placement.toplevel(output: output, parent: parent, requested: requested).rect
                        #expect(rect.x >= output.x && rect.x + rect.width <= output.x + output.width,
                                "x out of output for parent \(parent), requested \(requested): \(rect)")
                        #expect(rect.y >= output.y && rect.y + rect.height <= output.y + output.height,
                                "y out of output for parent \(parent), requested \(requested): \(rect)")
                        if width > 0 { #expect(rect.width == min(width, output.width)) }
                        if height > 0 { #expect(rect.height == min(height, output.height)) }
                    }
                }
            }
        }
    }
}
