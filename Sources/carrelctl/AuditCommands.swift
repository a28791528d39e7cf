import ArgumentParser
import CarrelAudit
import CarrelControlProtocol
import CarrelSystem
import Foundation

/// `carrelctl audit verify FILE` and `carrelctl audit show --session ID [FILE]`:
/// read the audit log directly (no control socket needed).
extension CarrelCtl {
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Checks the audit log's hash chain, or prints one session's story.",
            subcommands: [Verify.self, Show.self])
    }
}

/// The log both audit commands read, and `--json` (shared with every command;
/// `--socket` is not used: the log is read directly).
struct AuditLogFile: ParsableArguments {
    @Argument(help: ArgumentHelp("The audit log (default \(CarrelPaths.auditLog)).", valueName: "file"))
    var path: String = CarrelPaths.auditLog

    @OptionGroup var options: ControlOptions
    var json: Bool { options.json }

    /// The log's chain, walked as the file is read, 64 KiB at a time (a log
    /// of any size in little memory); exit 66 when it cannot be read.
    func walk() throws -> AuditVerifier.Report {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw unreadable(SystemError.current) }
        defer { close(fd) }
        switch AuditVerifier.verify(fileDescriptor: fd) {
        case .success(let report): return report
        case .failure(let why): throw unreadable(why.description)
        }
    }

    /// Says why the log cannot be read and gives exit status 66.
    private func unreadable(_ why: String) -> ExitCode {
        Stderr.write("carrelctl: cannot read \(path): \(why)")
        return ExitCode(66)
    }

    /// The whole log as text (bytes that are not UTF-8 decode as U+FFFD, and
    /// then fail the chain where they are); exit 66 when it cannot be read.
    func text() throws -> String {
        do {
            return String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        } catch {
            Stderr.write("carrelctl: cannot read \(path): \(error.localizedDescription)")
            throw ExitCode(66)
        }
    }
}

extension CarrelCtl.Audit {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Checks the hash chain of an audit log and names the first record that breaks it.",
            discussion: """
            Exit status 0: every record chains to the one before it; 1: a record was changed, \
            removed or inserted (the first such line is named); 66: the file cannot be read. \
            A chain cannot show that records were cut off the end: compare the head printed \
            here with the one Carrel logged when the session ended.
            """)

        @OptionGroup var log: AuditLogFile

        func run() throws {
            let report = try log.walk()
            if log.json {
                print(report.jsonLine())
            } else if let broken = report.broken {
                print("\(log.path): chain BROKEN at line \(broken.line): \(broken.reason)")
                print("the \(report.records) record(s) before it verify; their head is \(report.head)")
            } else {
                print("\(log.path): chain intact: \(report.records) record(s), head \(report.head)"
                      + (report.continuesEarlierLog ? " (the first record continues an earlier log)" : ""))
            }
            if !report.isIntact { throw ExitCode(1) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prints one session's records: begin, restrictions, blocked attempts, how it ended.",
            discussion: """
            Session numbers restart each time Carrel starts: without --run the last run that \
            had the session is shown (each record names its run). With --json the records \
            are printed as they are in the log (JSON lines).
            """)

        @Option(name: .long, help: ArgumentHelp("The session number (as carrelctl status shows it).", valueName: "id"))
        var session: UInt64

        @Option(name: .customLong("run"), help: ArgumentHelp("The run (the records' \"run\" field) when several runs had this session number.", valueName: "run"))
        var runID: String?

        @OptionGroup var log: AuditLogFile

        func run() throws {
            let records = AuditStory.records(in: try log.text()[...], session: session, run: runID)
            guard let first = records.first else {
                Stderr.write("carrelctl: \(log.path) has no records of session \(session)\(runID.map { " in run \($0)" } ?? "")")
                throw ExitCode(1)
            }
            if !log.json { print("session \(session), run \(first.run): \(records.count) record(s)") }
            for record in records {
                print(log.json ? record.jsonLine() : AuditStory.describe(record))
            }
        }
    }
}
