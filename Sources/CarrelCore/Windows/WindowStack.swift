/// The toplevels Carrel knows, in stacking order, with whose each is and
/// whether it is mapped: what focus and the kiosk gap are decided from.
/// Untrusted windows live in a layer under everyone else's, so for focus
/// they count as lower than any other window whatever their order.
public struct WindowStack: Sendable, Equatable {
    /// One toplevel.
    public struct Entry: Sendable, Equatable {
        public var id: WindowID
        public var owner: WindowOwner
        public var isMapped: Bool
        public var summary: WindowSummary { WindowSummary(id: id, role: owner.role, isMapped: isMapped) }
    }

    /// Bottom to top within each layer; a window moves to the top when it maps.
    public private(set) var entries: [Entry] = []

    public init() {}

    /// A toplevel was created (not mapped yet).
    public mutating func created(_ id: WindowID, owner: WindowOwner) {
        guard !entries.contains(where: { $0.id == id }) else { return }
        entries.append(Entry(id: id, owner: owner, isMapped: false))
    }

    /// A toplevel mapped: it goes on top.
    public mutating func mapped(_ id: WindowID) {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return }
        var entry = entries.remove(at: index)
        entry.isMapped = true
        entries.append(entry)
    }

    /// A toplevel mapped beneath `other` (when that window is mapped), so
    /// the window on top, and with it the focus, stays where it was.
    public mutating func mapped(_ id: WindowID, beneath other: WindowID?) {
        mapped(id)
        guard let other, let top = entries.firstIndex(where: { $0.id == other && $0.isMapped }),
              let index = entries.lastIndex(where: { $0.id == id }), index > top else { return }
        entries.insert(entries.remove(at: index), at: top)
    }

    /// Moves a mapped window to the top of its layer without remapping it.
    public mutating func raise(_ id: WindowID) {
        guard let index = entries.firstIndex(where: { $0.id == id && $0.isMapped }) else { return }
        entries.append(entries.remove(at: index))
    }

    public mutating func unmapped(_ id: WindowID) {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return }
        entries[index].isMapped = false
    }

    public mutating func destroyed(_ id: WindowID) {
        entries.removeAll { $0.id == id }
    }

    public func owner(of id: WindowID) -> WindowOwner? {
        entries.first { $0.id == id }?.owner
    }

    /// Roles of the mapped toplevels.
    public var mappedRoles: [Role] { entries.filter(\.isMapped).map(\.owner.role) }

    /// The topmost mapped window of `role`.
    public func topmostMapped(role: Role) -> Entry? {
        entries.last { $0.isMapped && $0.owner.role == role }
    }

    /// The window that should hold keyboard focus under `rules`: while input
    /// is confined, only windows the rules show are candidates.
    public func focusTarget(under rules: ScreenRules) -> WindowID? {
        let stacking = entries.filter { $0.owner.role == .untrusted } + entries.filter { $0.owner.role != .untrusted }
        let candidates = rules.confinesInput ? stacking.filter { rules.shows($0.owner) } : stacking
        return Focus.target(stack: candidates.map(\.summary), untrustedMayFocus: rules.untrustedMayFocus)
    }
}
