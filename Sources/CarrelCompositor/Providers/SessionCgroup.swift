import CarrelCore
import CarrelMedia
import Glibc

/// The cgroup (v2) Carrel launches the app into, `/sys/fs/cgroup/carrel-PID`,
/// so the network provider can tell the session's sockets from everyone
/// else's. nftables resolves cgroup paths under `/sys/fs/cgroup`, so that is
/// where the hierarchy must be mounted.
final class SessionCgroup {
    static let root = "/sys/fs/cgroup"
    /// Relative to `root`, as nftables wants it.
    let relativePath: String
    var path: String { Self.root + "/" + relativePath }

    private init(relativePath: String) { self.relativePath = relativePath }

    /// Whether `root` is a cgroup v2 mount; nil if so, else why not.
    static func rootProblem() -> String? {
        var type: UInt = 0
        guard carrel_fs_type(root, &type) == 0 else {
            return "\(root) is not accessible (\(String(cString: strerror(errno))))"
        }
        // CGROUP2_SUPER_MAGIC
        guard type == 0x6367_7270 else {
            return "\(root) is not a cgroup v2 hierarchy (mount cgroup2 there, or boot with the unified hierarchy)"
        }
        return nil
    }

    /// Creates Carrel's cgroup; throws a sentence saying why it could not.
    static func create() throws(ProviderError) -> SessionCgroup {
        if let problem = rootProblem() { throw ProviderError(problem) }
        let cgroup = SessionCgroup(relativePath: "carrel-\(getpid())")
        if mkdir(cgroup.path, 0o755) != 0 && errno != EEXIST {
            throw ProviderError("could not create the cgroup \(cgroup.path): \(String(cString: strerror(errno))) (Carrel needs root to manage cgroups)")
        }
        return cgroup
    }

    /// Runs `body` (which spawns the app) with Carrel itself moved into the
    /// cgroup, so the child is born inside it: no socket it opens, even
    /// before exec, is outside. Carrel moves back afterwards.
    func spawnInside<T>(_ body: () throws -> T) throws -> T {
        let original = Self.ownCgroup()
        guard Self.write("\(getpid())", to: path + "/cgroup.procs") else {
            throw CompositorError.launch("could not enter the cgroup \(path): \(String(cString: strerror(errno)))")
        }
        defer {
            if let original, !Self.write("\(getpid())", to: Self.root + original + "/cgroup.procs") {
                _ = Self.write("\(getpid())", to: Self.root + "/cgroup.procs")
            }
        }
        return try body()
    }

    /// Removes the cgroup if it is empty (processes left in it keep it).
    func remove() -> Bool { rmdir(path) == 0 || errno == ENOENT }

    /// Removes a cgroup a previous run left, by its relative path.
    static func remove(relativePath: String) -> Bool {
        guard !relativePath.isEmpty, !relativePath.contains("..") else { return true }
        return rmdir(root + "/" + relativePath) == 0 || errno == ENOENT
    }

    /// This process's cgroup v2 path ("0::/path" in /proc/self/cgroup).
    private static func ownCgroup() -> String? {
        guard let file = fopen("/proc/self/cgroup", "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0 {
            let text = String(cString: line!).trimmingSuffix("\n")
            if text.hasPrefix("0::") { return String(text.dropFirst(3)) }
        }
        return nil
    }

    private static func write(_ text: String, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return text.withCString { Glibc.write(fd, $0, strlen($0)) } > 0
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
