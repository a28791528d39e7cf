import CarrelClientShim
import DemoExamLogic
import WaylandClientSupport

/// The free-text field's text-input-v3 object: enabled while the field is
/// shown and the window has keyboard focus, it tells the input method the
/// surrounding text, the content type and where the cursor is, and hands
/// each `done` (preedit, commit, delete) to ``onUpdate``.
final class AnswerTextInput {
    /// What the field tells the input method; nil while no field is shown.
    struct FieldState: Equatable {
        var text: String
        var cursor: Int
        var contentType: TextInputContentType
        /// Surface coordinates of the cursor.
        var cursorRectangle: ExamRect?
    }

    var onUpdate: (TextInputUpdate) -> Void = { _ in }

    private let textInput: OpaquePointer
    private var events = TextInputEvents()
    private var hasFocus = false
    private var isEnabled = false
    private var wanted: FieldState?
    private var sent: FieldState?
    /// False after a done for an older commit, until one for the latest.
    private var maySendState = true

    init(manager: OpaquePointer, seat: OpaquePointer) {
        textInput = zwp_text_input_manager_v3_get_text_input(manager, seat)
        zwp_text_input_v3_add_listener(textInput, textInputListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        zwp_text_input_v3_destroy(textInput)
    }

    /// Shows `state` to the input method (nil: the field is gone).
    func show(_ state: FieldState?) {
        wanted = state
        synchronise()
    }

    private func synchronise() {
        guard hasFocus, let wanted else {
            if isEnabled {
                zwp_text_input_v3_disable(textInput)
                commit()
                isEnabled = false
                sent = nil
            }
            return
        }
        if !isEnabled {
            // enable resets the state on the compositor's side: all of it follows before the commit.
            zwp_text_input_v3_enable(textInput)
            isEnabled = true
            sent = nil
        } else if !maySendState || wanted == sent {
            return
        }
        // The protocol's limit is 4000 bytes; the field never holds more.
        zwp_text_input_v3_set_surrounding_text(textInput, wanted.text, Int32(wanted.cursor), Int32(wanted.cursor))
        zwp_text_input_v3_set_content_type(textInput, wanted.contentType.hints.rawValue, wanted.contentType.purpose)
        if let rect = wanted.cursorRectangle {
            zwp_text_input_v3_set_cursor_rectangle(textInput, Int32(rect.x.rounded()), Int32(rect.y.rounded()),
                                                   Int32(max(rect.width.rounded(), 1)), Int32(rect.height.rounded()))
        }
        commit()
        sent = wanted
    }

    private func commit() {
        zwp_text_input_v3_commit(textInput)
        events.didCommit()
    }

    fileprivate func handleEnter() {
        hasFocus = true
        synchronise()
    }

    fileprivate func handleLeave() {
        // The compositor stops sending to a text input that left; disable ours to match.
        hasFocus = false
        synchronise()
    }

    fileprivate func handlePreedit(_ text: UnsafePointer<CChar>?, begin: Int32, end: Int32) {
        events.preeditString(text.map { String(cString: $0) }, cursorBegin: begin, cursorEnd: end)
    }

    fileprivate func handleCommit(_ text: UnsafePointer<CChar>?) {
        events.commitString(text.map { String(cString: $0) })
    }

    fileprivate func handleDeleteSurrounding(before: UInt32, after: UInt32) {
        events.deleteSurroundingText(before: before, after: after)
    }

    fileprivate func handleDone(serial: UInt32) {
        let (update, isCurrent) = events.done(serial: serial)
        maySendState = isCurrent
        onUpdate(update)
        synchronise()
    }
}

private func textInput(_ data: UnsafeMutableRawPointer?) -> AnswerTextInput {
    Unmanaged<AnswerTextInput>.fromOpaque(data!).takeUnretainedValue()
}

private let textInputListener = staticListener(zwp_text_input_v3_listener(
    enter: { data, _, _ in textInput(data).handleEnter() },
    leave: { data, _, _ in textInput(data).handleLeave() },
    preedit_string: { data, _, text, begin, end in textInput(data).handlePreedit(text, begin: begin, end: end) },
    commit_string: { data, _, text in textInput(data).handleCommit(text) },
    delete_surrounding_text: { data, _, before, after in
        textInput(data).handleDeleteSurrounding(before: before, after: after)
    },
    done: { data, _, serial in textInput(data).handleDone(serial: serial) }
))
