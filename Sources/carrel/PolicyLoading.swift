import CarrelCompositor
import CarrelCore
import CarrelPolicyFile
import CarrelSystem
import Glibc

/// Reads the policy file for the commands that need one. The only place the
/// policy touches the file system; `PolicyFile` itself is pure.
enum PolicyLoading {
    /// Why Carrel has no usable policy; it must not start.
    enum Failure: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case invalid(path: String, PolicyFileError)

        /// Every line to print on stderr: one per problem, then what happened.
        var description: String {
            switch self {
            case .unreadable(let path, let reason):
                return "\(path): cannot read the policy: \(reason)"
            case .invalid(let path, let error):
                let count = error.problems.count
                return error.description + "\n\(path): \(count) problem\(count == 1 ? "" : "s") in the policy; fix \(count == 1 ? "it" : "them") and check with `carrel check-policy \(path)`"
            }
        }
    }

    /// The policy at `path`, or, when no path was given and nothing is at the
    /// default path, the built-in one (`path` is then nil in the result).
    static func load(path explicit: String?) throws(Failure) -> (policy: Policy, path: String?) {
        let path = explicit ?? PolicyFile.defaultPath
        if explicit == nil {
            var info = stat()
            if stat(path, &info) != 0 && errno == ENOENT { return (Policy.builtIn, nil) }
        }
        let text = try read(path)
        do {
            return (try PolicyFile.parse(text, file: path), path)
        } catch {
            throw .invalid(path: path, error)
        }
    }

    /// The file's text: at most `PolicyFile.maximumByteCount` bytes of UTF-8.
    static func read(_ path: String) throws(Failure) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .unreadable(path: path, reason: SystemError.current) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: path, reason: "not a regular file")
        }
        let bytes: [UInt8]
        switch BoundedFile.read(path, limit: PolicyFile.maximumByteCount, truncate: false) {
        case .success(let read):
            bytes = read
        case .failure(.tooLarge):
            throw .unreadable(path: path, reason: "larger than \(PolicyFile.maximumByteCount) bytes; a policy is a short text file")
        case .failure(.unreadable(let why)):
            throw .unreadable(path: path, reason: why)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .unreadable(path: path, reason: "not UTF-8 text")
        }
        return text
    }

    /// Prints `failure` on stderr, one line per problem.
    static func report(_ failure: Failure) {
        var stderr = StandardError()
        print(failure.description, to: &stderr)
    }
}

/// `print(..., to: &stderr)`.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { _ = fwrite($0.baseAddress, 1, $0.count, Glibc.stderr) }
    }
}
