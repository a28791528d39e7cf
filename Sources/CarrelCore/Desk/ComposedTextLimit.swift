/// How much text Carrel relays between the input method and a text input
/// in one message. text-input-v3 caps surrounding text at 4000 bytes; the
/// same cap keeps every relayed preedit and commit inside one Wayland
/// message, whatever a hostile engine or client sends.
public enum ComposedTextLimit {
    /// The most UTF-8 bytes relayed in one string.
    public static let maximumBytes = 4000

    /// `text` cut to at most `maximumBytes` bytes at a character boundary,
    /// and whether it was cut.
    public static func bounded(_ text: String, maximumBytes: Int = maximumBytes) -> (text: String, truncated: Bool) {
        guard text.utf8.count > maximumBytes else { return (text, false) }
        var count = 0
        var end = text.startIndex
        for index in text.unicodeScalars.indices {
            let length = text.unicodeScalars[index].utf8.count
            if count + length > maximumBytes { break }
            count += length
            end = text.unicodeScalars.index(after: index)
        }
        return (String(text.unicodeScalars[..<end]), true)
    }

    /// A cursor or anchor (a byte offset into `text`) kept inside the bounded text.
    public static func clampedOffset(_ offset: UInt32, in text: String) -> UInt32 {
        min(offset, UInt32(text.utf8.count))
    }
}
