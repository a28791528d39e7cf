/// The on-screen keyboard's decisions: whether a layer surface may be its
/// band, where the band goes (the exam and participants keep the space
/// above it), and where its keys go.
///
/// Only the on-screen-keyboard role, only while the session allows
/// `on_screen_keyboard`, only one surface. Its keys reach the focused
/// window of the session (the exam or a participant it shows) and nothing
/// else: not an untrusted window, not Carrel's own bindings (they are matched
/// on the physical keyboard only), and not the confirmation prompt or the
/// passcode entry, which answer to the person at the physical keyboard.
extension Desk {
    /// What the compositor does with the keyboard's layer surface after a commit.
    public enum OnScreenKeyboardPlacement: Sendable, Equatable {
        /// Configure it to `band`'s size and put it there; draw it only when
        /// `shown` (its contents stay inside the band).
        case place(band: Rect, shown: Bool)
        /// Close it (`closed`, then it is destroyed): it may not be the band.
        case close
    }

    /// Whether the session in force allows the keyboard.
    public var onScreenKeyboardAllowed: Bool { OnScreenKeyboard.runs(under: restrictions) }

    /// A client of `role` created a layer surface on `layer`: accepted only
    /// as the keyboard's one surface.
    public mutating func layerSurfaceCreated(by client: ClientID, role: Role,
                                             layer: OnScreenKeyboard.Layer?) -> (accepted: Bool, [DeskEffect]) {
        let refusal: String?
        if role != .onScreenKeyboard {
            refusal = "a client of role \(role) created a layer surface; only the on-screen keyboard may"
        } else if !onScreenKeyboardAllowed {
            refusal = "the on-screen keyboard created a layer surface while no session allows it"
        } else if let held = onScreenKeyboard.client {
            refusal = held == client ? "the on-screen keyboard created a second layer surface; it has one band"
                                     : "a second on-screen keyboard client created a layer surface; the first keeps the band"
        } else if layer != .top {
            refusal = "the on-screen keyboard asked for the \(layer.map(\.description) ?? "unknown") layer; only the top layer is allowed"
        } else {
            refusal = nil
        }
        if let refusal { return (false, refused(refusal, client: client)) }
        onScreenKeyboard.client = client
        return (true, [.log(SessionLogEntry(.info, "on-screen keyboard: its layer surface was accepted"))])
    }

    /// The keyboard's surface committed `request`; its contents (with
    /// subsurfaces) cover `extents` relative to its origin. `output` is the
    /// primary output (nil: none yet, it waits).
    public mutating func onScreenKeyboardCommitted(by client: ClientID, _ request: OnScreenKeyboard.Request,
                                                   extents: Rect, output: Rect?) -> (OnScreenKeyboardPlacement, [DeskEffect]) {
        guard client == onScreenKeyboard.client, onScreenKeyboardAllowed else {
            return (.close, refused("a layer surface that is not the on-screen keyboard's band committed", client: client))
        }
        if let refusal = OnScreenKeyboard.refusal(request) {
            return (.close, refused("the on-screen keyboard \(refusal); its surface is closed", client: client)
                + onScreenKeyboardSurfaceGone(client))
        }
        guard let output else { return (.place(band: Rect(x: 0, y: 0, width: 0, height: 0), shown: false), []) }
        let band = OnScreenKeyboard.band(desiredHeight: request.desiredHeight, output: output)
        let shown = OnScreenKeyboard.fits(extents: extents, in: band.size)
        var effects: [DeskEffect] = []
        if !shown {
            effects.append(.recordBlocked(kind: AuditKind.foreignWindow, client: client,
                                          detail: "the on-screen keyboard drew \(extents) beyond its \(band.size.width)x\(band.size.height) band; not shown until it fits"))
        }
        if onScreenKeyboard.height != band.height {
            onScreenKeyboard.height = band.height
            effects.append(.log(SessionLogEntry(.info, "on-screen keyboard: band \(band); the session's windows keep the space above it")))
            effects += screenChanged()
        }
        return (.place(band: band, shown: shown), effects)
    }

    /// The keyboard's surface is gone (closed, destroyed, its client ended):
    /// the session's windows get the whole output back.
    public mutating func onScreenKeyboardSurfaceGone(_ client: ClientID) -> [DeskEffect] {
        guard onScreenKeyboard.client == client else { return [] }
        let hadBand = onScreenKeyboard.height != nil
        onScreenKeyboard = OnScreenKeyboard()
        return hadBand ? screenChanged() : []
    }

    /// The part of `output` left to windows: all of it, or what is above the
    /// keyboard's band while it is placed.
    func areaAboveOnScreenKeyboard(_ output: Rect) -> Rect {
        guard onScreenKeyboardAllowed, let height = onScreenKeyboard.height else { return output }
        let band = OnScreenKeyboard.band(desiredHeight: height, output: output)
        return Rect(x: output.x, y: output.y, width: output.width, height: output.height - band.height)
    }

    /// A key from a virtual keyboard of a client of `role`: the input
    /// method's reach only the window that may compose; the on-screen
    /// keyboard's only the session's focused window while the session allows
    /// it and nothing at the machine is asking the person a question.
    /// Anyone else's, or with no such window, are dropped.
    public func virtualKeyboardKey(from client: ClientID, role: Role) -> [DeskEffect] {
        switch role {
        case .inputMethod:
            if client == inputMethod.engine, let target = compositionTarget { return [.deliverKey(window: target)] }
        case .onScreenKeyboard:
            guard onScreenKeyboardAllowed, askingConfirmation == nil, !passcodeEntry.isOpen,
                  let target = focusTarget, let owner = windows.owner(of: target),
                  owner.role == .app || owner.role == .participant, screenRules.shows(owner) else { break }
            return [.deliverKey(window: target)]
        case .app, .participant, .untrusted:
            break
        }
        return [.consumeKey]
    }

    private func refused(_ detail: String, client: ClientID) -> [DeskEffect] {
        [.log(SessionLogEntry(.warning, "on-screen keyboard: \(detail)")),
         .recordBlocked(kind: AuditKind.foreignWindow, client: client, detail: detail)]
    }
}
