import ArgumentParser
import CarrelPolicyFile

/// `carrel check-policy FILE`: validates a policy without starting anything.
struct CheckPolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-policy",
        abstract: "Validate a policy file without starting Carrel.",
        discussion: """
        Exits 0 and prints "policy OK: ..." with what the policy decides, or \
        exits 2 and prints every problem, one per line: FILE:LINE: KEY: message.
        """
    )

    @Argument(help: ArgumentHelp("The policy file (TOML).", valueName: "file"))
    var file: String

    func run() throws {
        do {
            let (policy, _) = try PolicyLoading.load(path: file)
            print("policy OK: \(file): \(policy.summary)")
        } catch {
            PolicyLoading.report(error)
            throw ExitCode(2)
        }
    }
}
