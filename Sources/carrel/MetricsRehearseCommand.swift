import ArgumentParser
import CarrelCompositor
import Logging

/// `carrel metrics-rehearse DIR`: a room's metrics files from a script, for
/// trying node-exporters, Prometheus and the alert rules at scale.
struct MetricsRehearseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics-rehearse",
        abstract: "Writes one carrel.prom per seat (DIR/SEAT/carrel.prom) from a script of transitions on stdin, until SIGTERM.",
        discussion: """
            Each line is SEAT STEP: begin, began SECONDS (the time limit, 0 for none), blocked KIND, \
            interrupted CAUSE, ended, failed, destroyed, or stop (the seat's file is written once more and \
            goes stale, as when Carrel stops). The files are written by Carrel's own metrics writer; after \
            each batch of lines read, "applied N" is printed. A bad line ends the run with status 65. \
            For rehearsing a room's monitoring (docs/FLEET.md); no seat's session is touched.
            """)

    @Argument(help: ArgumentHelp("The directory the seats' directories are made in.", valueName: "dir"))
    var directory: String

    @Option(name: .long, help: ArgumentHelp("How often each file is renewed while nothing changes, in milliseconds (Carrel: 15000).", valueName: "ms"))
    var renewMilliseconds: Int = 15000

    func validate() throws {
        guard (100...3_600_000).contains(renewMilliseconds) else {
            throw ValidationError("--renew-milliseconds \(renewMilliseconds) is out of range; use 100 to 3600000")
        }
    }

    func run() throws {
        // stdout carries "applied N"; the writer's messages go to stderr.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .notice
            return handler
        }
        let logger = Logger(label: "carrel")
        let status = MetricsRehearsalRun.run(directory: directory, renewal: .milliseconds(renewMilliseconds),
                                             version: CarrelCommand.version, logger: logger)
        if status != 0 { throw ExitCode(status) }
    }
}
