import Glibc

/// One line per event on stderr, with a `<N>` priority prefix when stderr is the journal's stream.
package enum Log {
    package enum Priority: Int {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
    }

    nonisolated(unsafe) static var toJournal = isJournalStream(
        getenv("JOURNAL_STREAM").map { String(cString: $0) }, standardError: fileIdentity(2))

    /// `$JOURNAL_STREAM` ("DEVICE:INODE") is inherited by every child, so a shell started from a unit
    /// passes it to commands on a terminal: only the same device and inode mean the journal (systemd.exec(5)).
    static func isJournalStream(_ variable: String?, standardError: (device: UInt64, inode: UInt64)?) -> Bool {
        guard let variable, let standardError else { return false }
        let parts = variable.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        return device == standardError.device && inode == standardError.inode
    }

    static func fileIdentity(_ fd: Int32) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// A line that names the daemon on a terminal; the journal already shows `ifmeterd[PID]:`.
    package static func headline(_ message: String) -> String { toJournal ? message : "ifmeterd: " + message }

    package static func error(_ message: String) { write(.error, message) }
    package static func warning(_ message: String) { write(.warning, message) }
    package static func notice(_ message: String) { write(.notice, message) }
    package static func info(_ message: String) { write(.info, message) }

    static func write(_ priority: Priority, _ message: String) { write([(priority, message)]) }

    /// Several records in one write(2): a burst of link events logs in one system call.
    package static func write(_ records: [(priority: Priority, message: String)]) {
        guard !records.isEmpty else { return }
        var text = ""
        for (priority, message) in records {
            let line = message.replacingNewlines()
            text += toJournal ? "<\(priority.rawValue)>\(line)\n" : "\(line)\n"
        }
        Output.standardError(text)
    }
}

extension String {
    /// Keeps a log record on one line whatever it quotes. By byte: "\r\n" is one Character a search for
    /// "\n" never finds, and in UTF-8 0x0A is only ever U+000A. Output makes other controls visible.
    func replacingNewlines() -> String {
        guard utf8.contains(0x0a) else { return self }
        return unicodeScalars.split(separator: "\n").map { String(String.UnicodeScalarView($0)) }.joined(separator: " ")
    }
}

/// Something the daemon keeps retrying (store writes, the metrics file, the journal): logged when it
/// starts failing and when it works again, not at every retry.
package struct RetriedCondition: Sendable {
    package private(set) var isFailing = false

    package init() {}

    /// A failure; logged, and true, only when it starts the condition.
    @discardableResult
    package mutating func failed(_ message: @autoclosure () -> String) -> Bool {
        defer { isFailing = true }
        guard !isFailing else { return false }
        Log.error(message())
        return true
    }

    package mutating func succeeded(_ message: @autoclosure () -> String) {
        guard isFailing else { return }
        isFailing = false
        Log.notice(message())
    }

    /// Forgets the condition without a word (what failed was replaced).
    package mutating func reset() { isFailing = false }
}
