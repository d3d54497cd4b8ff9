import Glibc

/// One line per event on stderr. Under systemd (`$JOURNAL_STREAM` set) each
/// line starts with a `<N>` priority prefix the journal understands.
public enum Log {
    public enum Priority: Int {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    }

    nonisolated(unsafe) static var toJournal = getenv("JOURNAL_STREAM") != nil

    public static func error(_ message: String) { write(.error, message) }
    public static func warning(_ message: String) { write(.warning, message) }
    public static func notice(_ message: String) { write(.notice, message) }
    public static func info(_ message: String) { write(.info, message) }

    static func write(_ priority: Priority, _ message: String) {
        let line = message.replacingNewlines()
        Output.standardError(toJournal ? "<\(priority.rawValue)>\(line)\n" : "\(line)\n")
    }
}

extension String {
    /// Keeps a log record on one line whatever it quotes. By scalar: "\r\n"
    /// is one Character, which a Character search for "\n" never finds.
    /// Other controls are made visible by Output.
    func replacingNewlines() -> String {
        guard unicodeScalars.contains("\n") else { return self }
        return unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }.joined(separator: " ")
    }
}
