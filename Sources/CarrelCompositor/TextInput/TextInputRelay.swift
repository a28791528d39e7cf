import CarrelCore
import CarrelShim
import Logging

/// Carries composed text between the input method (input-method-v2, with its
/// keyboard grab and candidate popup) and the text inputs
/// (text-input-v3) of the window that may compose, as Core's `Desk` decides.
///
/// Every wlroots call of this feature lives in this directory. The globals
/// exist only when the policy names an input method; the role table shows
/// text input to the app and participants and the input method's globals to
/// the input-method role alone. Its virtual keyboard is `VirtualKeyboardHost`'s.
final class TextInputRelay {
    private unowned let server: Server
    private let logger: Logger
    private let seat: UnsafeMutablePointer<wlr_seat>
    /// Above the app layer, below the curtains: candidate popups.
    let popupLayer: UnsafeMutablePointer<wlr_scene_tree>
    private var listeners = ListenerBag()
    private var endpoints: [TextInputEndpoint] = []
    private var popups: [CandidatePopup] = []
    /// The engine's input-method object (the one Core listens to).
    private var engine: UnsafeMutablePointer<wlr_input_method_v2>?
    private var engineListeners = ListenerBag()
    private var grab: UnsafeMutablePointer<wlr_input_method_keyboard_grab_v2>?
    private var grabListeners = ListenerBag()
    /// The text input the engine is activated for.
    private var active: TextInputEndpoint?
    /// What the engine was last told of the active text input, so a commit
    /// that changes nothing the engine sees (a text input moving only its
    /// cursor rectangle, which the engine learns through its popup) does not
    /// wake it: one message round less for every composed key.
    private var stateSentToEngine: EngineTextState?
    /// The preedit the active text input shows now (empty: none), as the
    /// engine's last relayed composition left it: committed if the engine
    /// dies before finishing it.
    private var shownPreedit = ""
    /// After composed text went to the app, frames wait (briefly) for the
    /// app's redraw, so its preedit and the engine's popup draw as one frame.
    private var frameHold = CompositionFrameHold()
    /// The surface whose redraw ends the wait.
    private var holdSurface: UnsafeMutablePointer<wlr_surface>?
    private var holdTimer: EventLoopTimer?
    /// Fires when keys Core holds for an absent engine must be let go.
    private var heldKeysTimer: EventLoopTimer?
    /// The surface text inputs may enter: the focus, when it may compose.
    private var compositionSurface: UnsafeMutablePointer<wlr_surface>?

    init(server: Server, seat: UnsafeMutablePointer<wlr_seat>, above appLayer: UnsafeMutablePointer<wlr_scene_tree>,
         logger: Logger) {
        self.server = server
        self.seat = seat
        self.logger = logger
        popupLayer = WlrootsVersion.createTree(in: server.scene)
        wlr_scene_node_place_above(WlrootsVersion.node(of: popupLayer), WlrootsVersion.node(of: appLayer))
        let textInputs = wlr_text_input_manager_v3_create(server.display)!
        let inputMethods = wlr_input_method_manager_v2_create(server.display)!
        holdTimer = EventLoopTimer(loop: wl_display_get_event_loop(server.display)) { [unowned self] in letFramesGo() }
        heldKeysTimer = EventLoopTimer(loop: wl_display_get_event_loop(server.display)) { [unowned self] in
            self.server.drive { $0.heldKeysDeadlinePassed(now: AssessmentService.now()) }
        }
        listeners.on(WlrootsVersion.newTextInputSignal(textInputs)) { [unowned self] data in
            let endpoint = TextInputEndpoint(data!.assumingMemoryBound(to: wlr_text_input_v3.self), relay: self)
            endpoints.append(endpoint)
            self.logger.debug("input method: a text input was created")
            if let surface = compositionSurface, wl_resource_get_client(surface.pointee.resource) == endpoint.client {
                endpoint.focus(surface)
            }
        }
        listeners.on(WlrootsVersion.newInputMethodSignal(inputMethods)) { [unowned self] data in
            inputMethodBound(data!.assumingMemoryBound(to: wlr_input_method_v2.self))
        }
    }

    // MARK: - Focus

    /// Core's focus or screen rules changed: text inputs enter the window
    /// that may compose (and leave every other), the engine follows, the
    /// popup shows or hides.
    func focusChanged() {
        let target = server.decide { $0.compositionTarget }
        let surface = server.mappedSurface(of: target)
        logger.debug("input method: focus changed; composing for \(target.map(\.description) ?? "no window")")
        if surface != compositionSurface {
            deactivate()
            compositionSurface = surface
        }
        for endpoint in endpoints {
            let owns = surface.map { wl_resource_get_client($0.pointee.resource) == endpoint.client } ?? false
            endpoint.focus(owns ? surface : nil)
        }
        if active == nil, let endpoint = endpoints.first(where: { $0.isEnabled && $0.focusedSurface != nil && $0.focusedSurface == surface }) {
            activate(endpoint)
        }
        updatePopups()
    }

    /// Core abandoned the composition (a session began or ended, the engine
    /// died): the text input gets an empty preedit, the engine is deactivated.
    func cancelComposition() {
        if let active {
            wlr_text_input_v3_send_preedit_string(active.textInput, nil, 0, 0)
            wlr_text_input_v3_send_done(active.textInput)
        }
        shownPreedit = ""
        deactivate()
    }

    /// Core's `.commitPreedit`: the preedit the active text input shows
    /// becomes committed text (its engine is gone and cannot finish it).
    func commitPreedit() {
        guard let active, !shownPreedit.isEmpty else { return }
        wlr_text_input_v3_send_preedit_string(active.textInput, nil, 0, 0)
        wlr_text_input_v3_send_commit_string(active.textInput, shownPreedit)
        wlr_text_input_v3_send_done(active.textInput)
        // The count, not the text: what a student types stays out of the log.
        logger.notice("input method: the engine ended while composing; the \(shownPreedit.count) character(s) it showed are committed to the window")
        shownPreedit = ""
    }

    // MARK: - Text inputs

    func enabled(_ endpoint: TextInputEndpoint) {
        logger.debug("input method: a text input was enabled (\(endpoint.focusedSurface == compositionSurface ? "on" : "not on") the window that may compose)")
        guard endpoint.focusedSurface != nil, endpoint.focusedSurface == compositionSurface else { return }
        if active !== endpoint { deactivate() }
        activate(endpoint)
    }

    func committed(_ endpoint: TextInputEndpoint) {
        followTextCursor(endpoint)
        guard endpoint === active, let engine else { return }
        let state = engineState(of: endpoint)
        if state != stateSentToEngine {
            send(state, to: engine)
            wlr_input_method_v2_send_done(engine)
        }
        updatePopups()
    }

    /// The magnifier follows the text cursor of the focused window's text
    /// input, whether or not the input method composes for it.
    private func followTextCursor(_ endpoint: TextInputEndpoint) {
        guard endpoint.reportsCursorRectangle, let cursor = layoutCursor(of: endpoint) else { return }
        server.magnifierTextCursorReported(Rect(x: Int(cursor.x), y: Int(cursor.y),
                                                 width: Int(cursor.width), height: Int(cursor.height)))
    }

    /// The endpoint's text cursor in layout coordinates, while its surface is
    /// in the scene.
    private func layoutCursor(of endpoint: TextInputEndpoint) -> wlr_box? {
        guard let surface = endpoint.focusedSurface, let node = server.sceneNode(of: surface) else { return nil }
        var x: Int32 = 0, y: Int32 = 0
        wlr_scene_node_coords(node, &x, &y)
        var cursor = endpoint.cursorRectangle
        cursor.x += x
        cursor.y += y
        return cursor
    }

    func disabled(_ endpoint: TextInputEndpoint) {
        if endpoint === active { deactivate() }
    }

    func destroyed(_ endpoint: TextInputEndpoint) {
        if endpoint === active { deactivate() }
        endpoints.removeAll { $0 === endpoint }
    }

    private func activate(_ endpoint: TextInputEndpoint) {
        active = endpoint
        logger.debug("input method: activating the engine for the focused text input (engine \(engine == nil ? "absent" : "present"))")
        guard let engine else { return }
        wlr_input_method_v2_send_activate(engine)
        send(engineState(of: endpoint), to: engine)
        wlr_input_method_v2_send_done(engine)
        updatePopups()
    }

    private func deactivate() {
        guard active != nil else { return }
        active = nil
        stateSentToEngine = nil
        shownPreedit = ""
        if holdSurface != nil { letFramesGo() }
        if let engine {
            wlr_input_method_v2_send_deactivate(engine)
            wlr_input_method_v2_send_done(engine)
        }
        updatePopups()
    }

    /// Surrounding text (bounded), content type (with the hints the session
    /// denies stripped) and the change cause.
    private func send(_ state: EngineTextState, to engine: UnsafeMutablePointer<wlr_input_method_v2>) {
        if let surrounding = state.surrounding {
            wlr_input_method_v2_send_surrounding_text(engine, surrounding.text, surrounding.cursor, surrounding.anchor)
        }
        wlr_input_method_v2_send_text_change_cause(engine, state.changeCause)
        wlr_input_method_v2_send_content_type(engine, state.hints, state.purpose)
        stateSentToEngine = state
    }

    /// The active text input's state as the engine is to see it: surrounding
    /// text bounded, content hints the session denies stripped.
    private func engineState(of endpoint: TextInputEndpoint) -> EngineTextState {
        let surrounding = endpoint.surrounding.map { surrounding in
            let bounded = ComposedTextLimit.bounded(surrounding.text).text
            return EngineTextState.Surrounding(text: bounded,
                                               cursor: ComposedTextLimit.clampedOffset(surrounding.cursor, in: bounded),
                                               anchor: ComposedTextLimit.clampedOffset(surrounding.anchor, in: bounded))
        }
        let content = endpoint.contentType
        return EngineTextState(surrounding: surrounding, changeCause: endpoint.textChangeCause,
                               hints: server.decide { $0.relayedContentHints(content.hint) }, purpose: content.purpose)
    }

    // MARK: - The input method

    private func inputMethodBound(_ inputMethod: UnsafeMutablePointer<wlr_input_method_v2>) {
        let client = wl_resource_get_client(inputMethod.pointee.resource)!
        let (accepted, effects) = server.decide { $0.inputMethodBound(server.clientID(client), role: server.role(of: client)) }
        server.carryOut(effects)
        guard accepted, engine == nil else {
            if accepted {
                logger.warning("input method: the engine bound a second input method object; told it is unavailable")
            }
            // wlroots destroys the object as it sends `unavailable`: nothing
            // of it may be touched after this call.
            wlr_input_method_v2_send_unavailable(inputMethod)
            return
        }
        engine = inputMethod
        logger.notice("input method: the engine bound the input method")
        engineListeners.on(&inputMethod.pointee.events.commit) { [unowned self] _ in engineCommitted() }
        engineListeners.on(&inputMethod.pointee.events.grab_keyboard) { [unowned self] data in
            keyboardGrabbed(data!.assumingMemoryBound(to: wlr_input_method_keyboard_grab_v2.self))
        }
        engineListeners.on(&inputMethod.pointee.events.new_popup_surface) { [unowned self] data in
            popups.append(CandidatePopup(data!.assumingMemoryBound(to: wlr_input_popup_surface_v2.self), layer: popupLayer, relay: self))
        }
        engineListeners.on(&inputMethod.pointee.events.destroy) { [unowned self] _ in engineDestroyed(client) }
        if let active { activate(active) } else { focusChanged() }
    }

    /// The engine's preedit, commit and deletion, for the active text input
    /// only, when Core relays them (nothing reaches any other client).
    private func engineCommitted() {
        guard let engine else { return }
        defer { WlrootsVersion.releaseCommittedStrings(engine) }
        let client = wl_resource_get_client(engine.pointee.resource)!
        let window = active.flatMap { server.windowID(of: $0.focusedSurface) }
        // A commit that changes what the text input shows answers a key it
        // was sent (Core counts them for its death).
        let current = engine.pointee.current
        let answer = (preedit: current.preedit.text.map { ComposedTextLimit.bounded(String(cString: $0)).text } ?? "",
                      committed: current.commit_text.map { String(cString: $0) } ?? "",
                      deletes: current.delete.before_length != 0 || current.delete.after_length != 0)
        let answers = server.decide {
            $0.inputMethodCommitted(by: server.clientID(client), shownPreedit: shownPreedit, preedit: answer.preedit,
                                    committed: answer.committed, deletes: answer.deletes, now: AssessmentService.now())
        }
        // Counts, never the text: what a student types stays out of the log.
        logger.debug("input method: the engine committed \(answer.committed.count) character(s), a preedit of \(answer.preedit.count)\(answer.deletes ? ", a deletion" : ""); \(answers ? "answers a key" : "changes nothing shown, answers no key")")
        let effects = server.decide { $0.compositionSent(by: server.clientID(client), for: window) }
        server.carryOut(effects.filter { if case .relayComposition = $0 { return false } else { return true } })
        guard let active, effects.contains(where: { if case .relayComposition = $0 { return true } else { return false } }) else { return }
        let state = engine.pointee.current
        // Each `done` replaces the text input's preedit: none sent, none shown.
        shownPreedit = ""
        if let text = state.preedit.text {
            let preedit = ComposedTextLimit.bounded(String(cString: text)).text
            let length = Int32(preedit.utf8.count)
            wlr_text_input_v3_send_preedit_string(active.textInput, preedit,
                                                  min(max(state.preedit.cursor_begin, -1), length),
                                                  min(max(state.preedit.cursor_end, -1), length))
            shownPreedit = preedit
        }
        if let text = state.commit_text {
            let (commit, truncated) = ComposedTextLimit.bounded(String(cString: text))
            if truncated { logger.warning("input method: a commit of more than \(ComposedTextLimit.maximumBytes) bytes was cut") }
            wlr_text_input_v3_send_commit_string(active.textInput, commit)
        }
        if state.delete.before_length != 0 || state.delete.after_length != 0 {
            let limit = UInt32(ComposedTextLimit.maximumBytes)
            wlr_text_input_v3_send_delete_surrounding_text(active.textInput, min(state.delete.before_length, limit),
                                                           min(state.delete.after_length, limit))
        }
        wlr_text_input_v3_send_done(active.textInput)
        holdFrames(untilRedrawOf: active.focusedSurface)
    }

    // MARK: - Frames

    /// Composed text just went to the app: frames wait for its redraw (at
    /// most `CompositionFrameHold.limit`).
    private func holdFrames(untilRedrawOf surface: UnsafeMutablePointer<wlr_surface>?) {
        guard let surface, let holdTimer, frameHold.relayed(at: AssessmentService.now()) else { return }
        holdSurface = surface
        holdTimer.arm(after: CompositionFrameHold.limit)
    }

    /// Whether the frame due now waits for the composing app's redraw.
    var holdsFrames: Bool { frameHold.holds(at: AssessmentService.now()) }

    /// An output drew a frame (or had nothing to draw).
    func frameRendered() { frameHold.frameRendered() }

    /// A window's surface committed; the composing app's redraw lets frames go.
    func surfaceCommitted(_ surface: UnsafeMutablePointer<wlr_surface>) {
        guard surface == holdSurface else { return }
        letFramesGo()
    }

    /// The wait ended (redraw, deadline or release): held frames go now.
    func letFramesGo() {
        frameHold.release()
        holdSurface = nil
        holdTimer?.disarm()
        for output in server.outputs { wlr_output_schedule_frame(output.wlrOutput) }
    }

    private func keyboardGrabbed(_ newGrab: UnsafeMutablePointer<wlr_input_method_keyboard_grab_v2>) {
        let client = wl_resource_get_client(newGrab.pointee.resource)!
        let (granted, effects) = server.decide { $0.keyboardGrabRequested(by: server.clientID(client), now: AssessmentService.now()) }
        guard granted else {
            logger.warning("input method: a second keyboard grab was refused")
            wlr_input_method_keyboard_grab_v2_destroy(newGrab)
            return
        }
        grab = newGrab
        logger.info("input method: the engine grabbed the keyboard")
        if let keyboard = server.input.physicalKeyboard {
            setKeyboard(keyboard, of: newGrab)
        }
        grabListeners.on(&newGrab.pointee.events.destroy) { [unowned self] _ in
            grabListeners.disconnectAll()
            grab = nil
            server.decide { $0.keyboardGrabReleased(by: server.clientID(client)) }
        }
        // Keys held while the engine was away, now that it has the keymap.
        server.carryOut(effects)
    }

    private func engineDestroyed(_ client: OpaquePointer) {
        engineListeners.disconnectAll()
        grabListeners.disconnectAll()
        grab = nil
        engine = nil
        stateSentToEngine = nil
        if holdSurface != nil { letFramesGo() }
        // Core says what becomes of the dead engine's composition (what it
        // showed is committed, then the composition ends), while the text
        // input it was for is still the active one.
        server.drive { $0.inputMethodDisconnected(server.clientID(client), now: AssessmentService.now()) }
        if let active, !shownPreedit.isEmpty {
            // Whatever was decided, no preedit of a dead engine stays shown.
            wlr_text_input_v3_send_preedit_string(active.textInput, nil, 0, 0)
            wlr_text_input_v3_send_done(active.textInput)
        }
        active = nil
        shownPreedit = ""
        updatePopups()
    }

    // MARK: - Keys

    /// The one way the engine's grab is given a keyboard: wlroots' set_keyboard,
    /// then no key repeat for the engine (the shim says why: an engine that
    /// repeats keys itself types a key again when it reads the release late).
    /// Keys the engine passes on reach the app as ordinary keys, which the app
    /// repeats from its own wl_keyboard; only the engine's repeat of a key held
    /// while it composes is gone.
    private func setKeyboard(_ keyboard: UnsafeMutablePointer<wlr_keyboard>,
                             of grab: UnsafeMutablePointer<wlr_input_method_keyboard_grab_v2>) {
        carrel_input_method_grab_set_keyboard_without_repeat(grab, keyboard)
    }

    /// Core sent this key to the engine's grab.
    func sendKeyToGrab(keyboard: UnsafeMutablePointer<wlr_keyboard>, time: UInt32, keycode: UInt32, state: UInt32) {
        guard let grab else { return }
        logger.debug("input method: a \(state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue ? "press" : "release") to the engine's grab")
        setKeyboard(keyboard, of: grab)
        wlr_input_method_keyboard_grab_v2_send_key(grab, time, keycode, state)
    }

    /// Keys Core held while the engine was away, in order, each with the
    /// modifiers it was typed under, then the keyboard's modifiers as they
    /// are now. False when there is no grab to send them to.
    func sendHeldKeysToGrab(_ strokes: [KeyStroke], keyboard: UnsafeMutablePointer<wlr_keyboard>) -> Bool {
        guard let grab else { return false }
        setKeyboard(keyboard, of: grab)
        var sent: KeyStroke.Modifiers?
        for stroke in strokes {
            if stroke.modifiers != sent {
                var modifiers = wlr_keyboard_modifiers(stroke.modifiers)
                wlr_input_method_keyboard_grab_v2_send_modifiers(grab, &modifiers)
                sent = stroke.modifiers
            }
            logger.debug("input method: a held \(stroke.pressed ? "press" : "release") to the engine's grab")
            wlr_input_method_keyboard_grab_v2_send_key(grab, stroke.time, stroke.keycode, stroke.waylandState)
        }
        wlr_input_method_keyboard_grab_v2_send_modifiers(grab, &keyboard.pointee.modifiers)
        return true
    }

    /// Core asked to hear back when held keys' bound has passed.
    func armHeldKeyDeadline(after delay: Duration) {
        heldKeysTimer?.arm(after: delay)
    }

    /// While the engine composes, modifiers go to its grab (it passes them on).
    func modifiersGoToGrab(keyboard: UnsafeMutablePointer<wlr_keyboard>) -> Bool {
        guard let grab, server.decide({ $0.compositionTarget }) != nil else { return false }
        setKeyboard(keyboard, of: grab)
        wlr_input_method_keyboard_grab_v2_send_modifiers(grab, &keyboard.pointee.modifiers)
        return true
    }

    // MARK: - Candidate popups

    /// Every popup shown at the active text input's cursor, or hidden.
    func updatePopups() {
        let anchoredAt = active.flatMap(layoutCursor)
        let anchored = anchoredAt != nil
        let cursor = anchoredAt ?? wlr_box()
        // Core places each popup under the cursor, bounded in the focused window's area.
        var hidden = false
        for popup in popups {
            let shown = anchored && server.decide { $0.candidatePopupShown(for: server.clientID(popup.client)) }
            hidden = popup.place(shown: shown, placement: server.candidatePopupPlacement(size: popup.size, cursor: cursor),
                                 cursor: cursor) || hidden
        }
        // Seen with wlroots 0.15's scene (x11 backend): a popup hidden or
        // destroyed kept its last pixels on screen until something else
        // damaged them. Repaint the outputs.
        if hidden { server.repaintOutputs() }
    }

    func popupDestroyed(_ popup: CandidatePopup) {
        let wasShown = popup.wasShown
        popup.remove()
        popups.removeAll { $0 === popup }
        if wasShown { server.repaintOutputs() }
    }

    func destroy() {
        holdTimer?.cancel()
        holdTimer = nil
        heldKeysTimer?.cancel()
        heldKeysTimer = nil
        holdSurface = nil
        for endpoint in endpoints { endpoint.detach() }
        for popup in popups { popup.remove() }
        endpoints.removeAll()
        popups.removeAll()
        engineListeners.disconnectAll()
        grabListeners.disconnectAll()
        listeners.disconnectAll()
    }
}

/// The part of a text input's state the engine is sent with `done`.
struct EngineTextState: Equatable {
    struct Surrounding: Equatable {
        var text: String
        var cursor: UInt32
        var anchor: UInt32
    }
    var surrounding: Surrounding?
    var changeCause: UInt32
    var hints: UInt32
    var purpose: UInt32
}

extension wlr_keyboard_modifiers {
    init(_ modifiers: KeyStroke.Modifiers) {
        self.init(depressed: modifiers.depressed, latched: modifiers.latched, locked: modifiers.locked, group: modifiers.group)
    }
}

extension KeyStroke {
    /// wl_keyboard's key state.
    var waylandState: UInt32 {
        (pressed ? WL_KEYBOARD_KEY_STATE_PRESSED : WL_KEYBOARD_KEY_STATE_RELEASED).rawValue
    }
}
