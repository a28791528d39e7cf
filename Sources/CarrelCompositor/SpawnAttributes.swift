import Glibc

/// posix_spawn attributes for every process Carrel starts (the app, provider
/// commands): Carrel blocks SIGCHLD, SIGTERM and SIGINT for its signalfd and
/// ignores SIGPIPE, and a child must start with the ordinary signal mask and
/// dispositions instead.
func withCleanSpawnAttributes<T>(_ body: (inout posix_spawnattr_t) throws -> T) rethrows -> T {
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
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    return try body(&attributes)
}
