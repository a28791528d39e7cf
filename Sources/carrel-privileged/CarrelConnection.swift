import CarrelHelperRequests
import CarrelFDPassing
import CarrelSystem
import Glibc

/// The one connection from Carrel, and everything the helper did for it:
/// the table it loaded and the programs it started. All of it is undone
/// when the connection closes (`revertAll`), which is how a crashed Carrel's
/// restrictions come down: the kernel closes its socket.
final class CarrelConnection {
    let fd: Int32
    let peer: pid_t
    private let options: HelperOptions
    private let nftables: Nftables
    private let cgroups: DelegatedCgroups
    private let spawner: ProgramSpawner
    private var buffer: [UInt8] = []
    /// Descriptors that came with the bytes not yet handled (a spawn's connection).
    private var passed: [Int32] = []
    /// The cgroups the loaded table lets through; nil when none is loaded.
    private var exempt: [String]?
    private var programs: [UInt64: pid_t] = [:]
    /// The private homes of running programs (the input method's, the
    /// keyboard's) with their cgroups, by id; and homes whose program has
    /// ended, removed once nothing of its user is left writing there.
    private var homes: [UInt64: (home: String, cgroup: String)] = [:]
    private var leftHomes: [(home: String, cgroup: String, tries: Int)] = []
    private var nextID: UInt64 = 1

    init(fd: Int32, peer: pid_t, options: HelperOptions, spawner: ProgramSpawner) {
        self.fd = fd
        self.peer = peer
        self.options = options
        self.spawner = spawner
        nftables = Nftables(tableName: options.tableName)
        cgroups = DelegatedCgroups(subtree: options.cgroupSubtree)
    }

    /// Reads what is there and answers every whole line; false once the
    /// connection is over (closed, or a line over the limit).
    func readable() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        var fds = [Int32](repeating: -1, count: 4)
        var count: Int32 = 0
        let received = carrel_receive_with_fds(fd, &chunk, chunk.count, &fds, Int32(fds.count), &count)
        passed += fds.prefix(Int(count))
        // A request takes at most one descriptor: more, kept until a newline, could exhaust the helper's.
        while passed.count > 1 { close(passed.removeLast()) }
        if received < 0 { return errno == EINTR || errno == EAGAIN }
        if received == 0 { return false }
        buffer += chunk[..<received]
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = Array(buffer[..<newline])
            buffer.removeSubrange(...newline)
            send(answer(line))
            // A descriptor not taken by the line it came with is not kept for a later one.
            passed.forEach { close($0) }
            passed.removeAll()
        }
        if buffer.count > PrivilegedRequest.maximumLineLength {
            send(.error("request is longer than \(PrivilegedRequest.maximumLineLength) bytes without a newline; closing"))
            return false
        }
        return true
    }

    private func answer(_ line: [UInt8]) -> PrivilegedReply {
        let request: PrivilegedRequest
        switch PrivilegedRequest.parse(line, subtree: options.cgroupSubtree) {
        case .failure(let failure):
            log("refused a request: \(failure.message)")
            return .error(failure.message)
        case .success(let parsed):
            request = parsed
        }
        do {
            return try carryOut(request)
        } catch {
            log("\(request.name) failed: \(error.message)")
            return .error("\(request.name): \(error.message)")
        }
    }

    private func carryOut(_ request: PrivilegedRequest) throws(HelperError) -> PrivilegedReply {
        switch request {
        case .networkApply(let session, let wanted):
            try nftables.load(exempt: wanted)
            exempt = wanted
            log("network restricted for session \(session): only \(wanted.isEmpty ? "nobody" : wanted.joined(separator: ", ")) keeps it")
            return .ok(id: nil)
        case .networkVerify:
            guard let exempt else { throw HelperError("no table is loaded for this connection") }
            try nftables.verify(exempt: exempt)
            return .ok(id: nil)
        case .networkRevert:
            try nftables.delete()
            if exempt != nil { log("network restriction reverted") }
            exempt = nil
            return .ok(id: nil)
        case .recover:
            if try nftables.delete() { log("recover: deleted the table inet \(options.tableName) a previous run left") }
            exempt = nil
            return .ok(id: nil)
        case .spawn(let role, let argv, let environment, let cgroup, let files):
            guard passed.count == 1 else {
                throw HelperError("a spawn needs exactly one descriptor with it (the program's Wayland connection, SCM_RIGHTS); \(passed.count) came")
            }
            let connection = passed[0]
            let user = try spawner.user(for: role)
            let home = role.hasPrivateHome
                ? try PrivateHome.make(in: options.homesDirectory, role: role.rawValue, user: user, files: files) : nil
            let spawn = { [spawner] () throws(HelperError) -> pid_t in
                try spawner.spawn(as: user, argv: argv, environment: environment, home: home, connection: connection)
            }
            let pid: pid_t
            do {
                pid = try cgroups.spawnInside(cgroup, spawn)
            } catch {
                if let home { _ = PrivateHome.remove(home) }
                throw error
            }
            let id = nextID
            nextID += 1
            programs[id] = pid
            if let home { homes[id] = (home, cgroup) }
            log("started \(role.rawValue) \(PrivilegedRequest.shown(argv[0])) as pid \(pid) (id \(id)) in \(cgroup)")
            return .ok(id: id)
        case .inputReaders:
            // Only the holders: whether they are allowed is Carrel's decision.
            switch InputDeviceScan.holders() {
            case .success(let found):
                return .holders(found.map {
                    InputDeviceHolder(pid: $0.pid, executable: $0.executable, command: $0.command, devices: $0.devices)
                }, omitted: 0)
            case .failure(let failure):
                throw HelperError(failure.message)
            }
        case .signal(let id, let signal):
            guard let pid = programs[id] else { throw HelperError("no running program \(id) of this connection") }
            guard kill(-pid, signal == .term ? SIGTERM : SIGKILL) == 0 || errno == ESRCH else {
                throw HelperError("could not signal program \(id) (pid \(pid)): \(SystemError.current)")
            }
            return .ok(id: nil)
        }
    }

    /// A spawned program ended: Carrel hears it; true if it was one of this connection's.
    func exited(_ pid: pid_t, status: Int32) -> Bool {
        guard let id = programs.first(where: { $0.value == pid })?.key else { return false }
        programs[id] = nil
        // What it started in its group goes with it, as when Carrel starts it itself.
        kill(-pid, SIGKILL)
        // A program with a private home: all of its cgroup too, and then its home.
        if let (home, cgroup) = homes.removeValue(forKey: id) {
            _ = DelegatedCgroups.write("1", to: "\(DelegatedCgroups.root)/\(cgroup)/cgroup.kill")
            leftHomes.append((home, cgroup, 0))
            removeLeftHomes()
        }
        send(.exited(id: id, waitStatus: UInt64(UInt32(bitPattern: status))))
        return true
    }

    /// Removes the homes of ended programs. The removal follows no link
    /// (`PrivateHome.remove`), so a process of the role still dying there
    /// can only make it fail, and it is tried again each tick; one still not
    /// gone after about ten seconds is left, and logged.
    func removeLeftHomes() {
        leftHomes = leftHomes.compactMap { entry in
            if PrivateHome.remove(entry.home) { return nil }
            if entry.tries >= 200 {
                log("could not remove \(entry.home): processes of its user kept writing there (\(entry.cgroup)); left in place")
                return nil
            }
            return (entry.home, entry.cgroup, entry.tries + 1)
        }
    }

    /// Carrel is gone: the table is deleted, every program it had started is
    /// killed, and the session cgroups are emptied and removed.
    func revertAll() {
        passed.forEach { close($0) }
        passed.removeAll()
        do {
            if try nftables.delete() { log("Carrel's connection closed: deleted the table inet \(options.tableName)") }
        } catch {
            log("Carrel's connection closed, but: \(error.message)")
        }
        for (id, pid) in programs.sorted(by: { $0.key < $1.key }) {
            kill(-pid, SIGKILL)
            log("Carrel's connection closed: killed program \(id) (pid \(pid))")
        }
        for problem in cgroups.removeAll(kill: true) { log("Carrel's connection closed: \(problem)") }
        for home in homes.values.map(\.home) + leftHomes.map(\.home) where !PrivateHome.remove(home) {
            log("Carrel's connection closed: could not remove \(home); left in place")
        }
        homes.removeAll()
        leftHomes.removeAll()
        programs.removeAll()
        exempt = nil
        close(fd)
    }

    private func send(_ reply: PrivilegedReply) {
        let bytes = Array((reply.line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return }  // Carrel is gone; the close will be seen next
            offset += sent
        }
    }
}
