/// The client's half of text-input-v3's bookkeeping: collects the events of
/// one `done`, and counts commit requests, because a `done` whose serial is
/// not that count answers an older state: its changes are applied, but the
/// client must not send its state (surrounding text, content type, cursor
/// rectangle) until a `done` with the current serial arrives.
public struct TextInputEvents: Hashable, Sendable {
    private var pending = TextInputUpdate()
    /// Commit requests sent on this text input so far.
    public private(set) var commitCount: UInt32 = 0

    public init() {}

    /// preedit_string: `cursorBegin` and `cursorEnd` both -1 hide the composition's cursor.
    public mutating func preeditString(_ text: String?, cursorBegin: Int32, cursorEnd: Int32) {
        let hidden = cursorBegin == -1 && cursorEnd == -1
        pending.preedit = AnswerField.Preedit(text: text ?? "",
                                              cursor: hidden ? nil : Int(cursorBegin)..<Int(max(cursorBegin, cursorEnd)))
    }

    public mutating func commitString(_ text: String?) {
        pending.commit = text ?? ""
    }

    public mutating func deleteSurroundingText(before: UInt32, after: UInt32) {
        pending.deleteBefore = Int(before)
        pending.deleteAfter = Int(after)
    }

    /// Counts one commit request the client sent.
    public mutating func didCommit() { commitCount &+= 1 }

    /// done: the changes to apply (the pending state resets), and whether
    /// `serial` is current, i.e. the client may send its state now.
    public mutating func done(serial: UInt32) -> (update: TextInputUpdate, isCurrent: Bool) {
        defer { pending = TextInputUpdate() }
        return (pending, serial == commitCount)
    }
}
