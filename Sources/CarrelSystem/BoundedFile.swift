import Glibc

/// Reads a file Carrel did not write (a policy, /proc and /sys entries, a
/// cgroup list) without trusting its size: at most `limit` bytes, EINTR
/// retried, the fd closed on every path.
public enum BoundedFile {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// open(2) or read(2) failed; the text is strerror's.
        case unreadable(String)
        /// The file holds more than the limit allows.
        case tooLarge(limit: Int)

        public var description: String {
            switch self {
            case .unreadable(let why): why
            case .tooLarge(let limit): "larger than \(limit) bytes"
            }
        }
    }

    /// The first `limit` bytes of `path`, or what went wrong. With
    /// `truncate` false, a longer file is `.tooLarge` instead of cut short.
    public static func read(_ path: String, limit: Int, truncate: Bool = true) -> Result<[UInt8], Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.unreadable(SystemError.current)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return .failure(.unreadable(SystemError.current)) }
            if n == 0 { return .success(bytes) }
            bytes += chunk[0..<n]
            if bytes.count > limit {
                return truncate ? .success(Array(bytes.prefix(limit))) : .failure(.tooLarge(limit: limit))
            }
        }
    }

    /// A small text file's contents (at most `limit` bytes, as UTF-8), or nil.
    public static func text(_ path: String, limit: Int) -> String? {
        guard case .success(let bytes) = read(path, limit: limit) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
