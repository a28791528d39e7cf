import CarrelCore
import CarrelMedia
import CarrelShim
import CarrelSystem
import Glibc

/// A cgroup (v2) of Carrel's own under `/sys/fs/cgroup`, so the network
/// provider can tell the session's sockets from everyone else's:
/// `carrel-PID`, which the app is launched into, and `carrel-PID-owner`,
/// which the client owning an app-requested lock is moved into for the
/// session. nftables resolves cgroup paths under `/sys/fs/cgroup`, so that is
/// where the hierarchy must be mounted.
final class SessionCgroup {
    static let root = "/sys/fs/cgroup"
    /// `/proc/PID/cgroup` is one short line on a v2-only system; a few KiB
    /// cover a hybrid one too.
    private static let cgroupListLimit = 16384
    /// Relative to `root`, as nftables wants it.
    let relativePath: String
    var path: String { Self.root + "/" + relativePath }

    private init(relativePath: String) { self.relativePath = relativePath }

    /// Where Carrel's cgroups are made, relative to `root`: the root itself
    /// when Carrel runs as root; with the privileged helper, the subtree
    /// systemd delegated to Carrel's unit (`Delegate=yes`), which Carrel's
    /// user may write (`delegate(to:)`).
    private(set) static var base = ""

    /// Carrel makes its cgroups inside `subtree`, its own cgroup, which it
    /// must be able to write (checked here, so the problem shows at start).
    static func delegate(to subtree: String) -> String? {
        base = subtree.hasPrefix("/") ? String(subtree.dropFirst()) : subtree
        let procs = root + "/" + base + (base.isEmpty ? "" : "/") + "cgroup.procs"
        guard access(procs, W_OK) == 0 else {
            return "Carrel cannot write \(procs) (\(SystemError.current)): its cgroup is not delegated to its user; run it from a unit with Delegate=yes"
        }
        return nil
    }

    /// `name` inside `base`.
    static func named(_ name: String) -> String { base.isEmpty ? name : base + "/" + name }
    /// The launched app's cgroup of this run.
    static var appName: String { named("carrel-\(getpid())") }
    /// The cgroup of this run for the process owning an app-requested lock.
    static var ownerName: String { named("carrel-\(getpid())-owner") }
    /// The cgroup of the input method or the keyboard of this run, when the
    /// privileged helper starts them.
    static func roleName(_ role: PrivilegedRequest.SpawnRole) -> String {
        named("carrel-\(getpid())-\(role == .inputMethod ? "input-method" : "keyboard")")
    }
    /// The cgroup of participant `id` of this run, when it keeps the network.
    static func participantName(_ id: String) -> String {
        named(ParticipantNetwork.cgroupName(run: getpid(), participant: id))
    }

    /// A cgroup as nftables matches it: its path and its id (the directory's inode).
    struct Entry: Equatable {
        var path: String
        var id: UInt64
    }

    /// The running units of `system.slice` that `units` (the policy's
    /// patterns) name, with their ids; `InfrastructureExemption` decides.
    static func infrastructure(_ units: [String]) -> [Entry] {
        guard !units.isEmpty else { return [] }
        let slice = root + "/" + InfrastructureExemption.slice
        guard let directory = opendir(slice) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        return InfrastructureExemption.cgroups(units: units, present: names).compactMap { path in
            var info = stat()
            guard stat(root + "/" + path, &info) == 0 else { return nil }  // stopped meanwhile
            return Entry(path: path, id: UInt64(info.st_ino))
        }
    }

    /// Carrel's own cgroup (absolute below `root`, "/..."), nil if unreadable.
    static func own() -> String? { cgroup(of: "self") }

    /// Whether `root` is a cgroup v2 mount; nil if so, else why not.
    static func rootProblem() -> String? {
        var type: UInt = 0
        guard carrel_fs_type(root, &type) == 0 else {
            return "\(root) is not accessible (\(SystemError.current))"
        }
        // CGROUP2_SUPER_MAGIC
        guard type == 0x6367_7270 else {
            return "\(root) is not a cgroup v2 hierarchy (mount cgroup2 there, or boot with the unified hierarchy)"
        }
        return nil
    }

    /// Creates (or reuses) Carrel's cgroup `name`; throws a sentence saying
    /// why it could not.
    static func create(named name: String = appName) throws(ProviderError) -> SessionCgroup {
        if let problem = rootProblem() { throw ProviderError(problem) }
        let cgroup = SessionCgroup(relativePath: name)
        if mkdir(cgroup.path, 0o755) != 0 && errno != EEXIST {
            throw ProviderError("could not create the cgroup \(cgroup.path): \(SystemError.current) (Carrel needs root, or with --privileged-helper a cgroup delegated to its user, to manage cgroups)")
        }
        return cgroup
    }

    /// Runs `body` (which spawns the app) with Carrel itself moved into the
    /// cgroup, so the child is born inside it: no socket it opens, even
    /// before exec, is outside. Carrel moves back afterwards.
    func spawnInside<T>(_ body: () throws -> T) throws -> T {
        let original = Self.cgroup(of: "self")
        guard Self.write("\(getpid())", to: path + "/cgroup.procs") else {
            throw CompositorError.launch("could not enter the cgroup \(path): \(SystemError.current)")
        }
        defer {
            if let original, !Self.write("\(getpid())", to: Self.root + original + "/cgroup.procs") {
                _ = Self.write("\(getpid())", to: Self.root + "/cgroup.procs")
            }
        }
        return try body()
    }

    /// Moves process `pid` (all its threads) into this cgroup; returns the
    /// cgroup it was in (absolute below `root`, "/..."), to move it back to.
    /// Sockets it opened before stay where they were born: only new ones
    /// are in this cgroup.
    func adopt(_ pid: pid_t) throws(ProviderError) -> String {
        guard let original = Self.cgroup(of: "\(pid)") else {
            throw ProviderError("could not read the cgroup of process \(pid) (/proc/\(pid)/cgroup): \(SystemError.current); has it exited?")
        }
        guard Self.write("\(pid)", to: path + "/cgroup.procs") else {
            throw ProviderError("could not move process \(pid) into the cgroup \(path): \(SystemError.current)")
        }
        return original
    }

    /// Moves `pid` back to `original` (as `adopt` returned it); if that
    /// cgroup is gone, to the root. False if neither worked (the process
    /// may have exited, which is fine).
    @discardableResult
    static func release(_ pid: pid_t, to original: String) -> Bool {
        write("\(pid)", to: root + original + "/cgroup.procs") || write("\(pid)", to: root + "/cgroup.procs")
    }

    /// Removes the cgroup if it is empty (processes left in it keep it).
    func remove() -> Bool { rmdir(path) == 0 || errno == ENOENT }

    /// Kills every process in the cgroup at `relativePath` (cgroup.kill,
    /// Linux 5.14); nil when done or when there is no such cgroup, else why not.
    static func kill(relativePath: String) -> String? {
        let path = root + "/" + relativePath
        guard access(path, F_OK) == 0 else { return nil }
        return write("1", to: path + "/cgroup.kill") ? nil : "\(path)/cgroup.kill: \(SystemError.current)"
    }

    /// Removes a cgroup a previous run left, by its relative path.
    static func remove(relativePath: String) -> Bool {
        guard !relativePath.isEmpty, !relativePath.contains("..") else { return true }
        return rmdir(root + "/" + relativePath) == 0 || errno == ENOENT
    }

    /// The cgroup v2 path of process `pid` ("self" for Carrel), the "0::/path"
    /// line of /proc/PID/cgroup.
    private static func cgroup(of pid: String) -> String? {
        guard let text = BoundedFile.text("/proc/\(pid)/cgroup", limit: cgroupListLimit) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            return String(line.dropFirst(3))
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
