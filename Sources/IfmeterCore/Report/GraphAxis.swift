import Glibc

/// A gridline of the value axis: its value in bytes and its label ("1.5 GiB").
package struct ValueTick: Sendable, Hashable {
    package var bytes: Double
    package var label: String
}

/// Where a graph's axes put their marks: pure functions of the values, the buckets and the room.
package enum GraphAxis {
    /// Steps of the value axis in the unit chosen: 1-2-2.5-5 in each decade, below the unit too
    /// (0.5 GiB), never below a byte.
    static let steps: [Double] = [0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 250, 500]

    /// Gridlines from 0 to the top of the axis, at most `intervals` steps above 0, each a round
    /// number of the largest unit `largest` reaches (KiB, MiB... or kB, MB... with SI).
    package static func valueTicks(largest: UInt64, scale: Units.Scale, intervals: Int = 4) -> [ValueTick] {
        let base: Double = scale == .iec ? 1024 : 1000
        let names = switch scale {
        case .iec: ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        case .si: ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
        case .raw: [""]
        }
        var unit = 1.0
        var index = 0
        while Double(largest) >= unit * base && index < names.count - 1 {
            unit *= base
            index += 1
        }
        let ratio = Double(largest) / unit
        // Raw counts step by powers of ten as far as they go.
        var candidates = index == 0 ? steps.filter { $0 >= 1 } : steps
        while scale == .raw && candidates.last! * Double(intervals) < ratio { candidates.append(candidates[candidates.count - 4] * 10) }
        let step = candidates.first { ($0 * Double(intervals)) >= ratio } ?? candidates.last!
        let count = max(1, Int((ratio / step).rounded(.up)))
        return (0...count).map { position in
            let amount = Double(position) * step
            let text = decimal(amount)
            return ValueTick(bytes: amount * unit, label: position == 0 ? "0" : names[index].isEmpty ? text : "\(text) \(names[index])")
        }
    }

    /// "0.25", "2.5", "500": as many decimals as the step has, at most two.
    static func decimal(_ value: Double) -> String {
        // Only raw counts reach this high, in whole steps; a hostile store's beyond 2^64 saturates.
        if value >= 1e15 { return value >= 18e18 ? String(UInt64.max) : String(UInt64(value.rounded())) }
        let hundredths = Int64((value * 100).rounded())
        if hundredths % 100 == 0 { return String(hundredths / 100) }
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction % 10 == 0 ? String(fraction / 10) : (fraction < 10 ? "0" : "") + String(fraction))
    }

    /// The bars (by position) whose label the x axis shows: the first kind of period boundary
    /// (every bucket, then coarser) whose labels stand `room` apart at `slot` per bar, thinned
    /// from the left if even the coarsest crowds.
    package static func labelledBars(starts: [Int64], _ granularity: Granularity, slot: Double, room: Double) -> [Int] {
        let apart = max(1, Int((room / slot).rounded(.up)))
        var chosen: [Int] = []
        for boundary in boundaries(granularity) {
            chosen = starts.indices.filter { boundary(TimeBuckets.localTime(starts[$0])) }
            if zip(chosen, chosen.dropFirst()).allSatisfy({ $1 - $0 >= apart }) { return chosen }
        }
        var kept: [Int] = []
        for position in chosen where kept.last.map({ position - $0 >= apart }) ?? true { kept.append(position) }
        return kept
    }

    /// Period boundaries from the finest (every bucket) to the coarsest, for buckets of `granularity`.
    static func boundaries(_ granularity: Granularity) -> [(tm) -> Bool] {
        let every: (tm) -> Bool = { _ in true }
        let hours: [(tm) -> Bool] = [1, 2, 3, 6, 12].map { step in { $0.tm_min == 0 && $0.tm_hour % Int32(step) == 0 } }
        let midnight: (tm) -> Bool = { $0.tm_min == 0 && $0.tm_hour == 0 }
        let monthStart: (tm) -> Bool = { $0.tm_mday == 1 }
        let quarterStart: (tm) -> Bool = { $0.tm_mday == 1 && $0.tm_mon % 3 == 0 }
        let yearStart: (tm) -> Bool = { $0.tm_mday == 1 && $0.tm_mon == 0 }
        return switch granularity {
        case .fiveMinutes: [every] + hours + [midnight]
        case .hour: [every] + hours.dropFirst() + [midnight]
        case .day: [every, { $0.tm_wday == 1 }, monthStart, quarterStart, yearStart]
        case .month: [every, quarterStart, yearStart]
        case .year: [every, { $0.tm_year % 5 == 0 }, { $0.tm_year % 10 == 0 }]
        }
    }
}

/// A style's colours, as SVG takes them.
package struct GraphPalette: Sendable, Hashable {
    package var background: String
    package var text: String
    /// The caveat, gridline labels: quieter than the text, still readable.
    package var muted: String
    package var grid: String
    package var axis: String
    package var received: String
    package var transmitted: String

    package init(_ style: GraphStyle) {
        switch style {
        case .light:
            self = GraphPalette(background: "#ffffff", text: "#000000", muted: "#555555", grid: "#e2e2e2", axis: "#888888",
                                received: "#2b6cb0", transmitted: "#dd6b20")
        case .dark:
            self = GraphPalette(background: "#1a1d23", text: "#e8e8e8", muted: "#b0b4ba", grid: "#33373f", axis: "#6b7079",
                                received: "#5aa9f0", transmitted: "#f0a04b")
        }
    }

    init(background: String, text: String, muted: String, grid: String, axis: String, received: String, transmitted: String) {
        (self.background, self.text, self.muted, self.grid, self.axis, self.received, self.transmitted) =
            (background, text, muted, grid, axis, received, transmitted)
    }

    /// WCAG 2's contrast ratio of two "#rrggbb" colours, 1 to 21.
    package static func contrast(_ a: String, _ b: String) -> Double {
        func luminance(_ colour: String) -> Double {
            let digits = Array(colour.utf8.dropFirst())
            func channel(_ at: Int) -> Double {
                let value = Double(Int(String(decoding: digits[at..<at + 2], as: UTF8.self), radix: 16) ?? 0) / 255
                return value <= 0.03928 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
            }
            return 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4)
        }
        let (x, y) = (luminance(a), luminance(b))
        return (max(x, y) + 0.05) / (min(x, y) + 0.05)
    }
}
