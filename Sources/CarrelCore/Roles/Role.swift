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
    /// The policy's input method (fcitx5), which Carrel launches on a socket
    /// of its own: the only client that may bind the input-method and
    /// virtual-keyboard globals.
    case inputMethod = "input_method"

    public var description: String { rawValue }
}
