// carrel-paint: a small Wayland client for Carrel's tests and benchmarks. It
// shows a window of one colour (or an animated one), optionally with a child
// dialog, and can print timestamps of its start-up milestones.
//
// Everything runs on the main thread inside wl_display_dispatch: no Swift
// concurrency, so the C pointers never cross threads.

import WaylandClientSupport
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

/// Globals that would let a client capture the screen; Carrel offers none.
let captureInterfaces: Set<String> = [
    "zwlr_screencopy_manager_v1", "zwlr_export_dmabuf_manager_v1",
    "ext_image_copy_capture_manager_v1", "ext_output_image_capture_source_manager_v1",
    "ext_foreign_toplevel_image_capture_source_manager_v1", "hyprland_toplevel_export_manager_v1",
]

do {
    let wantsSession = options.assessCycles != nil || options.holdSession
    let connection = try Connection(bindAssessment: wantsSession, bindSeat: options.printKeys,
                                    assessmentVersion: options.attest ? 3 : 1,
                                    onConnected: { milestones.reach(.connected) })
    let keyPrinter = connection.seat.map(KeyPrinter.init)

    if options.tryCapture {
        // Nothing to bind unless it is announced: binding a name the registry
        // never announced is a protocol error, not an attempt that can succeed.
        let offered = connection.offeredInterfaces.filter(captureInterfaces.contains)
        print(offered.isEmpty ? "capture none" : offered.map { "capture offered \($0)" }.joined(separator: "\n"))
        fflush(stdout)
    }
    if wantsSession && connection.assessmentManager == nil {
        throw PaintError("the compositor does not offer carrel_assessment_manager_v1 to this client")
    }

    let frameRequests: PaintWindow.FrameRequests
    if options.animate {
        frameRequests = .everyAnimated
    } else if options.exitAfterFrames != nil || options.printFrames {
        frameRequests = .every
    } else {
        // A session begins once the first frame is done, so it needs that frame timed.
        frameRequests = options.milestones || wantsSession ? .firstOnly : .never
    }
    let window = PaintWindow(
        connection: connection,
        look: .init(title: "carrel-paint", color: options.color,
                    defaultSize: options.size, fixedSize: options.fixedSize, checker: options.checker),
        frameRequests: frameRequests,
        milestones: milestones)
    var dialog: PaintWindow?
    var assessment: AssessmentRunner?
    if wantsSession, let manager = connection.assessmentManager {
        let runner = AssessmentRunner(connection: connection, manager: manager, surface: window.surface,
                                      plan: options.assessCycles.map { .cycles($0) } ?? .hold, attest: options.attest)
        if options.assessCycles != nil {
            runner.onFinished = { running = false }
        }
        runner.allowMagnifier = options.allowMagnifier
        assessment = runner
    }

    window.onClose = { running = false }
    window.onFrameDone = { count in
        if options.printFrames {
            print("frame \(count) \(MonotonicClock.nanoseconds())")
            fflush(stdout)
        }
        if count == 1 { assessment?.start() }
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

    if let interval = options.commitIntervalMs {
        var commits = 0
        try connection.dispatch(while: { running }, every: UInt64(interval) * 1_000_000) {
            window.commitUnthrottledFrame()
            commits += 1
            if let every = options.raiseEvery, commits % every == 0 { window.toggleFullscreen() }
        }
    } else if let endAfterMs = options.endAfterMs {
        try connection.dispatch(while: { running }, every: 20_000_000) {
            if let since = assessment?.heldSince, MonotonicClock.nanoseconds() >= since + UInt64(endAfterMs) * 1_000_000 {
                assessment?.endHeld()
            }
        }
    } else {
        try connection.dispatch(while: { running })
    }
    withExtendedLifetime((window, dialog, assessment, keyPrinter)) {}
} catch {
    printError("\(error)")
    exit(1)
}
exit(0)
