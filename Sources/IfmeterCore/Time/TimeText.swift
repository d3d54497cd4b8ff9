import Glibc

/// Local-time text for bucket starts and moments.
package enum TimeText {
    /// Set once by the CLI's --utc, before anything is printed: every time shown is then UTC, marked so.
    nonisolated(unsafe) package static var showsUTC = false

    package static func format(_ time: Int64, _ pattern: String) -> String {
        var seconds = time_t(time)
        var fields = tm()
        if showsUTC { gmtime_r(&seconds, &fields) } else { localtime_r(&seconds, &fields) }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &fields)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package static func moment(_ time: Int64) -> String { format(time, showsUTC ? "%Y-%m-%d %H:%M:%SZ" : "%Y-%m-%d %H:%M:%S") }

    /// ISO 8601 in UTC, for exports.
    package static func utc(_ time: Int64) -> String {
        var seconds = time_t(time)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &fields)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A bucket's label at its granularity, in `formats`. Hours show their minutes: in a half-hour zone an
    /// hour starts at :30. Under --utc a bucket is labelled by its UTC start, since stored days need not begin at UTC midnight.
    package static func bucket(_ start: Int64, _ granularity: Granularity, formats: DateFormats = DateFormats()) -> String {
        showsUTC ? format(start, "%Y-%m-%d %H:%MZ") : formats.label(start, granularity)
    }

    /// Parses "YYYY-MM-DD" or "YYYY-MM-DD HH:MM" (local time).
    package static func parse(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" || $0 == "T" }).map { Int32($0) }
        guard parts.count == 3 || parts.count == 5, parts.allSatisfy({ $0 != nil }) else { return nil }
        let numbers = parts.map { $0! }
        // Four-digit years: a fifth digit is a typing slip, not the year 99999.
        guard (1...9999).contains(numbers[0]), (1...12).contains(numbers[1]), (1...31).contains(numbers[2]) else { return nil }
        var fields = tm()
        fields.tm_year = numbers[0] - 1900
        fields.tm_mon = numbers[1] - 1
        fields.tm_mday = numbers[2]
        if numbers.count == 5 {
            guard (0...23).contains(numbers[3]), (0...59).contains(numbers[4]) else { return nil }
            fields.tm_hour = numbers[3]
            fields.tm_min = numbers[4]
        }
        fields.tm_isdst = -1
        let (year, month, day) = (fields.tm_year, fields.tm_mon, fields.tm_mday)
        let result = mktime(&fields)
        // mktime carries 2026-02-30 over to March 2: such a date does not exist.
        guard result != -1, fields.tm_year == year, fields.tm_mon == month, fields.tm_mday == day else { return nil }
        return Int64(result)
    }
}
