import CarrelClientShim
import WaylandClientSupport
#if canImport(Glibc)
import Glibc
#endif

/// One attack's outcome.
struct Verdict {
    let attack: Attack
    let succeeded: Bool
    let detail: String

    var json: JSON {
        .object([("attack", .string(attack.rawValue)),
                 ("verdict", .string(succeeded ? "succeeded" : "blocked")),
                 ("detail", .string(detail))])
    }
}

/// Interfaces no untrusted client of an exam compositor should see: they
/// read the screen or the clipboard, inject input, draw over everything,
/// manage other windows or outputs, or take focus.
let privilegedInterfaces = [
    "zwlr_screencopy_manager_v1", "zwlr_export_dmabuf_manager_v1", "zwlr_data_control_manager_v1",
    "zwp_virtual_keyboard_manager_v1", "zwlr_virtual_pointer_manager_v1", "zwlr_layer_shell_v1",
    "zwlr_foreign_toplevel_manager_v1", "zwlr_gamma_control_manager_v1", "zwlr_output_manager_v1",
    "zwlr_output_power_manager_v1", "zwlr_input_inhibit_manager_v1",
    "zwp_keyboard_shortcuts_inhibit_manager_v1", "zwp_input_method_manager_v2", "xdg_activation_v1",
    "ext_session_lock_manager_v1",
    // Their newer ext- counterparts, for compositors other than wlroots 0.15.
    "ext_image_copy_capture_manager_v1", "ext_data_control_manager_v1", "ext_foreign_toplevel_list_v1",
]
let captureInterfaces = ["zwlr_screencopy_manager_v1", "zwlr_export_dmabuf_manager_v1",
                         "ext_image_copy_capture_manager_v1"]
let assessmentInterface = "carrel_assessment_manager_v1"
let textInputInterface = "zwp_text_input_manager_v3"

/// Runs the attacks in turn on one main connection (a fresh one if the
/// compositor closed the previous), plus throwaway connections for binds
/// that end in a protocol error.
final class Probe {
    let options: ProbeOptions
    private var session: Session?
    private let marker: String

    init(options: ProbeOptions) {
        self.options = options
        marker = options.marker ?? "carrel-probe-\(getpid())"
    }

    var timeout: Double { options.timeout }

    /// The main connection, reconnecting when the last one was closed.
    func liveSession() throws -> Session {
        if let session, session.connection.failure == nil { return session }
        session = nil
        let fresh = try Session(timeout: timeout)
        session = fresh
        return fresh
    }

    func run(_ attack: Attack) throws -> Verdict {
        let session = try liveSession()
        let verdict: Verdict
        switch attack {
        case .bindPrivileged: verdict = bindPrivileged(session)
        case .bindHidden: verdict = try bindHidden(session)
        case .capture: verdict = advertised(.capture, session, interfaces: captureInterfaces,
                                            what: "a client could copy the screen's pixels")
        case .injectKeys: verdict = advertised(.injectKeys, session, interfaces: ["zwp_virtual_keyboard_manager_v1"],
                                               what: "a client could type into the focused window")
        case .layerSurface: verdict = advertised(.layerSurface, session, interfaces: ["zwlr_layer_shell_v1"],
                                                 what: "a client could draw a panel or overlay above every window")
        case .mapToplevel: verdict = mapToplevel(session)
        case .mapPopup: verdict = mapPopup(session)
        case .stealFocus: verdict = stealFocus(session)
        case .raiseActivate: verdict = raiseActivate(session)
        case .clipboardRead: verdict = clipboardRead(session)
        case .clipboardWrite: verdict = clipboardWrite(session)
        }
        if let failure = session.connection.failure {
            // The compositor ended the main connection during this attack:
            // whatever the attack wanted, it ends here.
            let ended = session.connection.endedByProtocolError ? "the compositor closed the connection" : "the connection broke"
            return Verdict(attack: attack, succeeded: verdict.succeeded,
                           detail: verdict.detail + "; then \(ended): \(failure)")
        }
        return verdict
    }

    /// Keeps the windows mapped and the selection served for `seconds`.
    func hold(_ seconds: Double) {
        guard seconds > 0, let session, session.connection.failure == nil else { return }
        session.connection.pump(timeout: seconds) { false }
    }

    // MARK: Registry attacks

    private func bindPrivileged(_ session: Session) -> Verdict {
        var wanted = privilegedInterfaces
        // Only the app may see the assessment global.
        if options.role != .app { wanted.append(assessmentInterface) }
        // Text input is the app's and participants' (composed text from the
        // input method); never an untrusted client's.
        if options.role == .untrusted || options.role == .onScreenKeyboard { wanted.append(textInputInterface) }
        // The on-screen keyboard's own: its band and its keys.
        if options.role == .onScreenKeyboard {
            wanted.removeAll { $0 == "zwlr_layer_shell_v1" || $0 == "zwp_virtual_keyboard_manager_v1" }
        }
        let offered = session.connection.globals.filter { wanted.contains($0.interface) }
        if offered.isEmpty {
            return Verdict(attack: .bindPrivileged, succeeded: false,
                           detail: "none of \(wanted.count) privileged interfaces is advertised "
                               + "(the registry lists \(session.connection.globals.count) globals, "
                               + "probing as \(options.role.rawValue))")
        }
        let list = offered.map { "\($0.interface) v\($0.version) (name \($0.name))" }
        return Verdict(attack: .bindPrivileged, succeeded: true,
                       detail: "advertised to this client: \(list.joined(separator: ", "))")
    }

    private func advertised(_ attack: Attack, _ session: Session, interfaces: [String], what: String) -> Verdict {
        let offered = session.connection.globals.filter { interfaces.contains($0.interface) }
        if offered.isEmpty {
            return Verdict(attack: attack, succeeded: false,
                           detail: "blocked: global not offered (\(interfaces.joined(separator: ", ")))")
        }
        return Verdict(attack: attack, succeeded: true,
                       detail: "\(offered.map { "\($0.interface) v\($0.version)" }.joined(separator: ", ")) "
                           + "advertised: \(what) (the probe does not carry this protocol, so it stops at the registry)")
    }

    /// Binds, each on a connection of its own, every global name the registry
    /// skipped (and one past the last): first with an interface name no
    /// global has, which libwayland refuses with an error naming the real
    /// interface of a global that exists; then with that interface.
    private func bindHidden(_ session: Session) throws -> Verdict {
        let names = Set(session.connection.globals.map(\.name))
        let highest = names.max() ?? 0
        var candidates = (1...(highest + 1)).filter { !names.contains($0) }
        if candidates.count > 32 { candidates = Array(candidates.prefix(31)) + [highest + 1] }

        var notes: [String] = []
        var bound: [String] = []
        for name in candidates {
            let nonsense = "carrel_probe_no_such_interface"
            let first = try attemptBind(name: name, interface: nonsense)
            if first.accepted {
                bound.append("name \(name) accepted a bind as '\(nonsense)'")
                continue
            }
            guard let real = first.revealedInterface else {
                notes.append("\(name): refused: \(first.failure)")
                continue
            }
            let second = try attemptBind(name: name, interface: real)
            if second.accepted {
                bound.append("name \(name) (\(real)) bound though not advertised")
            } else {
                notes.append("\(name): \(real) exists but is hidden (libwayland names it in the error for a bind "
                             + "with the wrong interface); binding it was refused: \(second.failure)")
            }
        }
        if !bound.isEmpty {
            return Verdict(attack: .bindHidden, succeeded: true, detail: (bound + notes).joined(separator: "; "))
        }
        return Verdict(attack: .bindHidden, succeeded: false,
                       detail: "every bind of a name the registry did not advertise ended the connection: "
                           + notes.joined(separator: "; "))
    }

    private struct BindAttempt {
        var accepted: Bool
        var failure: String
        var revealedInterface: String?
    }

    private func attemptBind(name: UInt32, interface: String) throws -> BindAttempt {
        let connection = try ProbeConnection()
        let description = carrel_client_interface(interface) ?? carrel_client_opaque_interface(interface)!
        connection.forceBind(name: name, interface: description, version: 1)
        let finished = connection.roundtrip(timeout: timeout)
        if connection.failure == nil && finished {
            return BindAttempt(accepted: true, failure: "")
        }
        // An error from the compositor refuses the bind; a failure on this
        // side (an event this description cannot decode) means the bind went
        // through and the global is already talking.
        if connection.failure != nil && !connection.endedByProtocolError {
            return BindAttempt(accepted: true, failure: "")
        }
        let failure = connection.failure ?? "no answer within \(secondsText(timeout))"
        return BindAttempt(accepted: false, failure: failure,
                           revealedInterface: Probe.revealedInterface(in: failure, asked: interface))
    }

    /// libwayland's "invalid interface for global N: have ASKED, wanted REAL".
    static func revealedInterface(in text: String, asked: String) -> String? {
        let words = text.split(separator: " ")
        guard let index = words.firstIndex(of: "wanted"), index + 1 < words.endIndex else { return nil }
        let real = words[index + 1].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return real.isEmpty || real == asked ? nil : String(real)
    }

    // MARK: Window attacks

    /// Maps the probe's toplevel once; later attacks reuse it.
    private func ensureWindow(_ session: Session) -> (ProbeSurface, created: Double)? {
        if let window = session.window { return (window, windowCreated) }
        guard session.cannotMapReason == nil else { return nil }
        let window = ProbeSurface(toplevelIn: session, title: "carrel-probe", color: options.color)
        session.window = window
        windowCreated = now()
        return (window, windowCreated)
    }
    private var windowCreated = 0.0

    /// Waits for keyboard focus on one of the probe's surfaces until
    /// `timeout` after the window was created (a window mapped by an earlier
    /// attack has had its chance already), and for its first configure.
    private func waitForFocus(_ session: Session, _ window: ProbeSurface) {
        let canFocus = session.seat?.hasKeyboardCapability ?? false
        let left = max(windowCreated + timeout - now(), 0.01)
        session.connection.pump(timeout: left) {
            window.hasBuffer && (!canFocus || session.firstKeyboardFocus != nil)
        }
    }

    private func mapToplevel(_ session: Session) -> Verdict {
        if let reason = session.cannotMapReason {
            return Verdict(attack: .mapToplevel, succeeded: false, detail: "blocked: \(reason)")
        }
        let (window, created) = ensureWindow(session)!
        let canFocus = session.seat?.hasKeyboardCapability ?? false
        session.connection.pump(timeout: timeout) {
            window.frameDoneAt != nil && (!canFocus || session.seat?.hadKeyboardFocus(on: window.surface) != nil)
        }
        let focused = session.seat?.hadKeyboardFocus(on: window.surface) != nil
        let drawn = window.frameDoneAt != nil
        let detail = window.describe(timeout: timeout) + "; "
            + session.focusText(surface: window.surface, since: created, timeout: timeout)
        return Verdict(attack: .mapToplevel, succeeded: focused || drawn, detail: detail)
    }

    private func mapPopup(_ session: Session) -> Verdict {
        if let reason = session.cannotMapReason {
            return Verdict(attack: .mapPopup, succeeded: false, detail: "blocked: \(reason)")
        }
        let (window, _) = ensureWindow(session)!
        session.connection.pump(timeout: timeout) { window.hasBuffer }
        guard window.hasBuffer else {
            return Verdict(attack: .mapPopup, succeeded: false,
                           detail: "blocked: the parent toplevel was never configured within "
                               + "\(secondsText(timeout)), so no popup could be placed on it")
        }
        if session.popup == nil {
            let serial = session.seat?.latestSerial
            session.popup = ProbeSurface(popupOf: window, in: session, color: options.color,
                                         grabSerial: session.seat == nil ? nil : (serial ?? 0))
            popupGrab = session.seat == nil ? "no grab (no seat)"
                : "xdg_popup.grab with serial \(serial.map(String.init) ?? "0 (the probe was given none)")"
        }
        let popup = session.popup!
        let created = now()
        session.connection.pump(timeout: timeout) {
            popup.frameDoneAt != nil || popup.popupDismissed || session.seat?.hadKeyboardFocus(on: popup.surface) != nil
        }
        let focused = session.seat?.hadKeyboardFocus(on: popup.surface) != nil
        let drawn = popup.frameDoneAt != nil
        let detail = "\(popupGrab); " + popup.describe(timeout: timeout) + "; "
            + session.focusText(surface: popup.surface, since: created, timeout: timeout)
        return Verdict(attack: .mapPopup, succeeded: focused || drawn, detail: detail)
    }
    private var popupGrab = ""

    private func stealFocus(_ session: Session) -> Verdict {
        if let reason = session.cannotMapReason {
            return Verdict(attack: .stealFocus, succeeded: false, detail: "blocked: \(reason) (no window to focus)")
        }
        let (window, created) = ensureWindow(session)!
        waitForFocus(session, window)
        let focused = session.firstKeyboardFocus != nil
        var detail = session.focusText(surface: window.surface, since: created, timeout: timeout)
        if let popup = session.popup, session.seat?.hadKeyboardFocus(on: popup.surface) != nil {
            detail += "; the popup had keyboard focus"
        }
        return Verdict(attack: .stealFocus, succeeded: focused, detail: detail)
    }

    private func raiseActivate(_ session: Session) -> Verdict {
        if let reason = session.cannotMapReason {
            return Verdict(attack: .raiseActivate, succeeded: false, detail: "blocked: \(reason)")
        }
        let (window, _) = ensureWindow(session)!
        session.connection.pump(timeout: timeout) { window.hasBuffer }
        let hadFocus = session.hasKeyboardFocus
        let configuresBefore = window.configures
        window.setFullscreenAndMaximized()
        session.connection.pump(timeout: timeout) {
            session.hasKeyboardFocus && window.configures > configuresBefore
        }
        let focused = session.hasKeyboardFocus
        var parts = ["asked for maximized and fullscreen"]
        if window.configures > configuresBefore {
            parts.append("re" + (window.configurationText ?? "configured"))
        } else {
            parts.append("no configure answered the requests within \(secondsText(timeout))")
        }
        parts.append("keyboard focus before: \(hadFocus ? "yes" : "no"), after: \(focused ? "yes" : "no")")
        if !focused, let seat = session.seat, !seat.hasKeyboardCapability {
            parts.append("the seat has no keyboard (capabilities: \(seat.capabilitiesText)), so focus cannot be observed")
        }
        if let activation = session.connection.global("xdg_activation_v1") {
            parts.append("xdg_activation_v1 v\(activation.version) is advertised (see bind_privileged); "
                         + "the probe does not carry that protocol, so it did not request activation")
        } else {
            parts.append("xdg_activation_v1 is not offered")
        }
        return Verdict(attack: .raiseActivate, succeeded: focused, detail: parts.joined(separator: "; "))
    }

    // MARK: Clipboard attacks

    private func clipboardRead(_ session: Session) -> Verdict {
        guard let clipboard = session.clipboard else {
            return Verdict(attack: .clipboardRead, succeeded: false,
                           detail: "blocked: wl_data_device_manager or wl_seat not offered")
        }
        var focusNote = ""
        if let (window, created) = ensureWindow(session) {
            // The selection goes to the client with keyboard focus, when it gets it.
            waitForFocus(session, window)
            session.connection.pump(timeout: timeout) { clipboard.selection != nil }
            focusNote = session.focusText(surface: window.surface, since: created, timeout: timeout)
        } else {
            session.connection.pump(timeout: timeout) { clipboard.selection != nil }
            focusNote = "no window (\(session.cannotMapReason ?? ""))"
        }
        guard let offer = clipboard.selection else {
            return Verdict(attack: .clipboardRead, succeeded: false,
                           detail: "no selection was offered to the probe within \(secondsText(timeout)) "
                               + "(\(clipboard.selectionEvents) selection events, all empty); \(focusNote)")
        }
        if offer.mimeTypes.contains(ProbeSource.ownType) {
            return Verdict(attack: .clipboardRead, succeeded: false,
                           detail: "the only selection offered is the probe's own; \(focusNote)")
        }
        let preferred = ProbeSource.textTypes.first(where: offer.mimeTypes.contains) ?? offer.mimeTypes.first
        guard let mime = preferred else {
            return Verdict(attack: .clipboardRead, succeeded: false,
                           detail: "a selection was offered with no MIME types; \(focusNote)")
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            return Verdict(attack: .clipboardRead, succeeded: false,
                           detail: "a selection was offered (\(offer.mimeTypes.joined(separator: ", "))) but the probe "
                               + "could not make a pipe to read it: \(errnoText())")
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        wl_data_offer_receive(offer.offer, mime, fds[1])
        _ = wl_display_flush(session.connection.display)
        close(fds[1])
        var data: [UInt8] = []
        var ended = false
        let readFd = fds[0]
        session.connection.pump(timeout: timeout, extra: readFd, onExtra: {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(readFd, &chunk, chunk.count)
            if n > 0 { data += chunk[0..<n] } else { ended = true }
        }) { ended || data.count >= 65536 }
        close(readFd)
        let types = offer.mimeTypes.joined(separator: ", ")
        if data.isEmpty {
            return Verdict(attack: .clipboardRead, succeeded: false,
                           detail: "a selection was offered (\(types)) but reading \(mime) gave no data "
                               + "\(ended ? "(the writer closed the pipe)" : "within \(secondsText(timeout))"); \(focusNote)")
        }
        let text = String(decoding: data.prefix(64), as: UTF8.self)
        return Verdict(attack: .clipboardRead, succeeded: true,
                       detail: "read \(data.count) bytes of \(mime) from the selection (offered: \(types)): "
                           + "\"\(text)\"\(data.count > 64 ? "..." : ""); \(focusNote)")
    }

    private func clipboardWrite(_ session: Session) -> Verdict {
        guard let clipboard = session.clipboard, let manager = session.dataDeviceManager else {
            return Verdict(attack: .clipboardWrite, succeeded: false,
                           detail: "blocked: wl_data_device_manager or wl_seat not offered")
        }
        if let (window, _) = ensureWindow(session) {
            waitForFocus(session, window)
        }
        let serial = session.seat?.latestSerial
        let hadFocus = session.hasKeyboardFocus
        let source = ProbeSource(manager: manager, marker: marker)
        session.source = source
        clipboard.setSelection(source.source, serial: serial ?? 0)
        let isOurs = { clipboard.selection?.mimeTypes.contains(ProbeSource.ownType) ?? false }
        session.connection.pump(timeout: timeout) { source.cancelled || isOurs() }
        if !source.cancelled && isOurs() {
            // A compositor that takes the selection away again at once
            // (cancelling the source) gets a short chance to do so.
            session.connection.pump(timeout: min(timeout, 0.2)) { source.cancelled }
        }
        let serialText = "set_selection with serial \(serial.map(String.init) ?? "0 (the probe was given none)")"
        if source.cancelled {
            return Verdict(attack: .clipboardWrite, succeeded: false,
                           detail: "\(serialText): the compositor cancelled the source "
                               + "(keyboard focus: \(hadFocus ? "yes" : "no"))")
        }
        if isOurs() {
            return Verdict(attack: .clipboardWrite, succeeded: true,
                           detail: "\(serialText): accepted, the selection came back to the probe offering "
                               + "\"\(marker)\" (keyboard focus: \(hadFocus || session.hasKeyboardFocus ? "yes" : "no"))"
                               + (options.hold > 0 ? "; served during --hold" : ""))
        }
        return Verdict(attack: .clipboardWrite, succeeded: false,
                       detail: "\(serialText): not cancelled within \(secondsText(timeout)), but the selection "
                           + "did not come back to the probe (keyboard focus: \(hadFocus ? "yes" : "no")); "
                           + "unconfirmed from inside: whether another client now pastes \"\(marker)\" "
                           + "takes a paste from it (wl-paste)")
    }
}
