/// One bar pair: received and transmitted bytes in a bucket.
package struct GraphPoint: Sendable, Hashable {
    package var label: String
    /// The tooltip's name for the bucket ("2026-11-29").
    package var detail: String
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

/// A string of text where the renderer put it, to check that none is clipped or overlaps another.
package struct TextBox: Sendable, Hashable {
    package var text: String
    package var left: Double
    package var right: Double
    package var top: Double
    package var bottom: Double
}

/// A rendered picture: the SVG and where its text went.
package struct GraphDrawing: Sendable {
    package var width: Int
    package var height: Int
    package var svg: String
    package var texts: [TextBox]
    /// The x-axis labels of the first panel, left to right.
    package var axisLabels: [TextBox]
}

/// `ifmeter graph`: self-contained SVGs, laid out from estimated text widths so all text fits at every size.
package enum SVGGraph {
    static let fontSize = 11.0
    static let titleSize = 14.0
    static let margin = 10.0
    static let chartHeight = 140.0
    static let rxColour = "#2b6cb0"
    static let txColour = "#dd6b20"

    /// The width DejaVu Sans (Debian's fontconfig sans-serif) gives a string, from above: digits are
    /// 0.64 em there, most lower-case letters less; bold is wider.
    static func textWidth(_ text: String, size: Double, bold: Bool = false) -> Double {
        Double(text.count) * size * (bold ? 0.74 : 0.66)
    }

    // MARK: Data

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
                return GraphPoint(label: TimeText.format(start, label), detail: TimeText.format(start, detail), rx: value.rx, tx: value.tx)
            }
        }
        switch kind {
        case .daily, .hourly, .monthly:
            let (granularity, count, label, detail): (Granularity, Int, String, String) =
                switch kind {
                case .hourly: (.hour, 24, "%H", "%Y-%m-%d %H:%M")
                case .monthly: (.month, 12, "%Y-%m", "%Y-%m")
                default: (.day, days, days > 92 ? "%Y-%m-%d" : "%m-%d", "%Y-%m-%d")
                }
            let data = series(granularity, count: count, label: label, detail: detail)
            return ordered(Set(data.sums.keys)).map { GraphPanel(title: title($0), points: points(data.starts, data.sums[$0] ?? [:], label: label, detail: detail)) }
        case .top:
            let data = sums(.day, from: .min)
            return ordered(Set(data.keys)).map { key in
                let largest = (data[key] ?? [:]).sorted { ($0.value.rx &+ $0.value.tx, $1.key) > ($1.value.rx &+ $1.value.tx, $0.key) }.prefix(10)
                return GraphPanel(title: title(key), points: largest.map {
                    GraphPoint(label: TimeText.format($0.key, "%Y-%m-%d"), detail: TimeText.format($0.key, "%Y-%m-%d"), rx: $0.value.rx, tx: $0.value.tx)
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
        case .hourly: "Hourly traffic, the 24 hours to \(TimeText.format(TimeBuckets.start(of: .hour, 0, before: now), "%Y-%m-%d %H:00"))"
        case .daily:
            "Daily traffic, \(TimeText.format(TimeBuckets.start(of: .day, days - 1, before: now), "%Y-%m-%d")) to \(TimeText.format(now, "%Y-%m-%d"))"
        case .monthly:
            "Monthly traffic, \(TimeText.format(TimeBuckets.start(of: .month, 11, before: now), "%Y-%m")) to \(TimeText.format(now, "%Y-%m"))"
        case .top: "The 10 largest days"
        }
    }

    // MARK: Drawing

    package static func render(title: String, notes: [String], panels: [GraphPanel], units: Units = Units()) -> GraphDrawing {
        var texts: [TextBox] = []
        var body = ""
        var axisLabels: [TextBox] = []

        let count = panels.map(\.points.count).max() ?? 0
        let labelWidth = panels.flatMap(\.points).map { textWidth($0.label, size: fontSize) }.max() ?? 0
        let few = count <= 24
        let slot = few ? max(16, (labelWidth + 8).rounded(.up)) : max(2, min(16, (960 / Double(max(count, 1))).rounded(.down)))
        let stride = few ? 1 : max(1, Int(((labelWidth + 8) / slot).rounded(.up)))
        let largestLabels = panels.map { panel in units.bytes(panel.points.map { max($0.rx, $0.tx) }.max() ?? 0) }
        let axisWidth = largestLabels.map { textWidth($0, size: fontSize) }.max() ?? 0
        // The first label, centred on the first bar, may reach left of the chart.
        let left = max(margin + axisWidth + 6, margin + labelWidth / 2)
        let chartWidth = Double(count) * slot
        let right = max(margin, labelWidth / 2 - slot / 2 + margin)
        let totalsWidth = panels.isEmpty || panels.allSatisfy({ $0.totals.isEmpty }) ? 0 : summaryColumns(panels, units: units).width
        var width = max(left + chartWidth + right, 2 * margin + totalsWidth, 2 * margin + textWidth(title, size: titleSize, bold: true), 480)
        let legend = [("received", rxColour), ("transmitted", txColour)]
        let legendWidth = legend.reduce(0) { $0 + 14 + textWidth($1.0, size: fontSize) + 12 }
        width = max(width, 2 * margin + legendWidth).rounded(.up)

        var y = margin + titleSize
        func text(_ content: String, x: Double, baseline: Double, size: Double = fontSize, bold: Bool = false, anchor: String = "start",
                  fill: String? = nil) -> TextBox {
            let textWidth = textWidth(content, size: size, bold: bold)
            let leftEdge = anchor == "start" ? x : anchor == "end" ? x - textWidth : x - textWidth / 2
            let box = TextBox(text: content, left: leftEdge, right: leftEdge + textWidth, top: baseline - size, bottom: baseline + size * 0.25)
            texts.append(box)
            var attributes = "x=\"\(number(x))\" y=\"\(number(baseline))\""
            if size != fontSize { attributes += " font-size=\"\(number(size))\"" }
            if bold { attributes += " font-weight=\"bold\"" }
            if anchor != "start" { attributes += " text-anchor=\"\(anchor)\"" }
            if let fill { attributes += " fill=\"\(fill)\"" }
            body += "<text \(attributes)>\(escape(content))</text>\n"
            return box
        }
        _ = text(title, x: margin, baseline: y, size: titleSize, bold: true)
        for line in notes.flatMap({ wrap($0, width: width - 2 * margin) }) {
            y += fontSize + 4
            _ = text(line, x: margin, baseline: y, fill: "#555555")
        }
        y += fontSize + 8
        var x = margin
        for (name, colour) in legend {
            body += "<rect x=\"\(number(x))\" y=\"\(number(y - 9))\" width=\"10\" height=\"10\" fill=\"\(colour)\"/>\n"
            let box = text(name, x: x + 14, baseline: y)
            x = box.right + 12
        }
        if panels.isEmpty {
            y += 2 * fontSize
            _ = text("No data in this range.", x: margin, baseline: y)
        }
        for (index, panel) in panels.enumerated() {
            y += 2 * fontSize + 4
            _ = text(panel.title, x: margin, baseline: y, bold: true)
            if !panel.totals.isEmpty {
                let columns = summaryColumns(panels, units: units)
                for total in [GraphTotal(label: "", rx: 0, tx: 0)] + panel.totals {
                    y += fontSize + 4
                    let cells = total.label.isEmpty ? ["", "rx", "tx", "total"]
                        : [total.label, units.bytes(total.rx), units.bytes(total.tx), units.bytes(.saturating(total.rx, plus: total.tx))]
                    _ = text(cells[0], x: margin, baseline: y)
                    for column in 1..<4 { _ = text(cells[column], x: margin + columns.ends[column - 1], baseline: y, anchor: "end") }
                }
                y += 6
            }
            let top = y + 10
            let baseline = top + chartHeight
            let largest = max(panel.points.map { max($0.rx, $0.tx) }.max() ?? 0, 1)
            _ = text(largestLabels[index], x: left - 6, baseline: top + fontSize, anchor: "end")
            _ = text("0", x: left - 6, baseline: baseline, anchor: "end")
            body += "<line x1=\"\(number(left))\" y1=\"\(number(baseline))\" x2=\"\(number(left + chartWidth))\" y2=\"\(number(baseline))\" stroke=\"#999999\"/>\n"
            let barWidth = min(12, max(1, ((slot - 2) / 2).rounded(.down)))
            for (position, point) in panel.points.enumerated() {
                let x = left + Double(position) * slot
                let gap = (slot - 2 * barWidth) / 2
                for (value, offset, colour, verb) in [(point.rx, 0.0, rxColour, "received"), (point.tx, barWidth, txColour, "transmitted")] where value > 0 {
                    let height = max(1, (Double(value) / Double(largest) * chartHeight).rounded())
                    body += "<rect x=\"\(number(x + gap + offset))\" y=\"\(number(baseline - height))\" width=\"\(number(barWidth))\" height=\"\(number(height))\" fill=\"\(colour)\">"
                        + "<title>\(escape(point.detail)) \(verb) \(value) bytes</title></rect>\n"
                }
                if (panel.points.count - 1 - position) % stride == 0 {
                    let box = text(point.label, x: x + slot / 2, baseline: baseline + fontSize + 3, anchor: "middle")
                    if index == 0 { axisLabels.append(box) }
                }
            }
            y = baseline + fontSize + 3
        }
        let height = Int((y + 2 * margin).rounded(.up))
        let svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(height)" viewBox="0 0 \(Int(width)) \(height)" font-family="sans-serif" font-size="\(number(fontSize))">
            <title>\(escape(title))</title>
            <rect width="100%" height="100%" fill="#ffffff"/>

            """ + body + "</svg>\n"
        return GraphDrawing(width: Int(width), height: height, svg: svg, texts: texts, axisLabels: axisLabels)
    }

    /// The right edges of a summary's rx, tx and total columns from the left margin, and its width.
    static func summaryColumns(_ panels: [GraphPanel], units: Units) -> (ends: [Double], width: Double) {
        let totals = panels.flatMap(\.totals)
        let labelWidth = (totals.map { textWidth($0.label, size: fontSize) } + [0]).max()!
        var ends: [Double] = []
        var edge = labelWidth
        for pick in [{ (t: GraphTotal) in t.rx }, { $0.tx }, { UInt64.saturating($0.rx, plus: $0.tx) }] {
            edge += 16 + (totals.map { textWidth(units.bytes(pick($0)), size: fontSize) } + [textWidth("total", size: fontSize)]).max()!
            ends.append(edge)
        }
        return (ends, edge)
    }

    static func wrap(_ text: String, width: Double) -> [String] {
        var lines: [String] = []
        for word in text.split(separator: " ") {
            if let last = lines.last, textWidth(last + " " + word, size: fontSize) <= width {
                lines[lines.count - 1] = last + " " + word
            } else {
                lines.append(String(word))
            }
        }
        return lines
    }

    /// At most one decimal, none when whole: short, and the same on every machine.
    static func number(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(abs(tenths % 10))"
    }

    static func escape(_ text: String) -> String { text.escaping(EscapeTable.xml) }
}
