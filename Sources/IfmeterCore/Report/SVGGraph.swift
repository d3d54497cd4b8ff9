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
    static let caveatSize = 10.0

    /// The width DejaVu Sans (Debian's fontconfig sans-serif) gives a string, from above: digits are
    /// 0.64 em there, most lower-case letters less; bold is wider.
    static func textWidth(_ text: String, size: Double, bold: Bool = false) -> Double {
        Double(text.count) * size * (bold ? 0.74 : 0.66)
    }

    /// The one line every picture carries: its figures are estimates, and by class they overlap.
    package static func caveat(byClass: Bool) -> String {
        byClass ? "Estimates from kernel counters, not billing-grade; tunnels also count in their link"
            : "Estimates from kernel interface counters: not per-application, not billing-grade"
    }

    /// The buckets a kind's bars stand for, whose boundaries the x axis labels; nil: label every bar.
    package static func buckets(_ kind: GraphKind) -> Granularity? {
        switch kind {
        case .summary, .hourly: .hour
        case .fiveminute: .fiveMinutes
        case .daily: .day
        case .monthly: .month
        case .yearly: .year
        case .top: nil
        }
    }

    package static func render(
        title: String, caveat: String, panels: [GraphPanel], buckets: Granularity?, units: Units = Units(), style: GraphStyle = .light
    ) -> GraphDrawing {
        let palette = GraphPalette(style)
        var texts: [TextBox] = []
        var body = ""
        var axisLabels: [TextBox] = []

        let count = panels.map(\.points.count).max() ?? 0
        let labelWidth = panels.flatMap(\.points).map { textWidth($0.label, size: fontSize) }.max() ?? 0
        let few = count <= 24
        let slot = few ? max(16, (labelWidth + 8).rounded(.up)) : max(2, min(16, (960 / Double(max(count, 1))).rounded(.down)))
        let ticks = panels.map { panel in GraphAxis.valueTicks(largest: panel.points.map { max($0.rx, $0.tx) }.max() ?? 0, scale: units.scale) }
        let axisWidth = ticks.flatMap { $0.map { textWidth($0.label, size: fontSize) } }.max() ?? 0
        // The first label, centred on the first bar, may reach left of the chart; whole pixels keep bars crisp.
        let left = max(margin + axisWidth + 6, margin + labelWidth / 2).rounded(.up)
        let chartWidth = Double(count) * slot
        let right = max(margin, labelWidth / 2 - slot / 2 + margin)
        let totalsWidth = panels.isEmpty || panels.allSatisfy({ $0.totals.isEmpty }) ? 0 : summaryColumns(panels, units: units).width
        var width = max(left + chartWidth + right, 2 * margin + totalsWidth, 2 * margin + textWidth(title, size: titleSize, bold: true),
                        2 * margin + textWidth(caveat, size: caveatSize), 480)
        let legend = [("received", palette.received), ("transmitted", palette.transmitted)]
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
        func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ colour: String) {
            body += "<line x1=\"\(number(x1))\" y1=\"\(number(y1))\" x2=\"\(number(x2))\" y2=\"\(number(y2))\" stroke=\"\(colour)\"/>\n"
        }
        _ = text(title, x: margin, baseline: y, size: titleSize, bold: true)
        y += caveatSize + 5
        _ = text(caveat, x: margin, baseline: y, size: caveatSize, fill: palette.muted)
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
            // Room above the chart for the top gridline's label, centred on its line.
            let top = y + fontSize + 4
            let baseline = top + chartHeight
            let axisTop = ticks[index].last!.bytes
            for tick in ticks[index] {
                let level = baseline - (tick.bytes / axisTop * chartHeight).rounded()
                if tick.bytes > 0 { line(left, level, left + chartWidth, level, palette.grid) }
                _ = text(tick.label, x: left - 6, baseline: level + fontSize * 0.35, anchor: "end", fill: palette.muted)
            }
            line(left, baseline, left + chartWidth, baseline, palette.axis)
            // Too narrow for a pair side by side (the five-minute graph): one bar the slot wide, the smaller value over the larger.
            let overlaid = slot < 6
            let barWidth = overlaid ? slot : min(12, max(1, ((slot - 2) / 2).rounded(.down)))
            for (position, point) in panel.points.enumerated() {
                let x = left + Double(position) * slot
                let gap = overlaid ? 0 : (slot - 2 * barWidth) / 2
                var pair = [(point.rx, 0.0, palette.received, "received"), (point.tx, overlaid ? 0 : barWidth, palette.transmitted, "transmitted")]
                if overlaid && point.tx > point.rx { pair.reverse() }
                for (value, offset, colour, verb) in pair where value > 0 {
                    let height = max(1, (Double(value) / axisTop * chartHeight).rounded())
                    body += "<rect x=\"\(number(x + gap + offset))\" y=\"\(number(baseline - height))\" width=\"\(number(barWidth))\" height=\"\(number(height))\" fill=\"\(colour)\">"
                        + "<title>\(escape(point.detail)) \(verb) \(value) bytes</title></rect>\n"
                }
            }
            let labelled = buckets.map { GraphAxis.labelledBars(starts: panel.points.map(\.start), $0, slot: slot, room: labelWidth + 8) }
                ?? Array(panel.points.indices)
            for position in labelled {
                let centre = left + (Double(position) + 0.5) * slot
                line(centre, baseline, centre, baseline + 3, palette.axis)
                // Low enough to clear the "0" beside the axis, which a first label centred on its bar may reach.
                let box = text(panel.points[position].label, x: centre, baseline: baseline + fontSize + 7, anchor: "middle")
                if index == 0 { axisLabels.append(box) }
            }
            y = baseline + fontSize + 7
        }
        let height = Int((y + 2 * margin).rounded(.up))
        let svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(height)" viewBox="0 0 \(Int(width)) \(height)" font-family="sans-serif" font-size="\(number(fontSize))" fill="\(palette.text)">
            <title>\(escape(title))</title>
            <rect width="100%" height="100%" fill="\(palette.background)"/>

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

    /// At most one decimal, none when whole: short, and the same on every machine.
    static func number(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return tenths % 10 == 0 ? String(tenths / 10) : "\(tenths / 10).\(abs(tenths % 10))"
    }

    static func escape(_ text: String) -> String { text.escaping(EscapeTable.xml) }
}
