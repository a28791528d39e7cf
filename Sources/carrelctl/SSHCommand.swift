import ArgumentParser
import CarrelControlProtocol
import Glibc

extension CarrelCtl {
    /// The forced command of an invigilator's SSH key: runs what the
    /// invigilator typed (SSH_ORIGINAL_COMMAND) if it is status, extend or
    /// end with the session it means (see docs/FLEET.md), naming the key's
    /// `--actor` to Carrel for the audit log.
    struct SSHCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ssh-command",
            abstract: "For authorized_keys' command=: runs SSH_ORIGINAL_COMMAND if it is `status`, `extend SESSION MINUTES` or `end SESSION REASON`.",
            discussion: "extend and end act only if SESSION is still the live session (the number status shows); otherwise nothing is done and the exit status is 1 (session_changed). Nothing is run through a shell.")

        @OptionGroup var options: ControlOptions

        @Option(name: .long, help: ArgumentHelp("The name of the key this forced command belongs to, recorded as the actor of every end and extend in the audit log (letters, digits, . _ - @ + :).", valueName: "name"))
        var actor: String?

        func run() throws {
            let client = ControlClient(options: options)
            if let actor, case .failure(let failure) = ControlActor.validate(actor) {
                throw client.fail(failure, status: ExitStatus.usage)
            }
            let original = getenv("SSH_ORIGINAL_COMMAND").map { String(cString: $0) }
            let request: ControlRequest
            switch SSHForcedCommand.request(from: original) {
            case .success(let valid): request = valid
            case .failure(let failure): throw client.fail(failure, status: ExitStatus.usage)
            }
            try client.perform(request, actor: actor) { response in
                switch request {
                case .end(let reason, _): return Report.ended(response, reason: reason)
                case .extend: return Report.extended(response)
                default: return response.status.map(Report.status) ?? "no status in the answer"
                }
            }
        }
    }
}
