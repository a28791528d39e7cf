/// The exam app as the server watches it, however it was started: by Carrel
/// itself (`AppProcess`, its child) or by the privileged helper
/// (`HelperLaunchedApp`, which hears of its end from the helper).
protocol LaunchedApp: AnyObject {
    /// How it ended, once, after it has; nil while it runs.
    func reap() -> AppExit?
    /// Asks it to end, then kills it after `grace` seconds.
    func terminate(grace: Double)
}

extension AppProcess: LaunchedApp {}
