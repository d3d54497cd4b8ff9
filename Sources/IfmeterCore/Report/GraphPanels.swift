/// One bar pair: received and transmitted bytes in a bucket.
package struct GraphPoint: Sendable, Hashable {
    package var label: String
    /// The tooltip's name for the bucket ("2026-11-29").
    package var detail: String
    /// The bucket's first second, where the x axis finds period boundaries.
    package var start: Int64
    package var rx: UInt64
    package var tx: UInt64
}

/// One line of a summary's totals ("today").
package struct GraphTotal: Sendable, Hashable {
    package var label: String
    package var rx: UInt64
    package var tx: UInt64
}

/// A class's or an interface's part of the picture.
package struct GraphPanel: Sendable, Hashable {
    package var title: String
    package var totals: [GraphTotal] = []
    package var points: [GraphPoint]
}

extension SVGGraph {
    /// vnstati -5's 576 bars: the 48 hours the store keeps by default.
    static let fiveMinuteBars = 576

    /// A picture's panels from `rows(granularity, from)`; `byName`: one per selected interface (or merge), not class.
    package static func panels(
        _ kind: GraphKind, rows: (Granularity, Int64) -> [HistoryRow], now: Int64, days: Int, byName: Bool,
        aliases: [String: String] = [:]
    ) -> [GraphPanel] {
        func key(_ row: HistoryRow) -> String { byName ? row.name : row.interfaceClass }
        func title(_ key: String) -> String {
            if byName { return aliases[key].map { "\(key) (\($0))" } ?? key }
            return InterfaceClass(rawValue: key)?.displayName ?? key
        }
        func ordered(_ keys: Set<String>) -> [String] {
            if byName { return NaturalOrder.sorted(Array(keys)) }
            return InterfaceClass.allCases.map(\.rawValue).filter(keys.contains) + keys.filter { InterfaceClass(rawValue: $0) == nil }.sorted()
        }
        func sums(_ granularity: Granularity, from: Int64) -> [String: [Int64: (rx: UInt64, tx: UInt64)]] {
            var result: [String: [Int64: (rx: UInt64, tx: UInt64)]] = [:]
            for row in rows(granularity, from) {
                let start = TimeBuckets.start(of: granularity, containing: row.start)
                let sum = result[key(row), default: [:]][start] ?? (0, 0)
                result[key(row), default: [:]][start] = (.saturating(sum.rx, plus: row.counters.rxBytes), .saturating(sum.tx, plus: row.counters.txBytes))
            }
            return result
        }
        func series(_ granularity: Granularity, count: Int, label: String, detail: String) -> (starts: [Int64], sums: [String: [Int64: (rx: UInt64, tx: UInt64)]]) {
            let starts = (0..<count).map { TimeBuckets.start(of: granularity, count - 1 - $0, before: now) }
            return (starts, sums(granularity, from: starts[0]))
        }
        func points(_ starts: [Int64], _ values: [Int64: (rx: UInt64, tx: UInt64)], label: String, detail: String) -> [GraphPoint] {
            starts.map { start in
                let value = values[start] ?? (0, 0)
                return GraphPoint(label: TimeText.format(start, label), detail: TimeText.format(start, detail), start: start, rx: value.rx, tx: value.tx)
            }
        }
        switch kind {
        case .fiveminute, .daily, .hourly, .monthly, .yearly:
            let (granularity, count, label, detail): (Granularity, Int, String, String) =
                switch kind {
                case .fiveminute: (.fiveMinutes, fiveMinuteBars, "%H:%M", "%Y-%m-%d %H:%M")
                case .hourly: (.hour, 24, "%H", "%Y-%m-%d %H:%M")
                case .monthly: (.month, 12, "%Y-%m", "%Y-%m")
                case .yearly: (.year, 10, "%Y", "%Y")
                default: (.day, days, days > 92 ? "%Y-%m-%d" : "%m-%d", "%Y-%m-%d")
                }
            let data = series(granularity, count: count, label: label, detail: detail)
            return ordered(Set(data.sums.keys)).map { GraphPanel(title: title($0), points: points(data.starts, data.sums[$0] ?? [:], label: label, detail: detail)) }
        case .top:
            let data = sums(.day, from: .min)
            return ordered(Set(data.keys)).map { key in
                let largest = (data[key] ?? [:]).sorted { ($0.value.rx &+ $0.value.tx, $1.key) > ($1.value.rx &+ $1.value.tx, $0.key) }.prefix(10)
                return GraphPanel(title: title(key), points: largest.map {
                    GraphPoint(label: TimeText.format($0.key, "%Y-%m-%d"), detail: TimeText.format($0.key, "%Y-%m-%d"), start: $0.key, rx: $0.value.rx, tx: $0.value.tx)
                })
            }
        case .summary:
            let hours = series(.hour, count: 24, label: "%H", detail: "%Y-%m-%d %H:%M")
            let dayStarts = [TimeBuckets.start(of: .day, 0, before: now), TimeBuckets.start(of: .day, 1, before: now)]
            let monthStarts = [TimeBuckets.start(of: .month, 0, before: now), TimeBuckets.start(of: .month, 1, before: now)]
            let daySums = sums(.day, from: dayStarts[1])
            let monthSums = sums(.month, from: monthStarts[1])
            let keys = Set(hours.sums.keys).union(daySums.keys).union(monthSums.keys)
            return ordered(keys).map { key in
                func total(_ label: String, _ values: [Int64: (rx: UInt64, tx: UInt64)]?, _ start: Int64) -> GraphTotal {
                    let value = values?[start] ?? (0, 0)
                    return GraphTotal(label: label, rx: value.rx, tx: value.tx)
                }
                return GraphPanel(
                    title: title(key),
                    totals: [
                        total("today", daySums[key], dayStarts[0]), total("yesterday", daySums[key], dayStarts[1]),
                        total(TimeText.format(monthStarts[0], "%Y-%m"), monthSums[key], monthStarts[0]),
                        total(TimeText.format(monthStarts[1], "%Y-%m"), monthSums[key], monthStarts[1]),
                    ],
                    points: points(hours.starts, hours.sums[key] ?? [:], label: "%H", detail: "%Y-%m-%d %H:%M"))
            }
        }
    }

    package static func title(_ kind: GraphKind, now: Int64, days: Int) -> String {
        switch kind {
        case .summary: "Traffic summary at \(TimeText.format(now, "%Y-%m-%d %H:%M"))"
        case .fiveminute:
            "Five-minute traffic, the 48 hours to \(TimeText.format(TimeBuckets.start(of: .fiveMinutes, 0, before: now), "%Y-%m-%d %H:%M"))"
        case .hourly: "Hourly traffic, the 24 hours to \(TimeText.format(TimeBuckets.start(of: .hour, 0, before: now), "%Y-%m-%d %H:00"))"
        case .daily:
            "Daily traffic, \(TimeText.format(TimeBuckets.start(of: .day, days - 1, before: now), "%Y-%m-%d")) to \(TimeText.format(now, "%Y-%m-%d"))"
        case .monthly:
            "Monthly traffic, \(TimeText.format(TimeBuckets.start(of: .month, 11, before: now), "%Y-%m")) to \(TimeText.format(now, "%Y-%m"))"
        case .yearly: "Yearly traffic, \(TimeText.format(TimeBuckets.start(of: .year, 9, before: now), "%Y")) to \(TimeText.format(now, "%Y"))"
        case .top: "The 10 largest days"
        }
    }
}
