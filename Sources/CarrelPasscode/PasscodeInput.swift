import Glibc

/// Reading a passcode from a person or a pipe, for `carrel hash-passcode` and
/// `carrelctl unlock`: on a terminal it asks with echo off; otherwise it reads
/// stdin, one line. A passcode is never taken from the command line, where
/// other users could read it in /proc.
public enum PasscodeInput {
    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    /// All of stdin, one line, without its line ending.
    public static func readLine() throws -> String {
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
    public static func askTwice() throws -> String {
        let first = try ask("Passcode: ")
        let second = try ask("Again: ")
        guard first == second else { throw InputError(description: "the two passcodes differ; nothing printed") }
        return first
    }

    public static func ask(_ prompt: String) throws -> String {
        var saved = termios()
        let hasTerminal = tcgetattr(STDIN_FILENO, &saved) == 0
        if hasTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        }
        // Only now the prompt: whatever is typed once it shows is not echoed.
        writeStderr(prompt)
        defer {
            if hasTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
            writeStderr("\n")
        }
        guard let line = Swift.readLine(strippingNewline: true) else {
            throw InputError(description: "stdin ended before a passcode")
        }
        return line
    }

    private static func writeStderr(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
