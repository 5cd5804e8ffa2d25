/// Messages in Stompbox's errors and notices read as clauses ("the Looper is locked; …") so the
/// CLI can print them after "stompbox: ". A dialog shows them as sentences.
public enum Messages {
    /// "the Looper is locked; unlock it…" → "The Looper is locked; unlock it….".
    public static func sentence(_ message: CustomStringConvertible) -> String {
        var text = message.description
        guard let first = text.first else { return text }
        text = first.uppercased() + text.dropFirst()
        if let last = text.last, !".!?".contains(last) { text += "." }
        return text
    }
}
