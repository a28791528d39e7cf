import CarrelClientShim
import DemoExamLogic
import WaylandClientSupport

/// The free-text field's text-input-v3 object: sends what ``TextInputSync``
/// decides (enable while the field is shown and the window has keyboard
/// focus; surrounding text, content type, cursor rectangle) and hands each
/// `done` (preedit, commit, delete) to ``onUpdate``.
final class AnswerTextInput {
    var onUpdate: (TextInputUpdate) -> Void = { _ in }

    private let textInput: OpaquePointer
    private var events = TextInputEvents()
    private var sync = TextInputSync()

    init(manager: OpaquePointer, seat: OpaquePointer) {
        textInput = zwp_text_input_manager_v3_get_text_input(manager, seat)
        zwp_text_input_v3_add_listener(textInput, textInputListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        zwp_text_input_v3_destroy(textInput)
    }

    /// Shows `state` to the input method (nil: the field is gone).
    func show(_ state: TextInputFieldState?) {
        send(sync.show(state))
    }

    private func send(_ requests: [TextInputSync.Request]) {
        for request in requests {
            switch request {
            case .enable:
                zwp_text_input_v3_enable(textInput)
            case .disable:
                zwp_text_input_v3_disable(textInput)
            case .state(let state):
                // The field never holds more than the protocol's 4000 bytes.
                zwp_text_input_v3_set_surrounding_text(textInput, state.text, Int32(state.cursor), Int32(state.cursor))
                zwp_text_input_v3_set_content_type(textInput, state.contentType.hints.rawValue,
                                                   state.contentType.purpose)
                if let rect = state.cursorRectangle {
                    zwp_text_input_v3_set_cursor_rectangle(textInput, Int32(rect.x.rounded()), Int32(rect.y.rounded()),
                                                           Int32(max(rect.width.rounded(), 1)),
                                                           Int32(rect.height.rounded()))
                }
            case .commit:
                zwp_text_input_v3_commit(textInput)
                events.didCommit()
            }
        }
    }

    fileprivate func handleEnter() { send(sync.enter()) }

    fileprivate func handleLeave() { send(sync.leave()) }

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
        // Whether state may be sent is settled before the update makes the field send its new text.
        sync.done(isCurrent: isCurrent)
        onUpdate(update)
        send(sync.synchronise())
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
