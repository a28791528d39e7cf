import CarrelHelperRequests
import Glibc

// carrel-privileged: the root side of Carrel's privilege separation. See
// docs/DEPLOY.md ("Privilege separation") for who runs as whom.

func recoverAndExit(_ options: HelperOptions) -> Never {
    var status: Int32 = 0
    do {
        if try Nftables(tableName: options.tableName).delete() {
            log("recover: deleted the table inet \(options.tableName)")
        }
    } catch {
        log("recover: \(error.message)")
        status = 1
    }
    // Only empty ones: Carrel may still run and own processes in them.
    for problem in DelegatedCgroups(subtree: options.cgroupSubtree).removeAll(kill: false) {
        log("recover: \(problem); left in place")
    }
    exit(status)
}

signal(SIGPIPE, SIG_IGN)
do throws(HelperError) {
    let options = try HelperOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    guard geteuid() == 0 else {
        throw HelperError("must run as root: it loads nftables rules and starts programs as other users (the unit carrel-privileged.service runs it so)")
    }
    if options.recoverOnly { recoverAndExit(options) }
    let server = try HelperServer(options: options)
    // A table a crashed helper left goes before anyone can connect.
    try Nftables(tableName: options.tableName).delete()
    try server.listen()
    server.run()
} catch {
    log(error.message)
    exit(error.status)
}
