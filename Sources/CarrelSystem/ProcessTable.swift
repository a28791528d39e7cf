import Glibc

/// The kernel's process table as /proc shows it: parents, start times,
/// children. Read when Carrel needs to know whose a process is (a
/// connection to a private socket) or what a program started (its stop), never
/// on a timer.
public enum ProcessTable {
    /// One process: its pid, parent and start time (clock ticks since boot,
    /// which with the pid names it uniquely).
    public struct Entry: Equatable, Sendable {
        public let pid: Int32
        public let parent: Int32
        public let startTime: UInt64
        /// It has ended and waits for its parent to collect it.
        public let isZombie: Bool
    }

    /// `pid`'s entry; nil when there is no such process.
    public static func entry(_ pid: Int32) -> Entry? {
        guard let text = BoundedFile.text("/proc/\(pid)/stat", limit: 4096),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command name (which may hold spaces and parentheses):
        // state, ppid, ... starttime (the 20th field from here).
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = Int32(fields[1]), let start = UInt64(fields[19]) else {
            return nil
        }
        return Entry(pid: pid, parent: parent, startTime: start, isZombie: fields[0] == "Z")
    }

    /// `pid`, its parent, its parent's parent, ... up to pid 1; empty when
    /// `pid` is gone. Bounded, in case the table changes under the walk.
    public static func ancestry(of pid: Int32) -> [Int32] {
        var chain: [Int32] = []
        var next = pid
        while next > 0, chain.count < 4096, let entry = entry(next) {
            chain.append(next)
            if next == 1 { break }
            next = entry.parent
        }
        return chain
    }

    /// Every live process.
    public static func all() -> [Entry] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var entries: [Entry] = []
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = Int32(name), let entry = entry(pid) else { continue }
            entries.append(entry)
        }
        return entries
    }

    /// The children of `pid` now.
    public static func children(of pid: Int32) -> [Entry] {
        all().filter { $0.parent == pid }
    }

    /// Every descendant of `pid` now (not `pid` itself), parents before children.
    public static func descendants(of pid: Int32) -> [Entry] {
        descendants(of: [pid], in: all())
    }

    static func descendants(of roots: [Int32], in table: [Entry]) -> [Entry] {
        var byParent: [Int32: [Entry]] = [:]
        for entry in table { byParent[entry.parent, default: []].append(entry) }
        var found: [Entry] = []
        var queue = roots
        while let next = queue.first, found.count < 65536 {
            queue.removeFirst()
            for child in byParent[next] ?? [] {
                found.append(child)
                queue.append(child.pid)
            }
        }
        return found
    }

    /// SIGKILL to each of `entries` that is still the same process (pid and
    /// start time), so a pid reused since is left alone. Returns how many
    /// were sent.
    @discardableResult
    public static func kill(_ entries: [Entry]) -> Int {
        var sent = 0
        for entry in entries where !entry.isZombie && Self.entry(entry.pid)?.startTime == entry.startTime {
            if Glibc.kill(entry.pid, SIGKILL) == 0 { sent += 1 }
        }
        return sent
    }

    /// Kills `pid`'s whole tree now (a stray Carrel took in and everything
    /// under it), again while new children appear (a fork racing the kill),
    /// a few rounds at most. Returns how many processes were sent SIGKILL.
    @discardableResult
    public static func killTree(_ pid: Int32) -> Int {
        var sent = 0
        for _ in 0..<8 {
            var targets = descendants(of: pid).filter { !$0.isZombie }
            if let root = entry(pid), !root.isZombie { targets.insert(root, at: 0) }
            guard !targets.isEmpty else { break }
            let now = kill(targets)
            sent += now
            if now == 0 { break }
        }
        return sent
    }
}
