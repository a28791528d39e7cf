import ArgumentParser
import CarrelControlProtocol
import CarrelPasscode
import Glibc

/// `carrelctl [--socket PATH] [--json] status | end --reason TEXT | extend MINUTES`
struct CarrelCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "carrelctl",
        abstract: "Controls a running Carrel through its admin control socket.",
        discussion: """
        The socket is --socket PATH, else $CARREL_CONTROL_SOCKET, else \
        \(CarrelPaths.controlSocket). Only root, members of the group \
        the policy names ([control] group), or — when Carrel runs \
        unprivileged — Carrel's own user may use it.

        Exit status: 0 done; 1 Carrel refused the command (no session, \
        out of range, above the policy's maximum, Guided Access off, wrong \
        passcode, too many wrong passcodes, ...); 64 bad usage; \
        69 Carrel cannot be reached; 76 an answer carrelctl does not \
        understand; 77 permission denied. `audit verify` exits 1 when the
        chain is broken and 66 when the log cannot be read; `attest verify` has exit statuses of its own (see its help).
        """,
        version: "0.1.0",
        subcommands: [Status.self, End.self, Extend.self, Lock.self, Unlock.self, Reload.self, Audit.self, Attest.self,
                      SSHCommand.self]
    )

    /// Also accepted before the command (`carrelctl --json status`).
    @OptionGroup var options: ControlOptions
}

/// Options every command takes.
struct ControlOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The control socket (default: $CARREL_CONTROL_SOCKET, else \(CarrelPaths.controlSocket)).", valueName: "path"))
    var socket: String?

    @Flag(name: .long, help: "Print Carrel's answer as one JSON object (errors too).")
    var json = false

    var socketPath: String {
        if let socket { return socket }
        if let value = getenv("CARREL_CONTROL_SOCKET"), value.pointee != 0 { return String(cString: value) }
        return CarrelPaths.controlSocket
    }
}

extension CarrelCtl {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Shows the mode, the session (app, participants, time left, restrictions) and the clients.")

        @OptionGroup var options: ControlOptions

        func run() throws {
            try ControlClient(options: options).perform(.status) { response in
                response.status.map(Report.status) ?? "no status in the answer"
            }
        }
    }

    struct End: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ends the session: the exam app is told it was interrupted (administrative), with the reason.",
            discussion: """
            With --force the session ends at once, for an app that hangs: the \
            restrictions come down, the app hears interrupted (administrative) \
            and then ended, and its process has \(ControlRequest.forceEndNotice.components.seconds) s \
            to exit by itself, then gets SIGTERM, then SIGKILL \
            \(ControlRequest.forceEndGrace.components.seconds) s later if it is still running.
            """)

        @OptionGroup var options: ControlOptions

        @Option(name: .long, help: ArgumentHelp("Why; the exam app shows it.", valueName: "text"))
        var reason: String

        @Flag(name: .long, help: "End the session now and stop its app, without waiting for the app to end it.")
        var force = false

        func run() throws {
            let client = ControlClient(options: options)
            let reason: String
            switch ControlRequest.validateReason(self.reason) {
            case .success(let valid): reason = valid
            case .failure(let failure): throw client.fail(failure, status: ExitStatus.usage)
            }
            try client.perform(force ? .forceEnd(reason: reason) : .end(reason: reason)) { response in
                Report.ended(response, reason: reason)
            }
        }
    }

    struct Extend: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Adds minutes (1 to 600) to the active session's time limit, up to the policy's maximum.")

        @OptionGroup var options: ControlOptions

        @Argument(help: ArgumentHelp("Minutes to add, 1 to 600.", valueName: "minutes"))
        var minutes: String

        func run() throws {
            let client = ControlClient(options: options)
            guard let value = Int(minutes) else {
                throw client.fail(ControlFailure(.badArgument, "\"\(minutes)\" is not a whole number of minutes; extend by 1 to 600"), status: ExitStatus.usage)
            }
            if case .failure(let failure) = ControlRequest.validateMinutes(value) {
                throw client.fail(failure, status: ExitStatus.usage)
            }
            try client.perform(.extend(minutes: value)) { response in Report.extended(response) }
        }
    }
}

extension CarrelCtl {
    struct Lock: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Guided Access: locks the screen to the app's topmost window until `carrelctl unlock` with the policy's passcode.")

        @OptionGroup var options: ControlOptions

        func run() throws {
            try ControlClient(options: options).perform(.lock) { response in
                guard let outcome = response.outcome else { return "locked" }
                return "session \(outcome.session) \(outcome.message ?? "locked")"
            }
        }
    }

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Guided Access: ends the lock. Reads the passcode from the terminal (not echoed) or one line of stdin; never from the command line.")

        @OptionGroup var options: ControlOptions

        func run() throws {
            let client = ControlClient(options: options)
            let passcode: String
            do {
                passcode = isatty(STDIN_FILENO) == 1 ? try PasscodeInput.ask("Passcode: ") : try PasscodeInput.readLine()
            } catch {
                throw client.fail(ControlFailure(.badArgument, "\(error)"), status: ExitStatus.usage)
            }
            if case .failure(let failure) = ControlRequest.validatePasscode(passcode) {
                throw client.fail(failure, status: ExitStatus.usage)
            }
            try client.perform(.unlock(passcode: passcode)) { response in
                guard let outcome = response.outcome else { return "unlocked" }
                return "session \(outcome.session) \(outcome.message ?? "unlocked")"
            }
        }
    }
}

extension CarrelCtl {
    struct Reload: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-reads Carrel's policy file: a valid one applies from the next session; a bad one is refused and the running policy stays.")

        @OptionGroup var options: ControlOptions

        func run() throws {
            try ControlClient(options: options).perform(.reload) { response in
                guard let reload = response.reload else { return "reloaded" }
                return "policy \(reload.file) reloaded: \(reload.message)"
            }
        }
    }
}

/// carrelctl's exit statuses (sysexits.h values where one fits).
enum ExitStatus {
    /// Carrel answered and refused the command.
    static let refused: Int32 = 1
    static let usage: Int32 = 64
    static let unavailable: Int32 = 69
    static let badResponse: Int32 = 76
    static let permissionDenied: Int32 = 77

    static func of(_ code: ControlFailureCode) -> Int32 {
        switch code {
        case .permissionDenied: return permissionDenied
        case .unavailable, .busy: return unavailable
        case .badResponse: return badResponse
        default: return refused
        }
    }
}
