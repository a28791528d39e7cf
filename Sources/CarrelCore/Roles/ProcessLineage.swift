/// A program Carrel launched itself, by what it was launched as.
public enum LaunchedProgram: Hashable, Sendable, CustomStringConvertible {
    case app
    case participant(String)
    case inputMethod
    case onScreenKeyboard

    public var description: String {
        switch self {
        case .app: return "the app"
        case .participant(let id): return "participant \(id)"
        case .inputMethod: return "the input method"
        case .onScreenKeyboard: return "the on-screen keyboard"
        }
    }
}

/// One of Carrel's listening sockets that gives its connections a trusted
/// role: the app's, or a participant's.
public enum PrivateSocket: Hashable, Sendable, CustomStringConvertible {
    case app
    case participant(String)

    public var description: String {
        switch self {
        case .app: return "the app's socket"
        case .participant(let id): return "participant \(id)'s socket"
        }
    }
}

/// Whose connection a private socket takes, by the connecting process's
/// lineage. Every program Carrel launches runs as Carrel's user in the
/// plain layout, so a path alone cannot keep a participant's child off the
/// app's socket: it would get the app role and could begin a session of its
/// own. Carrel is the subreaper of what it starts, so a process that left its
/// program's tree (a double fork) is Carrel's child, never init's, and is
/// still recognised.
public enum ProcessLineage {
    public enum Verdict: Equatable, Sendable {
        case allowed
        case refused(String)
    }

    /// Whether the process whose `ancestry` is given (its own pid first,
    /// then its parent's, up to pid 1, as /proc says) may connect through
    /// `socket`. A descendant of a program Carrel launched may use only that
    /// program's own socket (the nearest launched ancestor decides); one
    /// that Carrel took in as an orphan may use none; a process that is not
    /// Carrel's descendant at all (a client started beside Carrel, told the
    /// path) is as today: the socket's 0700 directory is its guard. An empty
    /// ancestry (the process is gone) is refused.
    public static func mayConnect(to socket: PrivateSocket, ancestry: [Int32], carrel: Int32,
                                  launched: [Int32: LaunchedProgram]) -> Verdict {
        guard !ancestry.isEmpty else {
            // Connected and gone before Carrel looked (the connection may
            // have been handed to a child): whose it is cannot be known.
            return .refused("the connecting process ended before Carrel could see whose it is; it may not connect through \(socket)")
        }
        for pid in ancestry {
            if let program = launched[pid] {
                switch (program, socket) {
                case (.app, .app):
                    return .allowed
                case (.participant(let own), .participant(let id)) where own == id:
                    return .allowed
                default:
                    return .refused("pid \(ancestry.first ?? 0) descends from \(program) (pid \(pid)), which may connect only through its own connection, not \(socket)")
                }
            }
            if pid == carrel {
                return .refused("pid \(ancestry.first ?? 0) left the process tree of the program Carrel launched it under (Carrel took it in as an orphan); it may not connect through \(socket)")
            }
        }
        return .allowed
    }

    /// The processes to end as strays: Carrel's children that are none of
    /// the programs it launched (`launched`), that is orphans it took in as
    /// the subreaper — what a participant, the input method, the keyboard or
    /// the app left behind when it double-forked. None may outlive a session.
    public static func strays(children: [Int32], launched: Set<Int32>) -> [Int32] {
        children.filter { !launched.contains($0) }.sorted()
    }
}
