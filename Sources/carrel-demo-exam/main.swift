// carrel-demo-exam: a demo exam app for Carrel. One window, drawn with cairo
// into wl_shm buffers: start screen, "locking…", questions shown only while
// the assessment session holds, a paused screen on interruption, a result or
// an error. Driven by keyboard and pointer, by --auto, or by --script.
//
// Threading: everything runs on the main thread. The loop polls the Wayland
// fd (and stdin for `--script -`) and dispatches there, so AssessmentKit's
// callbacks, ExamFlow and drawing all run inside wl_display_dispatch_pending
// on this one thread; no Swift concurrency touches the C pointers.

import AssessmentKit
import CarrelClientShim
import WaylandClientSupport
import DemoExamLogic
#if canImport(Glibc)
import Glibc
#endif

let options: DemoExamOptions
do {
    options = try DemoExamOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch DemoExamOptions.ParseError.helpRequested {
    print(DemoExamOptions.usage)
    exit(0)
} catch {
    if case DemoExamOptions.ParseError.invalid(let message) = error { printError(message) }
    fputs(DemoExamOptions.usage + "\n", stderr)
    exit(2)
}

/// The script's commands known up front, and whether more come on stdin.
var commands: [ExamScriptCommand] = []
var scriptOnStdin = false
do {
    switch options.mode {
    case .interactive:
        break
    case .auto:
        commands = ExamScriptCommand.auto(questions: Question.demo, hold: options.hold)
    case .script(path: "-"):
        scriptOnStdin = true
    case .script(let path):
        commands = try ExamScriptCommand.parseScript(try readFile(path))
    }
} catch {
    printError("\(error)")
    exit(2)
}

func readFile(_ path: String) throws -> String {
    guard let file = fopen(path, "r") else { throw DemoError("cannot read the script \(path): \(errnoText())") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count == 0 { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

func fail(_ message: String) -> Never {
    printError(message)
    fflush(nil)
    exit(1)
}

let display: Display
do {
    display = try Display()
} catch {
    fail("\(error)")
}
let window = ExamWindow(display: display, title: "Carrel demo exam")

if options.calculator != nil {
    // Apple's class property; before a lockdown is connected it asks the
    // compositor at WAYLAND_DISPLAY which protocol version it offers.
    let supported = AssessmentSession.supportsMultipleParticipants
    ExamFlow.printLine(ExamLog.line("note participants \(supported ? "supported" : "not supported") by the compositor"))
}
let lockdown = WaylandAssessmentManager.connectDefault(display: display.display, surface: window.surface)
if let unavailable = lockdown as? UnavailableAssessmentManager {
    // The flow's failure path shows and prints it when the exam is begun.
    printError("assessment sessions are not available: \(unavailable.error)")
}

let flow = ExamFlow(manager: lockdown, configuration: options.configuration, calculator: options.calculator,
                    endsSessionOnInterruption: options.mode == .auto)
if let url = options.submitURL {
    flow.handIn = { session, answers, then in
        handIn(session: session, answers: answers, url: url, then: then)
    }
}

/// `--submit-url`: nonce from the server, a signed statement from Carrel
/// carrying it, then the answers with the statement to the server. The
/// session ends afterwards whatever happened; a failure is printed.
func handIn(session: AssessmentSession, answers: [Int: String], url: SubmissionURL, then: @escaping () -> Void) {
    let nonce: [UInt8]
    switch HTTPExchange.perform("GET", url: url, path: url.noncePath) {
    case .success((200, let body)):
        guard let parsed = ExamSubmission.nonce(fromResponse: body) else {
            ExamFlow.printLine("carrel-demo-exam: submit_failed the nonce from \(url.noncePath) is not hex")
            return then()
        }
        nonce = parsed
    case .success((let status, _)):
        ExamFlow.printLine("carrel-demo-exam: submit_failed GET \(url.noncePath) answered \(status)")
        return then()
    case .failure(let error):
        ExamFlow.printLine("carrel-demo-exam: submit_failed \(error)")
        return then()
    }
    session.requestAttestation(nonce: nonce) { result in
        let body: String
        switch result {
        case .success(let attestation):
            body = ExamSubmission.json(answers: answers, attestation: attestation, error: nil)
        case .failure(let error):
            ExamFlow.printLine("carrel-demo-exam: attestation_failed \(error)")
            body = ExamSubmission.json(answers: answers, attestation: nil, error: error)
        }
        switch HTTPExchange.perform("POST", url: url, path: url.path, body: body) {
        case .success((let status, _)): ExamFlow.printLine("carrel-demo-exam: submitted \(status)")
        case .failure(let error): ExamFlow.printLine("carrel-demo-exam: submit_failed \(error)")
        }
        then()
    }
}

var layout = ExamLayout(windowWidth: Double(window.size.width), windowHeight: Double(window.size.height))
let renderer = ExamRenderer()
var runner: ExamScriptRunner?

let answerInput = display.textInputManager.flatMap { manager in
    display.seat.map { AnswerTextInput(manager: manager, seat: $0) }
}
answerInput?.onUpdate = { update in flow.editCurrentField { $0.apply(update) } }

/// Tells the input method about the answer field shown, or that none is.
func showFieldToInputMethod() {
    guard let answerInput else { return }
    guard flow.isContentVisible, let field = flow.currentField else {
        answerInput.show(nil)
        return
    }
    answerInput.show(TextInputFieldState(field: field, contentType: TextInputContentType(for: flow.configuration),
                                         cursorRectangle: renderer.caret.map { layout.windowRect($0) }))
}

flow.onChange = {
    window.setNeedsDisplay()
    showFieldToInputMethod()
}
window.paint = { cairo, width, height in
    renderer.paint(flow, into: cairo, width: width, height: height)
    // The caret moved with what was drawn.
    showFieldToInputMethod()
}
window.onResize = { width, height in
    layout = ExamLayout(windowWidth: width, windowHeight: height)
    runner?.layout = layout
}
window.onClose = { flow.perform(.quit) }
let seat = display.seat.map { SeatInput(seat: $0) }
seat?.onInput = { input in flow.handle(input, layout: layout) }

/// The connection is gone: sessions hear it (their events are printed), then we exit.
func connectionFailed(_ what: String) -> Never {
    let code = wl_display_get_error(display.display)
    (lockdown as? WaylandAssessmentManager)?.connectionDidFail()
    fail("lost the connection to the compositor while \(what): \(errnoText(code == 0 ? errno : code))")
}

// A session can only begin for a mapped window: show the start screen first.
while !window.isMapped {
    if wl_display_dispatch(display.display) < 0 { connectionFailed("showing the window") }
}

if options.mode != .interactive {
    runner = ExamScriptRunner(flow: flow, commands: commands, inputFinished: !scriptOnStdin, layout: layout,
                              errorOutput: { printError($0) })
}

/// Reads what stdin has, appending whole lines to the script; false at end of input.
var stdinPending: [UInt8] = []
func readScriptInput() -> Bool {
    var chunk = [UInt8](repeating: 0, count: 4096)
    let count = read(STDIN_FILENO, &chunk, chunk.count)
    if count < 0 && (errno == EINTR || errno == EAGAIN) { return true }
    if count > 0 { stdinPending += chunk[..<count] }
    while let newline = stdinPending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: stdinPending[..<newline], as: UTF8.self)
        stdinPending.removeSubrange(...newline)
        parseScriptLine(line)
    }
    if count <= 0 {
        if !stdinPending.isEmpty { parseScriptLine(String(decoding: stdinPending, as: UTF8.self)) }
        stdinPending = []
        runner?.finishInput()
        return false
    }
    return true
}

func parseScriptLine(_ line: String) {
    do {
        if let command = try ExamScriptCommand.parse(line) { runner?.append([command]) }
    } catch {
        printError("\(error)")
        exit(2)
    }
}

/// Waits for Wayland events (and stdin) until `deadline`, then dispatches them.
func dispatchEvents(until deadline: Double?) {
    let wayland = display.display
    // libwayland's poll protocol: announce the read, flush, poll, then read or cancel.
    while wl_display_prepare_read(wayland) != 0 {
        if wl_display_dispatch_pending(wayland) < 0 { connectionFailed("dispatching events") }
    }
    if wl_display_flush(wayland) < 0 && errno != EAGAIN {
        wl_display_cancel_read(wayland)
        connectionFailed("sending requests")
    }
    var fds = [pollfd(fd: wl_display_get_fd(wayland), events: Int16(POLLIN), revents: 0)]
    if scriptOnStdin { fds.append(pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)) }
    let timeout = deadline.map { Int32(max(0, min(($0 - MonotonicClock.seconds()) * 1000, 60_000)).rounded(.up)) } ?? -1
    if poll(&fds, nfds_t(fds.count), timeout) < 0 && errno != EINTR {
        wl_display_cancel_read(wayland)
        fail("poll failed: \(errnoText())")
    }
    if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
        if wl_display_read_events(wayland) < 0 { connectionFailed("reading events") }
    } else {
        wl_display_cancel_read(wayland)
    }
    if wl_display_dispatch_pending(wayland) < 0 { connectionFailed("dispatching events") }
    if scriptOnStdin, fds.count > 1, fds[1].revents != 0 {
        scriptOnStdin = readScriptInput()
    }
}

while true {
    var deadline: Double?
    if let runner {
        switch runner.advance(now: MonotonicClock.seconds()) {
        case .finished(let status):
            fflush(nil)
            exit(status)
        case .wait(let until):
            deadline = until
        case .needsInput:
            deadline = nil
        }
    } else if flow.wantsToQuit {
        exit(0)
    }
    dispatchEvents(until: deadline)
}
