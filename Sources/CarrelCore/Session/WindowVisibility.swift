/// What the compositor needs to know about one window to decide whether a
/// session may show it: whose it is, never what it claims to be.
public struct WindowOwner: Sendable, Hashable {
    public var client: ClientID
    public var role: Role
    /// The participant id Carrel launched the client as, if any.
    public var participantID: String?

    public init(client: ClientID, role: Role, participantID: String? = nil) {
        self.client = client
        self.role = role
        self.participantID = participantID
    }
}

extension RestrictionSet {
    /// Whether a window of `owner` may be rendered, focused and given input
    /// while these restrictions hold: the session owner's windows, and those
    /// of participants the configuration names. Everything else stays out of
    /// the visible scene (disabled, not merely covered).
    public func shows(_ owner: WindowOwner) -> Bool {
        guard hideUntrustedWindows else { return true }
        if owner.client == self.owner { return true }
        if owner.role == .participant, let id = owner.participantID, participants.contains(id) { return true }
        return false
    }
}

/// The per-frame invariant behind "nothing but the exam can be seen": given
/// the windows a frame is about to render, the ones a session must not show.
/// The compositor checks it for every rendered frame in debug and test builds.
public enum SceneAudit {
    /// One window as the scene holds it.
    public struct Entry: Sendable, Hashable {
        public var window: WindowID
        public var owner: WindowOwner
        /// Whether the window's node — and every ancestor — is enabled.
        public var isEnabled: Bool
        /// The area Core gave the window (`Desk.area(for:output:)`).
        public var area: Rect?
        /// The bounding box of what the frame draws for the window (its
        /// buffer, subsurfaces and popups, as the scene's clip cuts them);
        /// nil when it draws nothing or the scene cannot say.
        public var drawn: Rect?

        public init(window: WindowID, owner: WindowOwner, isEnabled: Bool, area: Rect? = nil, drawn: Rect? = nil) {
            self.window = window
            self.owner = owner
            self.isEnabled = isEnabled
            self.area = area
            self.drawn = drawn
        }
    }

    /// Windows that would draw a pixel outside the area Core gave them: a
    /// participant over the exam, the exam over a participant's column.
    public static func outsideArea(_ entries: [Entry]) -> [WindowID] {
        entries.filter { entry in
            guard entry.isEnabled, let area = entry.area, let drawn = entry.drawn else { return false }
            return !area.contains(drawn)
        }.map(\.window)
    }

    /// Windows that are enabled although `restrictions` hide them; empty when
    /// no restrictions hold or the scene is as it must be.
    public static func violations(_ entries: [Entry], under restrictions: RestrictionSet?) -> [WindowID] {
        guard let restrictions else { return [] }
        return entries.filter { $0.isEnabled && !restrictions.shows($0.owner) }.map(\.window)
    }
}
