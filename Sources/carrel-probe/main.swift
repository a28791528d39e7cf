// carrel-probe: a red-team Wayland client. It tries, one after the
// other, what a cheating tool would try against an exam compositor, and
// prints one JSON verdict per attack: facts about the compositor it reached,
// judged by no expectation of its own.
//
// Everything runs on the main thread inside bounded event pumps: no Swift
// concurrency, so the C pointers never cross threads.

#if canImport(Glibc)
import Glibc
#endif
import CarrelClientShim

let options: ProbeOptions
do {
    options = try ProbeOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch ProbeOptions.ParseError.help {
    print(ProbeOptions.usage)
    exit(0)
} catch ProbeOptions.ParseError.list {
    for attack in Attack.allCases { print("\(attack.rawValue)\t\(attack.summary)") }
    exit(0)
} catch {
    if case ProbeOptions.ParseError.invalid(let message) = error { printError(message) }
    fputs(ProbeOptions.usage + "\n", stderr)
    exit(2)
}

// A paste reader that hangs up must not kill the probe.
signal(SIGPIPE, SIG_IGN)
// libwayland's messages (the text of a protocol error) become evidence in
// the verdicts instead of noise on stderr.
carrel_client_log_capture()

let display = getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "wayland-0"
let probe = Probe(options: options)
var verdicts: [Verdict] = []
do {
    _ = try probe.liveSession()
    for attack in options.attacks {
        let verdict = try probe.run(attack)
        verdicts.append(verdict)
        emit(verdict.json)
    }
} catch {
    printError("\(error)")
    emit(.object([("error", .string("\(error)")), ("display", .string(display))]))
    exit(2)
}

let succeeded = verdicts.filter(\.succeeded).map(\.attack.rawValue)
let blocked = verdicts.filter { !$0.succeeded }.map(\.attack.rawValue)
emit(.object([
    ("summary", .string(succeeded.isEmpty ? "all \(verdicts.count) attacks blocked"
                        : "\(succeeded.count) of \(verdicts.count) attacks succeeded")),
    ("role", .string(options.role.rawValue)),
    ("display", .string(display)),
    ("blocked", .array(blocked.map(JSON.string))),
    ("succeeded", .array(succeeded.map(JSON.string))),
]))
probe.hold(options.hold)
exit(succeeded.isEmpty ? 0 : 1)
