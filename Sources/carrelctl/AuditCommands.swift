import ArgumentParser
import CarrelAudit
import CarrelCore
import Glibc

/// `carrelctl audit verify FILE` and `carrelctl audit show --session ID [FILE]`:
/// read the audit log directly (no control socket needed).
extension CarrelCtl {
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Checks the audit log's hash chain, or prints one session's story.",
            subcommands: [Verify.self, Show.self])
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

        @Argument(help: ArgumentHelp("The audit log (default \(AuditPolicy.defaultPath)).", valueName: "file"))
        var file: String = AuditPolicy.defaultPath

        /// `--json`: the result as one JSON object (shared with every command;
        /// `--socket` is not used: the log is read directly).
        @OptionGroup var options: ControlOptions
        var json: Bool { options.json }

        func run() throws {
            let text = try AuditFile.read(file)
            let report = AuditVerifier.verify(text[...])
            if json {
                var fields = ["\"ok\":\(report.isIntact)", "\"records\":\(report.records)", "\"head\":\"\(report.head)\"",
                              "\"continues_earlier_log\":\(report.continuesEarlierLog)"]
                if let broken = report.broken {
                    fields += ["\"broken_line\":\(broken.line)", "\"reason\":\(AuditFile.jsonString(broken.reason))"]
                }
                print("{" + fields.joined(separator: ",") + "}")
            } else if let broken = report.broken {
                print("\(file): chain BROKEN at line \(broken.line): \(broken.reason)")
                print("the \(report.records) record(s) before it verify; their head is \(report.head)")
            } else {
                print("\(file): chain intact: \(report.records) record(s), head \(report.head)"
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
            had the session is shown (each record names its run).
            """)

        @Option(name: .long, help: ArgumentHelp("The session number (as carrelctl status shows it).", valueName: "id"))
        var session: UInt64

        @Option(name: .customLong("run"), help: ArgumentHelp("The run (the records' \"run\" field) when several runs had this session number.", valueName: "run"))
        var runID: String?

        @Argument(help: ArgumentHelp("The audit log (default \(AuditPolicy.defaultPath)).", valueName: "file"))
        var file: String = AuditPolicy.defaultPath

        /// `--json`: the records as they are in the log (JSON lines).
        @OptionGroup var options: ControlOptions
        var json: Bool { options.json }

        func run() throws {
            let text = try AuditFile.read(file)
            let records = AuditStory.records(in: text[...], session: session, run: runID)
            guard let first = records.first else {
                FileHandleStderr.write("carrelctl: \(file) has no records of session \(session)\(runID.map { " in run \($0)" } ?? "")\n")
                throw ExitCode(1)
            }
            if !json { print("session \(session), run \(first.run): \(records.count) record(s)") }
            for record in records {
                print(json ? record.jsonLine() : AuditStory.describe(record))
            }
        }
    }
}

enum AuditFile {
    /// The whole log as text; exit 66 with the reason when it cannot be read.
    static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            FileHandleStderr.write("carrelctl: cannot read \(path): \(String(cString: strerror(errno)))\n")
            throw ExitCode(66)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                FileHandleStderr.write("carrelctl: cannot read \(path): \(String(cString: strerror(errno)))\n")
                throw ExitCode(66)
            }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if scalar.value < 0x20 { out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}

enum FileHandleStderr {
    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
