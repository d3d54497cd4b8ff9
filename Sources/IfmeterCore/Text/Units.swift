/// How byte counts and rates are written: IEC by default, SI with `--si`, raw integers with `--bytes`;
/// rates in bit/s with SI prefixes, as links are sold, unless byte/s is asked for.
package struct Units: Sendable, Hashable {
    package enum Scale: Sendable, Hashable { case iec, si, raw }

    package var scale: Scale = .iec
    package var ratesInBits = true

    package init(scale: Scale = .iec, ratesInBits: Bool = true) {
        self.scale = scale
        self.ratesInBits = ratesInBits
    }

    package func bytes(_ value: UInt64) -> String {
        switch scale {
        case .raw: String(value)
        case .iec: Self.scaled(Double(value), base: 1024, units: ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"])
        case .si: Self.scaled(Double(value), base: 1000, units: ["B", "kB", "MB", "GB", "TB", "PB", "EB"])
        }
    }

    package func rate(bytesPerSecond: Double) -> String {
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
        // Saturating: NaN, infinities and values past 2^63 from a hostile store print, never trap.
        let scaled = Int64(saturating: value * factor)
        let sign = scaled < 0 ? "-" : ""
        let magnitude = scaled.magnitude
        let whole = magnitude / UInt64(factor)
        let fraction = String(magnitude % UInt64(factor))
        return "\(sign)\(whole).\(String(repeating: "0", count: decimals - fraction.count))\(fraction)"
    }
}
