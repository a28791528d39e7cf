/// A client bug in using a session, for the compositor to raise as a
/// protocol error (which disconnects the client; it then reports
/// `Invigilator.clientDisconnected`).
public enum ProtocolViolation: Sendable, Hashable, CustomStringConvertible {
    /// `begin` named a surface without the xdg_toplevel role. Raised on the
    /// manager object that sent `begin`.
    case badSurface(SessionID)
    /// `end` or `update` before `began`. Raised on the session.
    case notBegun(SessionID)
    /// `end` after `end`. Raised on the session.
    case alreadyEnded(SessionID)

    public var session: SessionID {
        switch self {
        case .badSurface(let id), .notBegun(let id), .alreadyEnded(let id): return id
        }
    }

    /// The interface whose error enum holds `code`.
    public var interface: String {
        switch self {
        case .badSurface: return AssessmentProtocol.managerInterface
        case .notBegun, .alreadyEnded: return AssessmentProtocol.sessionInterface
        }
    }

    /// The protocol error code, from the interface's `error` enum.
    public var code: UInt32 {
        switch self {
        case .badSurface: return 0
        case .notBegun: return 0
        case .alreadyEnded: return 1
        }
    }

    /// The message to post: what the client did and what it should do.
    public var description: String {
        switch self {
        case .badSurface:
            return "begin: the surface has no xdg_toplevel role; pass the exam window's toplevel surface"
        case .notBegun:
            return "end or update sent before began; wait for began (or failed) first"
        case .alreadyEnded:
            return "end sent twice; the session already ended, destroy the object"
        }
    }
}
