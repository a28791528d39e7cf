import CarrelCore
import CarrelPolicyFile
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
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .unreadable(path: path, reason: "not a regular file")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= PolicyFile.maximumByteCount else {
                throw .unreadable(path: path, reason: "larger than \(PolicyFile.maximumByteCount) bytes; a policy is a short text file")
            }
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
