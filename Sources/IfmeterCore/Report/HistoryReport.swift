/// One row of `hours`, `days`, `months`, `years` or `top`.
package struct HistoryRow: Sendable {
    package var name: String
    package var interfaceClass: String
    package var start: Int64
    package var counters: LinkCounters
    /// Includes the live kernel delta (the current bucket).
    package var live: Bool
    package var incomplete: String?
    /// The running bucket's total at its end at the rate so far (vnStat's "estimated"); nil once finished.
    package var estimated: LinkCounters?
    /// Holds history imported from another tool (`ifmeter import`).
    package var imported = false
    /// How long the period has run: its whole length once over, else until now.
    package var seconds: Int64 = 0

    package var total: UInt64 { .saturating(counters.rxBytes, plus: counters.txBytes) }
    /// vnStat's avg. rate: rx + tx bytes per second of the period so far.
    package var averageRate: Double? { HistoryReport.averageRate(total, seconds: seconds) }
}

/// Time-bucket listings with terminal bars.
package enum HistoryReport {
    package static let schema = "ifmeter.history/1"

    package enum Kind: String, Sendable, CaseIterable {
        case fiveminutes, hours, days, months, years, top

        package init(listing granularity: Granularity) {
            switch granularity {
            case .fiveMinutes: self = .fiveminutes
            case .hour: self = .hours
            case .day: self = .days
            case .month: self = .months
            case .year: self = .years
            }
        }

        package var granularity: Granularity {
            switch self {
            case .fiveminutes: .fiveMinutes
            case .hours: .hour
            case .days, .top: .day
            case .months: .month
            case .years: .year
            }
        }

        package var defaultLimit: Int {
            switch self {
            case .fiveminutes: 24
            case .hours: 24
            case .days: 30
            case .months: 12
            case .years: 100
            case .top: 10
            }
        }

        var showsBars: Bool { self == .days || self == .months || self == .top }
    }

    /// The rows to show: buckets in [from, to) with the live delta in each interface's current bucket,
    /// filtered by name, the latest `limit` per interface (or the `limit` largest days for `top`). No
    /// estimate for a link not `present` (nil: unknown) nor an `unwatched` name: nothing more is counted.
    package static func rows(
        _ kind: Kind, buckets: [StoredBucket], live: [String: LinkCounters], classes: [String: InterfaceClass],
        now: Int64, names: InterfaceSelection, from: Int64, to: Int64, limit: Int, countingSince: [String: Int64] = [:],
        present: Set<String>? = nil, unwatched: Set<String> = []
    ) -> [HistoryRow] {
        var rows = buckets.map {
            HistoryRow(name: $0.name, interfaceClass: $0.interfaceClass, start: $0.start, counters: $0.counters, live: false, incomplete: $0.incomplete, estimated: nil,
                       imported: $0.imported)
        }
        let current = TimeBuckets.start(of: kind.granularity, containing: now)
        if current >= from && current < to {
            for (name, delta) in live where delta != .zero {
                if let index = rows.firstIndex(where: { $0.name == name && $0.start == current }) {
                    rows[index].counters += delta
                    rows[index].live = true
                } else {
                    rows.append(HistoryRow(name: name, interfaceClass: (classes[name] ?? .other).rawValue, start: current, counters: delta, live: true, incomplete: nil, estimated: nil))
                }
            }
        }
        let end = TimeBuckets.start(of: kind.granularity, -1, before: current)
        // Before any merge each interface is projected alone, from when it was counted, a gone one not at
        // all; a merge adds its members' estimates (InterfaceSelection.apply), so a tunnel deleted this
        // morning does not go on at the modem's rate. A retired aggregate gets no estimate.
        for index in rows.indices
        where kind != .top && rows[index].start == current && !InterfaceName.isRetired(rows[index].name)
            && present?.contains(rows[index].name) != false && !unwatched.contains(rows[index].name) {
            // Scaled from the time counted, as check projects: one first seen mid-period is not diluted.
            let counted = max(current, countingSince[rows[index].name] ?? current)
            rows[index].estimated = estimate(rows[index].counters, elapsed: now - counted, length: end - counted, bucket: end - current)
        }
        rows = names.apply(rows).map { row in
            var row = row
            row.seconds = elapsedSeconds(start: row.start, end: TimeBuckets.start(of: kind.granularity, -1, before: row.start), now: now)
            return row
        }
        if kind == .top {
            return Array(rows.sorted { ($0.total, $1.start) > ($1.total, $0.start) }.prefix(limit))
        }
        let grouped = Dictionary(grouping: rows, by: \.name)
        // Names in the order status shows them: tun2 before tun10.
        return NaturalOrder.sorted(Array(grouped.keys)).flatMap { name in
            grouped[name]!.sorted { $0.start < $1.start }.suffix(limit)
        }
    }

    /// The running bucket's counters scaled from the time counted to the rest of the bucket: none until
    /// a twenty-fourth of the `bucket` was counted, at most a day's worth (as `check` waits a day before
    /// it projects a budget), since two minutes of a tunnel are no month's rate.
    static func estimate(_ counters: LinkCounters, elapsed: Int64, length: Int64, bucket: Int64) -> LinkCounters? {
        guard elapsed >= BudgetProjection.leastObserved(periodLength: bucket), length > 0 else { return nil }
        let scale = Double(length) / Double(min(elapsed, length))
        func scaled(_ value: UInt64) -> UInt64 { UInt64(min(Double(value) * scale, Double(UInt64.max / 2))) }
        return LinkCounters(
            rxBytes: scaled(counters.rxBytes), txBytes: scaled(counters.txBytes),
            rxPackets: scaled(counters.rxPackets), txPackets: scaled(counters.txPackets))
    }

    /// The seconds of a period [start, end) that have passed by `now`: all once it is over, none before it.
    package static func elapsedSeconds(start: Int64, end: Int64, now: Int64) -> Int64 {
        max(0, min(end, now) - start)
    }

    /// Bytes per second over `seconds`; nil for a period not begun.
    package static func averageRate(_ bytes: UInt64, seconds: Int64) -> Double? {
        seconds > 0 ? Double(bytes) / Double(seconds) : nil
    }

    package static func text(_ kind: Kind, _ rows: [HistoryRow], units: Units, dates: DateFormats = DateFormats()) -> String {
        if rows.isEmpty {
            // No bars to key; where to look instead.
            let advice = "Nothing counted in this range ('ifmeter status' says what is counted, 'ifmeter interfaces' what is not)."
            return Wrapping.lines(advice, width: 80).joined(separator: "\n") + "\n\(Estimate.basis).\n"
        }
        let largest = rows.map(\.total).max() ?? 0
        let columns: [(String, TextTable.Alignment)] = [
            (kind == .top ? "DAY" : kind == .fiveminutes ? "5 MINUTES" : kind.granularity.rawValue.uppercased(), .left), ("INTERFACE", .left),
            ("RX", .right), ("TX", .right), ("TOTAL", .right), ("AVG RATE", .right),
        ]
        var lines: [(cells: [String], counters: LinkCounters?)] = []
        // Hours and five minutes as vnStat lists them: the date on a line of its own, then the times under it.
        let datedApart = kind == .hours || kind == .fiveminutes
        var dateLines: [Int: String] = [:]
        var previous: (name: String, date: String)?
        for row in rows {
            var label = TimeText.bucket(row.start, kind.granularity, formats: dates)
            if datedApart {
                let date = TimeText.format(row.start, dates.day)
                if previous?.name != row.name || previous?.date != date { dateLines[lines.count] = date }
                previous = (row.name, date)
                label = "  " + TimeText.format(row.start, TimeText.showsUTC ? "%H:%MZ" : "%H:%M")
            }
            if row.live { label += "*" }
            if row.incomplete != nil { label += "!" }
            if row.imported { label += "^" }
            let rate = row.averageRate.map { units.rate(bytesPerSecond: $0) } ?? "-"
            lines.append(([label, row.name, units.bytes(row.counters.rxBytes), units.bytes(row.counters.txBytes), units.bytes(row.total), rate], row.counters))
            if let estimated = row.estimated {
                lines.append((["  estimated", row.name, units.bytes(estimated.rxBytes), units.bytes(estimated.txBytes), units.bytes(estimated.totalBytes), ""], nil))
            }
        }
        // The bars take what 80 columns leave (at most 24), measured on the table without them; under 4, none.
        var numbers = TextTable(columns)
        for line in lines { numbers.append(line.cells) }
        let width = numbers.rendered().split(separator: "\n").map(\.count).max() ?? 0
        let barWidth = min(24, 80 - 2 - width)
        let showsBars = kind.showsBars && barWidth >= 4
        var table = TextTable(showsBars ? columns + [("", .left)] : columns)
        for line in lines {
            guard showsBars else {
                table.append(line.cells)
                continue
            }
            table.append(line.cells + [line.counters.map { bar(rx: $0.rxBytes, tx: $0.txBytes, largest: largest, width: barWidth) } ?? ""])
        }
        var notes: [String] = []
        if rows.contains(where: \.live) { notes.append("* includes counters not yet committed by the daemon, read from the kernel now.") }
        if rows.contains(where: \.imported) { notes.append("^ holds history imported from vnStat (ifmeter status -i NAME says from where).") }
        if rows.contains(where: { $0.incomplete != nil }) { notes.append("! a reset with unknown loss fell in this period (see 'ifmeter events').") }
        if rows.contains(where: { $0.estimated != nil }) {
            let noun = kind.granularity.noun
            let whose = noun.hasSuffix("s") ? noun + "'" : noun + "'s"  // five minutes'
            notes.append("estimated: the running \(whose) total at its end, at the rate so far.")
        }
        if showsBars { notes.append("Bars: r = received, t = transmitted.") }
        // The caveat last, as on every screen.
        var output = ""
        for (index, line) in table.rendered().split(separator: "\n").enumerated() {
            if index > 0, let date = dateLines[index - 1] { output += date + "\n" }
            output += line + "\n"
        }
        return output + (notes + ["\(Estimate.basis)."]).joined(separator: "\n") + "\n"
    }

    /// `rrrrtt`: the row's share of the largest row, split rx/tx.
    static func bar(rx: UInt64, tx: UInt64, largest: UInt64, width: Int) -> String {
        guard largest > 0 else { return "" }
        let total = Double(rx) + Double(tx)
        let length = min(max(Int(Int64(saturating: total / Double(largest) * Double(width))), 0), width)
        let rxLength = total > 0 ? min(Int(Int64(saturating: Double(rx) / total * Double(length))), length) : 0
        return String(repeating: "r", count: rxLength) + String(repeating: "t", count: length - rxLength)
    }

    package static func json(_ kind: Kind, _ rows: [HistoryRow]) -> JSON {
        .object([
            ("schema", .string(schema)), ("estimate", .bool(true)), ("basis", .string(Estimate.basis)),
            ("kind", .string(kind.rawValue)), ("granularity", .string(kind.granularity.rawValue)),
            ("rows", .array(rows.map { row in
                .object([
                    ("interface", .string(row.name)), ("class", .string(row.interfaceClass)),
                    ("start", .string(TimeText.utc(row.start))), ("label", .string(TimeText.bucket(row.start, kind.granularity))),
                    ("rx_bytes", .uint(row.counters.rxBytes)), ("tx_bytes", .uint(row.counters.txBytes)),
                    ("rx_packets", .uint(row.counters.rxPackets)), ("tx_packets", .uint(row.counters.txPackets)),
                    ("elapsed_seconds", .int(row.seconds)), ("average_bytes_per_second", row.averageRate.map { .double($0) } ?? .null),
                    ("live", .bool(row.live)), ("imported", .bool(row.imported)), ("incomplete", row.incomplete.map { .string($0) } ?? .null),
                    ("estimated", row.estimated.map { estimated in
                        .object([
                            ("rx_bytes", .uint(estimated.rxBytes)), ("tx_bytes", .uint(estimated.txBytes)),
                            ("rx_packets", .uint(estimated.rxPackets)), ("tx_packets", .uint(estimated.txPackets)),
                        ])
                    } ?? .null),
                ])
            })),
        ])
    }
}

/// `ifmeter export`: stored bucket records, each carrying its estimate label.
package enum ExportWriter {
    package enum Format: String, Sendable { case csv, jsonl }

    static let columns = ["interface", "class", "granularity", "start_utc", "rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "incomplete", "basis"]

    package static func render(_ buckets: [StoredBucket], format: Format) -> String {
        switch format {
        case .csv:
            var output = columns.joined(separator: ",") + "\n"
            for bucket in buckets {
                output += [
                    bucket.name, bucket.interfaceClass, bucket.granularity.rawValue, TimeText.utc(bucket.start),
                    String(bucket.counters.rxBytes), String(bucket.counters.txBytes),
                    String(bucket.counters.rxPackets), String(bucket.counters.txPackets),
                    bucket.incomplete ?? "", bucket.imported ? CounterStore.importedBasis : CounterStore.basis,
                ].map(csvField).joined(separator: ",") + "\n"
            }
            return output
        case .jsonl:
            return buckets.map { bucket in
                JSON.object([
                    ("interface", .string(bucket.name)), ("class", .string(bucket.interfaceClass)),
                    ("granularity", .string(bucket.granularity.rawValue)), ("start_utc", .string(TimeText.utc(bucket.start))),
                    ("rx_bytes", .uint(bucket.counters.rxBytes)), ("tx_bytes", .uint(bucket.counters.txBytes)),
                    ("rx_packets", .uint(bucket.counters.rxPackets)), ("tx_packets", .uint(bucket.counters.txPackets)),
                    ("incomplete", bucket.incomplete.map { .string($0) } ?? .null),
                    ("estimate", .bool(true)), ("basis", .string(bucket.imported ? CounterStore.importedBasis : CounterStore.basis)),
                ]).rendered(indent: nil) + "\n"
            }.joined()
        }
    }

    /// RFC 4180 over Unicode scalars: a field holding a comma, quote or line break is quoted; one a spreadsheet
    /// would run as a formula (leading =, +, -, @, tab or carriage return) gets a leading apostrophe (OWASP).
    static func csvField(_ field: String) -> String {
        var text = field
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { text = "'" + text }
        guard text.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingQuotes() + "\""
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            result.append(scalar)
            if scalar == "\"" { result.append(scalar) }
        }
        return String(result)
    }
}
