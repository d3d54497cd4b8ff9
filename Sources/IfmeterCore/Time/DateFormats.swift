/// The strftime(3) patterns of the history views' period labels, as vnStat's DayFormat and MonthFormat:
/// `[Display]` in ifmeter.conf. Hours and five minutes are the day's label and `%H:%M`; years `%Y`.
package struct DateFormats: Sendable, Hashable {
    package var day = "%Y-%m-%d"
    package var month = "%Y-%m"

    package init(day: String = "%Y-%m-%d", month: String = "%Y-%m") {
        self.day = day
        self.month = month
    }

    /// A label wider than this would push the views past 80 columns ("29 Nov 2026" fits).
    package static let maximumWidth = 11

    /// Date conversions only: a day's label with %H would say midnight, a month's with %d the first.
    static let dayConversions: Set<Character> = ["Y", "y", "C", "G", "g", "m", "b", "B", "h", "d", "e", "j", "a", "A", "u", "w", "U", "W", "V", "F", "D", "x", "%"]
    static let monthConversions: Set<Character> = ["Y", "y", "C", "m", "b", "B", "h", "%"]

    /// Why `pattern` cannot label a day (or a month), or nil: printable ASCII, known conversions,
    /// and no wider than `maximumWidth` on any day of a year (the longest month and weekday names).
    package static func problem(_ pattern: String, month: Bool) -> String? {
        let allowed = month ? monthConversions : dayConversions
        guard !pattern.isEmpty, pattern.unicodeScalars.allSatisfy({ (0x20..<0x7f).contains($0.value) }) else {
            return "expected a strftime pattern of printable ASCII, like \(month ? "%b %Y" : "%d.%m.%Y")"
        }
        var characters = pattern.makeIterator()
        while let character = characters.next() {
            guard character == "%" else { continue }
            guard let conversion = characters.next(), allowed.contains(conversion) else {
                return "a \(month ? "month" : "day") label takes only the conversions %\(allowed.sorted().map(String.init).joined(separator: " %"))"
            }
        }
        // Noon UTC of every day of 2026 but the leap day: all month and weekday names.
        let widest = (0..<365).map { TimeText.format(1_767_268_800 + Int64($0) * 86_400, pattern).count }.max() ?? 0
        return widest > maximumWidth ? "labels up to \(widest) characters wide; at most \(maximumWidth) keep the views within 80 columns" : nil
    }

    /// The label of a period starting at `start`.
    package func label(_ start: Int64, _ granularity: Granularity) -> String {
        switch granularity {
        case .fiveMinutes, .hour: TimeText.format(start, day + " %H:%M")
        case .day: TimeText.format(start, day)
        case .month: TimeText.format(start, month)
        case .year: TimeText.format(start, "%Y")
        }
    }
}
