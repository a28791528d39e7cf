// carrel-paint: a small Wayland client for Carrel's tests and benchmarks. It
// shows a window of one colour (or an animated one), optionally with a child
// dialog, and can print timestamps of its start-up milestones.
//
// Everything runs on the main thread inside wl_display_dispatch: no Swift
// concurrency, so the C pointers never cross threads.

#if canImport(Glibc)
import Glibc
#endif

let options: PaintOptions
do {
    options = try PaintOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch PaintOptions.ParseError.helpRequested {
    print(PaintOptions.usage)
    exit(0)
} catch {
    if case PaintOptions.ParseError.invalid(let message) = error { printError(message) }
    fputs(PaintOptions.usage + "\n", stderr)
    exit(2)
}

let milestones = MilestoneLog(enabled: options.milestones)
var running = true

do {
    let connection = try Connection(onConnected: { milestones.reach(.connected) })

    let frameRequests: PaintWindow.FrameRequests
    if options.animate {
        frameRequests = .everyAnimated
    } else if options.exitAfterFrames != nil {
        frameRequests = .every
    } else {
        frameRequests = options.milestones ? .firstOnly : .never
    }
    let window = PaintWindow(
        connection: connection,
        look: .init(title: "carrel-paint", color: options.color,
                    defaultSize: options.size, fixedSize: options.fixedSize),
        frameRequests: frameRequests,
        milestones: milestones)
    var dialog: PaintWindow?

    window.onClose = { running = false }
    window.onFrameDone = { count in
        if let limit = options.exitAfterFrames, count >= limit { running = false }
    }
    if options.parent {
        // A parent should be mapped before a child names it, so the dialog
        // waits for the window's first buffer.
        window.onFirstCommit = { [unowned window] in
            let child = PaintWindow(
                connection: connection,
                look: .init(title: "carrel-paint dialog", color: options.dialogColor,
                            defaultSize: PixelSize(width: 300, height: 200)),
                frameRequests: .never,
                parent: window)
            child.onClose = { dialog = nil }
            dialog = child
        }
    }

    try connection.dispatch(while: { running })
    withExtendedLifetime((window, dialog)) {}
} catch {
    printError("\(error)")
    exit(1)
}
exit(0)
