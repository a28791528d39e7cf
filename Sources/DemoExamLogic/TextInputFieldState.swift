/// What a free-text field tells the input method: its text around the
/// cursor, its content type, and where the cursor is on the surface.
public struct TextInputFieldState: Hashable, Sendable {
    public var text: String
    /// Bytes of `text` before the cursor (the preedit, if any, excluded).
    public var cursor: Int
    public var contentType: TextInputContentType
    /// Surface coordinates of the cursor; nil before the field was drawn.
    public var cursorRectangle: ExamRect?

    public init(text: String, cursor: Int, contentType: TextInputContentType, cursorRectangle: ExamRect?) {
        self.text = text
        self.cursor = cursor
        self.contentType = contentType
        self.cursorRectangle = cursorRectangle
    }

    /// The state of `field` with `contentType`.
    public init(field: AnswerField, contentType: TextInputContentType, cursorRectangle: ExamRect?) {
        self.init(text: field.text, cursor: field.cursor, contentType: contentType, cursorRectangle: cursorRectangle)
    }
}
