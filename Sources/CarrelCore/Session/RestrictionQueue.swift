/// The compositor runs one restriction plan at a time. An apply's providers
/// answer later (an nft load, the privileged helper), and Core hears each
/// apply's outcome once, in the order it asked (`Invigilator`); a revert
/// asked for meanwhile (the session was released while restricting) must
/// come down after what that apply put up, and the next apply must find the
/// revert's work started before its own. So requests wait here, in order,
/// behind the one in flight.
public struct RestrictionQueue: Sendable, Equatable {
    public enum Request: Sendable, Equatable, CustomStringConvertible {
        case apply(RestrictionSet)
        case revert(SessionID)

        public var description: String {
            switch self {
            case .apply(let set): return "apply \(set.session)"
            case .revert(let id): return "revert \(id)"
            }
        }
    }

    /// The request whose plan runs now.
    public private(set) var inFlight: Request?
    /// Those asked for since, oldest first.
    public private(set) var waiting: [Request] = []

    public init() {}

    /// `request` was asked for: returned when it is to run now (nothing is
    /// in flight; it is then in flight), nil when it waits its turn.
    public mutating func ask(_ request: Request) -> Request? {
        guard inFlight == nil else {
            waiting.append(request)
            return nil
        }
        inFlight = request
        return request
    }

    /// The plan in flight is over (its outcome reported): the next request
    /// to run, now in flight, if one waits.
    public mutating func finished() -> Request? {
        inFlight = waiting.isEmpty ? nil : waiting.removeFirst()
        return inFlight
    }

}
