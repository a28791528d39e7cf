import ArgumentParser
import CarrelPasscode
import Glibc

/// `carrel hash-passcode`: turns a Guided Access passcode into the line the
/// policy stores (`[guided_access] passcode_hash`).
struct HashPasscodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-passcode",
        abstract: "Read a Guided Access passcode from stdin and print its salted hash for the policy.",
        discussion: """
        On a terminal it asks twice without echoing; otherwise it reads one line \
        from stdin. Prints pbkdf2-sha256$ITERATIONS$SALT$HASH: paste it into \
        the policy as [guided_access] passcode_hash. The passcode itself is \
        stored nowhere.
        """
    )

    func run() throws {
        let passcode: String
        do {
            passcode = isatty(STDIN_FILENO) == 1 ? try PasscodeInput.askTwice() : try PasscodeInput.readLine()
        } catch {
            var stderr = StandardError()
            print("carrel hash-passcode: \(error)", to: &stderr)
            throw ExitCode(2)
        }
        do {
            print(try PasscodeHash.make(passcode: passcode))
        } catch {
            var stderr = StandardError()
            print("carrel hash-passcode: \(error)", to: &stderr)
            throw ExitCode(2)
        }
    }
}
