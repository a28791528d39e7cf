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
    /// The policy's on-screen keyboard (wvkbd), which Carrel launches on a
    /// socket of its own only for a session that allows `on_screen_keyboard`:
    /// the only client that may bind the layer shell, and one of the two that
    /// may bind the virtual keyboard.
    case onScreenKeyboard = "on_screen_keyboard"

    public var description: String { rawValue }
}
