/// What one text-input-v3 `done` asks of a text field: the preedit,
/// commit_string and delete_surrounding_text events since the last `done`
/// (each double-buffered, reset after `done`). ``AnswerField/apply(_:)``
/// carries it out.
public struct TextInputUpdate: Hashable, Sendable {
    /// The composition to show after the change; nil for none.
    public var preedit: AnswerField.Preedit?
    /// Text to insert at the cursor; empty for none.
    public var commit: String
    /// Bytes to delete before and after the cursor, counted with the preedit removed.
    public var deleteBefore: Int
    public var deleteAfter: Int

    public init(preedit: AnswerField.Preedit? = nil, commit: String = "", deleteBefore: Int = 0,
                deleteAfter: Int = 0) {
        self.preedit = preedit
        self.commit = commit
        self.deleteBefore = deleteBefore
        self.deleteAfter = deleteAfter
    }
}
