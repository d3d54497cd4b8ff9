import Glibc

/// How byte counts and rates are written: IEC (KiB, MiB) by default, SI
/// (kB, MB) with `--si`, or raw integers with `--bytes`. Rates are bit/s
/// (SI prefixes, as links are sold) unless byte/s is asked for.
public struct Units: Sendable {
    public enum Scale: Sendable { case iec, si, raw }

    public var scale: Scale = .iec
    public var ratesInBits = true

    public init(scale: Scale = .iec, ratesInBits: Bool = true) {
        self.scale = scale
        self.ratesInBits = ratesInBits
    }

    public func bytes(_ value: UInt64) -> String {
        switch scale {
        case .raw: String(value)
        case .iec: Self.scaled(Double(value), base: 1024, units: ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"])
        case .si: Self.scaled(Double(value), base: 1000, units: ["B", "kB", "MB", "GB", "TB", "PB", "EB"])
        }
    }

    /// A rate from bytes per second.
    public func rate(bytesPerSecond: Double) -> String {
        if ratesInBits {
            let bits = bytesPerSecond * 8
            return scale == .raw ? "\(Int64(saturating: bits)) bit/s"
                : Self.scaled(bits, base: 1000, units: ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"])
        }
        switch scale {
        case .raw: return "\(Int64(saturating: bytesPerSecond)) B/s"
        case .iec: return Self.scaled(bytesPerSecond, base: 1024, units: ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"])
        case .si: return Self.scaled(bytesPerSecond, base: 1000, units: ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"])
        }
    }

    /// Whole numbers below the base; two decimals above it ("1.50 GiB").
    static func scaled(_ value: Double, base: Double, units: [String]) -> String {
        var amount = value
        var index = 0
        while amount >= base && index < units.count - 1 {
            amount /= base
            index += 1
        }
        if index == 0 { return "\(Int64(saturating: amount)) \(units[0])" }
        return "\(fixed(amount, decimals: 2)) \(units[index])"
    }

    /// Fixed-point text without Foundation's formatter.
    static func fixed(_ value: Double, decimals: Int) -> String {
        var factor = 1.0
        for _ in 0..<decimals { factor *= 10 }
        // Saturating, so NaN, infinities and values past 2^63 from a hostile
        // store print as a number instead of trapping.
        let scaled = Int64(saturating: value * factor)
        let sign = scaled < 0 ? "-" : ""
        let magnitude = scaled.magnitude
        let whole = magnitude / UInt64(factor)
        let fraction = String(magnitude % UInt64(factor))
        return "\(sign)\(whole).\(String(repeating: "0", count: decimals - fraction.count))\(fraction)"
    }
}

/// Local-time text for bucket starts and moments.
public enum TimeText {
    public static func format(_ time: Int64, _ pattern: String) -> String {
        var seconds = time_t(time)
        var fields = tm()
        localtime_r(&seconds, &fields)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &fields)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func moment(_ time: Int64) -> String { format(time, "%Y-%m-%d %H:%M:%S") }

    /// ISO 8601 in UTC, for exports.
    public static func utc(_ time: Int64) -> String {
        var seconds = time_t(time)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &fields)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A bucket's label at its granularity.
    public static func bucket(_ start: Int64, _ granularity: Granularity) -> String {
        switch granularity {
        case .fiveMinutes: format(start, "%Y-%m-%d %H:%M")
        case .hour: format(start, "%Y-%m-%d %H:00")
        case .day: format(start, "%Y-%m-%d")
        case .month: format(start, "%Y-%m")
        case .year: format(start, "%Y")
        }
    }

    /// Parses "YYYY-MM-DD" or "YYYY-MM-DD HH:MM" (local time).
    public static func parse(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" || $0 == "T" }).map { Int32($0) }
        guard parts.count == 3 || parts.count == 5, parts.allSatisfy({ $0 != nil }) else { return nil }
        let numbers = parts.map { $0! }
        guard (1...12).contains(numbers[1]), (1...31).contains(numbers[2]) else { return nil }
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
        let result = mktime(&fields)
        return result == -1 ? nil : Int64(result)
    }
}
