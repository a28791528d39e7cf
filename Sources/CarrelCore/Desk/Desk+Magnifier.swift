/// The magnifier's keys and when it goes back to off.
///
/// The keys act only while the live session is active and allows
/// `screen_magnifier`; at any other time they are ordinary keys and go to
/// the focused window. The magnifier is reset to off whenever that stops
/// holding: the session is interrupted, ends, fails or is destroyed (its
/// restrictions lifted), or an update denies the feature.
extension Desk {
    /// Whether the magnifier keys act now.
    public var magnifierAllowed: Bool {
        guard let restrictions, restrictions.allowedFeatures.contains(.screenMagnifier),
              let live = invigilator.liveSession, live.id == restrictions.session else { return false }
        return live.phase == .active
    }

    /// A pressed key that is one of the magnifier's, while it is allowed:
    /// consumed, with the new magnifier to draw. Nil for any other key.
    mutating func magnifierKey(_ key: KeyPress) -> [DeskEffect]? {
        guard let action = magnifierKeys.action(forPressed: key.keysyms, modifiers: key.modifiers,
                                                magnifierAllowed: magnifierAllowed) else { return nil }
        var next = magnifier
        switch action {
        case .zoomIn: next.zoomIn()
        case .zoomOut: next.zoomOut()
        case .zoomOff: next.zoomOff()
        case .nextColourFilter: next.nextColourFilter()
        }
        guard next != magnifier else { return [.consumeKey] }
        magnifier = next
        return [.consumeKey, .log(SessionLogEntry(.info, "magnifier: \(next)")), .drawMagnifier(next)]
    }

    /// Back to off (nothing drawn), when it was not already.
    mutating func resetMagnifier(_ why: String) -> [DeskEffect] {
        guard magnifier != .off else { return [] }
        magnifier = .off
        return [.log(SessionLogEntry(.info, "magnifier: off: \(why)")), .drawMagnifier(.off)]
    }
}
