import CarrelHelperRequests
import CarrelSystem
import Glibc

/// Carrel's session cgroups under its delegated subtree, as the helper
/// touches them: it spawns a program inside one (by entering it for the
/// spawn, so the child is born there), and when Carrel is gone it kills what
/// is left in them and removes them. Nothing outside the subtree, and
/// nothing not named like a session cgroup (`SessionCgroupName`).
struct DelegatedCgroups {
    static let root = "/sys/fs/cgroup"
    let subtree: String
    var subtreePath: String { subtree.isEmpty ? Self.root : Self.root + "/" + subtree }

    /// Runs `body` with the helper inside cgroup `relative` (validated by the
    /// request parser), then moves it back.
    func spawnInside<T>(_ relative: String, _ body: () throws(HelperError) -> T) throws(HelperError) -> T {
        let original = Self.ownCgroup()
        guard Self.write("\(getpid())", to: "\(Self.root)/\(relative)/cgroup.procs") else {
            throw HelperError("could not enter the cgroup \(Self.root)/\(relative): \(SystemError.current) (Carrel makes it before asking)")
        }
        defer {
            if let original, !Self.write("\(getpid())", to: Self.root + original + "/cgroup.procs") {
                _ = Self.write("\(getpid())", to: Self.root + "/cgroup.procs")
            }
        }
        return try body()
    }

    /// The session cgroups under the subtree now.
    func sessionCgroups() -> [String] {
        guard let directory = opendir(subtreePath) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if Int32(entry.pointee.d_type) == DT_DIR, SessionCgroupName.isName(name) { names.append(name) }
        }
        return names.sorted()
    }

    /// Removes every session cgroup; with `kill`, first kills every process
    /// in them (cgroup.kill) and waits up to `bound` seconds for them to go.
    /// Returns the ones that could not be removed, with why.
    func removeAll(kill: Bool, bound: Double = 1.0) -> [String] {
        let names = sessionCgroups()
        if kill {
            for name in names { _ = Self.write("1", to: "\(subtreePath)/\(name)/cgroup.kill") }
        }
        let deadline = monotonicSeconds() + (kill ? bound : 0)
        var left = names
        repeat {
            left = left.filter { rmdir("\(subtreePath)/\($0)") != 0 && errno != ENOENT }
            if left.isEmpty { break }
            usleep(20_000)
        } while monotonicSeconds() < deadline
        return left.map { "\(subtreePath)/\($0) still has processes" }
    }

    /// The helper's own cgroup v2 path ("/..."), from /proc/self/cgroup.
    static func ownCgroup() -> String? {
        guard let text = BoundedFile.text("/proc/self/cgroup", limit: 16384) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") { return String(line.dropFirst(3)) }
        return nil
    }

    static func write(_ text: String, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return text.withCString { Glibc.write(fd, $0, strlen($0)) } > 0
    }
}
