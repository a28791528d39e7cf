/// Identifies a window across Core decisions without holding a pointer.
public struct WindowID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let raw: UInt64
    public init(_ raw: UInt64) { self.raw = raw }
    public static func < (a: WindowID, b: WindowID) -> Bool { a.raw < b.raw }
    public var description: String { "#\(raw)" }
}

/// What focus decisions need to know about a window.
public struct WindowSummary: Sendable, Equatable {
    public var id: WindowID
    public var role: Role
    public var isMapped: Bool
    public init(id: WindowID, role: Role, isMapped: Bool) {
        self.id = id; self.role = role; self.isMapped = isMapped
    }
}

/// Keyboard focus policy.
public enum Focus {
    /// The window that should hold keyboard focus: the topmost mapped window
    /// of a role allowed focus. `stack` is ordered bottom to top. Untrusted
    /// windows never take focus from the app; they get it only when no window
    /// of a focusable role is mapped and `untrustedMayFocus` allows it.
    public static func target(
        stack: [WindowSummary],
        focusableRoles: Set<Role> = [.app, .participant],
        untrustedMayFocus: Bool = true
    ) -> WindowID? {
        if let top = stack.last(where: { $0.isMapped && focusableRoles.contains($0.role) }) {
            return top.id
        }
        guard untrustedMayFocus else { return nil }
        return stack.last(where: { $0.isMapped })?.id
    }
}
