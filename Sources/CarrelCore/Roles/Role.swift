/// Who a Wayland client is, decided once when Carrel accepts its connection,
/// from the socket it came through. Nothing a client says about
/// itself (app_id, pid, executable) changes its role.
public enum Role: String, Sendable, CaseIterable, Hashable, CustomStringConvertible {
    /// The exam app Carrel launched and its children, through the app socket.
    case app
    /// An app the policy names and Carrel launches for a session.
    case participant
    /// Everyone else, through the public socket.
    case untrusted

    public var description: String { rawValue }
}
