/// The text field of a free-text question: the committed answer with a
/// cursor, and an input method's composition (preedit) shown at the cursor
/// until it is committed. Offsets count UTF-8 bytes, as text-input-v3 does.
///
/// ```swift
/// var field = AnswerField()
/// field.insert("日本")              // "日本|"
/// field.apply(TextInputUpdate(preedit: .init(text: "ご", cursor: 3..<3)))
/// field.apply(TextInputUpdate(commit: "語"))   // "日本語|", preedit gone
/// ```
///
/// The cursor always sits on a Unicode scalar boundary, and the committed
/// text never grows past `byteLimit` (text-input-v3's surrounding text can
/// carry no more than 4000 bytes).
public struct AnswerField: Hashable, Sendable {
    /// An input method's uncommitted text.
    public struct Preedit: Hashable, Sendable {
        public var text: String
        /// The composition's own cursor or highlight, bytes into `text`;
        /// nil when the input method asks for it hidden.
        public var cursor: Range<Int>?

        public init(text: String, cursor: Range<Int>?) {
            self.text = text
            self.cursor = cursor.map {
                let count = text.utf8.count
                let lower = min(max($0.lowerBound, 0), count)
                return lower..<min(max($0.upperBound, lower), count)
            }
        }
    }

    public static let defaultByteLimit = 4000

    public private(set) var text: String
    /// Bytes of `text` before the cursor.
    public private(set) var cursor: Int
    public private(set) var preedit: Preedit?
    public let byteLimit: Int

    /// A field holding `text` (cut to `byteLimit`), the cursor at its end.
    public init(text: String = "", byteLimit: Int = AnswerField.defaultByteLimit) {
        self.byteLimit = max(byteLimit, 0)
        self.text = ""
        self.cursor = 0
        insert(text)
    }

    /// Text before and after the cursor (the preedit goes between them).
    public var textBeforeCursor: String { String(decoding: text.utf8.prefix(cursor), as: UTF8.self) }
    public var textAfterCursor: String { String(decoding: text.utf8.dropFirst(cursor), as: UTF8.self) }

    /// Inserts `string` at the cursor and moves the cursor past it. Control
    /// characters (newline, tab, …) are dropped: the field is one line. What
    /// would pass `byteLimit` is left out, whole characters at a time.
    public mutating func insert(_ string: String) {
        var room = byteLimit - text.utf8.count
        var inserted = ""
        for character in string where !character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            let size = character.utf8.count
            guard size <= room else { break }
            inserted.append(character)
            room -= size
        }
        guard !inserted.isEmpty else { return }
        text = textBeforeCursor + inserted + textAfterCursor
        cursor += inserted.utf8.count
    }

    /// Backspace: removes the character before the cursor.
    public mutating func deleteBackward() {
        var before = textBeforeCursor
        guard before.popLast() != nil else { return }
        text = before + textAfterCursor
        cursor = before.utf8.count
    }

    /// Delete: removes the character after the cursor.
    public mutating func deleteForward() {
        let after = textAfterCursor
        guard !after.isEmpty else { return }
        text = textBeforeCursor + after.dropFirst()
    }

    public mutating func moveLeft() {
        var before = textBeforeCursor
        guard before.popLast() != nil else { return }
        cursor = before.utf8.count
    }

    public mutating func moveRight() {
        let after = textAfterCursor
        guard let next = after.first else { return }
        cursor += next.utf8.count
    }

    public mutating func moveToStart() { cursor = 0 }
    public mutating func moveToEnd() { cursor = text.utf8.count }

    /// text-input-v3's delete_surrounding_text: removes `before` bytes before
    /// the cursor and `after` bytes after it. Lengths past the text's ends
    /// stop there; a length ending inside a character's bytes stops short of
    /// that character rather than split it.
    public mutating func deleteSurrounding(before: Int, after: Int) {
        let bytes = Array(text.utf8)
        var start = cursor - min(max(before, 0), cursor)
        var end = cursor + min(max(after, 0), bytes.count - cursor)
        while start < cursor && Self.isContinuation(bytes, start) { start += 1 }
        while end > cursor && Self.isContinuation(bytes, end) { end -= 1 }
        guard start < end else { return }
        text = String(decoding: bytes[..<start] + bytes[end...], as: UTF8.self)
        cursor = start
    }

    /// Shows `preedit` at the cursor, replacing any earlier one (nil or empty: none).
    public mutating func setPreedit(_ preedit: Preedit?) {
        self.preedit = preedit?.text.isEmpty == false ? preedit : nil
    }

    /// Applies one text-input-v3 `done` in the protocol's order: the old
    /// preedit goes, surrounding text is deleted, the commit is inserted
    /// with the cursor after it, and the new preedit is shown at the cursor.
    public mutating func apply(_ update: TextInputUpdate) {
        preedit = nil
        deleteSurrounding(before: update.deleteBefore, after: update.deleteAfter)
        insert(update.commit)
        setPreedit(update.preedit)
    }

    /// Whether byte `index` of `bytes` continues a multi-byte character (so
    /// no boundary lies before it).
    private static func isContinuation(_ bytes: [UInt8], _ index: Int) -> Bool {
        index < bytes.count && bytes[index] & 0xC0 == 0x80
    }
}
