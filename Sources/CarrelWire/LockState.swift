/// Whether any client's session is pending or active; the protocol's
/// `lock_state` enum. Managers learn it on bind and on every change, so an
/// exam app can check before it begins. A hint, not a promise: another
/// client may begin in the meantime.
public enum LockState: UInt32, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case inactive = 0
    /// A `begin` sent now would be answered with `failed(already_active)`.
    case active = 1

    public var description: String { self == .active ? "active" : "inactive" }
}
