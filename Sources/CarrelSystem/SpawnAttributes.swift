import Glibc

/// posix_spawn attributes for every process Carrel and its privileged helper
/// start (the app, provider commands): Carrel blocks SIGCHLD, SIGTERM and
/// SIGINT for its signalfd and ignores SIGPIPE, the helper blocks SIGTERM and
/// SIGINT, and a child must start with the ordinary signal mask and
/// dispositions instead. `ownProcessGroup`: the child leads a process group
/// of its own, so that what it starts can be stopped with it.
public func withCleanSpawnAttributes<T>(ownProcessGroup: Bool = false,
                                        _ body: (inout posix_spawnattr_t) throws -> T) rethrows -> T {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var emptySet = sigset_t()
    sigemptyset(&emptySet)
    posix_spawnattr_setsigmask(&attributes, &emptySet)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGCHLD, SIGTERM, SIGINT, SIGPIPE] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    var flags = Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
    if ownProcessGroup {
        flags |= Int16(POSIX_SPAWN_SETPGROUP)
        posix_spawnattr_setpgroup(&attributes, 0)
    }
    posix_spawnattr_setflags(&attributes, flags)
    return try body(&attributes)
}
