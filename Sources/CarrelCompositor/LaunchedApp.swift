import Glibc

/// The exam app (or a participant) as Carrel watches it, however it was
/// started: by Carrel itself (`AppProcess`, its child) or by the privileged
/// helper (`HelperLaunchedApp`, which hears of its end from the helper).
protocol LaunchedApp: AnyObject {
    /// How the log names it ("pid 812", "helper program 3").
    var label: String { get }
    /// Its pid when it is Carrel's own child; nil when the helper started it.
    var childPid: pid_t? { get }
    /// Kills what is left of its process group once it has exited.
    func endGroup()
    /// How it ended, once, after it has; nil while it runs.
    func reap() -> AppExit?
    /// Asks it to end, then kills it after `grace` seconds.
    func terminate(grace: Double)
    /// Ends it and everything it started now (SIGKILL), without waiting:
    /// `reap` collects it once it has gone.
    func kill()
}

extension AppProcess: LaunchedApp {
    var label: String { "pid \(pid)" }
    var childPid: pid_t? { pid }
}
