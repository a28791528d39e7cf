import Glibc

/// A Unix socket address for a path: the one place that checks the path fits
/// `sun_path` and fills it, for the app socket, the control socket and
/// carrelctl. No system call: it only lays out bytes.
public struct UnixSocketAddress {
    /// The longest path, in bytes (`sun_path` minus its terminating NUL).
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    private var address = sockaddr_un()

    /// nil when `path` is longer than `maximumPathLength` bytes.
    public init?(path: String) {
        guard path.utf8.count <= Self.maximumPathLength else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
    }

    /// Calls `body` with the address as `bind` and `connect` take it.
    public func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
