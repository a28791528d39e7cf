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
            passcode = isatty(STDIN_FILENO) == 1 ? try Self.askTwice() : try Self.readLine()
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

    struct InputError: Error, CustomStringConvertible {
        let description: String
    }

    /// All of stdin, one line, without its line ending.
    static func readLine() throws -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw InputError(description: "cannot read stdin: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= 4096 else { throw InputError(description: "stdin is longer than 4096 bytes; give the passcode alone on one line") }
        }
        guard var text = String(validating: bytes, as: UTF8.self) else {
            throw InputError(description: "stdin is not UTF-8 text")
        }
        if text.last?.isNewline == true { text.removeLast() }  // "\r\n" is one Character
        guard !text.contains(where: \.isNewline) else {
            throw InputError(description: "stdin has more than one line; give the passcode alone on one line")
        }
        return text
    }

    /// Asks on the terminal with echo off, twice, so a typo is not locked in.
    static func askTwice() throws -> String {
        let first = try ask("Passcode: ")
        let second = try ask("Again: ")
        guard first == second else { throw InputError(description: "the two passcodes differ; nothing printed") }
        return first
    }

    private static func ask(_ prompt: String) throws -> String {
        var stderr = StandardError()
        print(prompt, terminator: "", to: &stderr)
        var saved = termios()
        let hasTerminal = tcgetattr(STDIN_FILENO, &saved) == 0
        if hasTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        }
        defer {
            if hasTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
            print("", to: &stderr)
        }
        guard let line = Swift.readLine(strippingNewline: true) else {
            throw InputError(description: "stdin ended before a passcode")
        }
        return line
    }
}
