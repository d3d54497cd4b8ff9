/// `ifmeter graph --svg`: daily received and transmitted bytes per class, a
/// self-contained SVG a browser shows as it is.
public enum SVGGraph {
    public static func render(days: [HistoryRow], from: Int64, dayCount: Int, now: Int64) -> String {
        let classes = InterfaceClass.allCases.filter { interfaceClass in days.contains { $0.interfaceClass == interfaceClass.rawValue } }
        let starts = (0..<dayCount).map { TimeBuckets.start(of: .day, dayCount - 1 - $0, before: now) }
        let width = 80 + dayCount * 16 + 20
        let panelHeight = 160
        let height = 70 + max(classes.count, 1) * (panelHeight + 40)
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" font-family="sans-serif" font-size="11">
            <title>ifmeter: daily traffic per class</title>
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="10" y="20" font-size="14" font-weight="bold">Daily traffic per class, \(escape(TimeText.format(starts.first ?? from, "%Y-%m-%d"))) to \(escape(TimeText.format(starts.last ?? from, "%Y-%m-%d")))</text>
            <text x="10" y="38" fill="#555555">\(escape(Estimate.basis)); \(escape(Estimate.classCaveat)).</text>
            <rect x="\(width - 170)" y="48" width="10" height="10" fill="#2b6cb0"/><text x="\(width - 156)" y="57">received</text>
            <rect x="\(width - 96)" y="48" width="10" height="10" fill="#dd6b20"/><text x="\(width - 82)" y="57">transmitted</text>

            """
        if classes.isEmpty { svg += "<text x=\"10\" y=\"90\">No data in this range.</text>\n" }
        for (panel, interfaceClass) in classes.enumerated() {
            let top = 70 + panel * (panelHeight + 40)
            var perDay: [Int64: (rx: UInt64, tx: UInt64)] = [:]
            for row in days where row.interfaceClass == interfaceClass.rawValue {
                let day = TimeBuckets.start(of: .day, containing: row.start)
                let sum = perDay[day] ?? (0, 0)
                perDay[day] = (.saturating(sum.rx, plus: row.counters.rxBytes), .saturating(sum.tx, plus: row.counters.txBytes))
            }
            let largest = max(perDay.values.map { max($0.rx, $0.tx) }.max() ?? 0, 1)
            let baseline = top + panelHeight
            svg += "<text x=\"10\" y=\"\(top + 12)\" font-weight=\"bold\">\(escape(interfaceClass.displayName))</text>\n"
            svg += "<text x=\"76\" y=\"\(top + 24)\" text-anchor=\"end\">\(escape(Units().bytes(largest)))</text>\n"
            svg += "<text x=\"76\" y=\"\(baseline)\" text-anchor=\"end\">0</text>\n"
            svg += "<line x1=\"80\" y1=\"\(baseline)\" x2=\"\(width - 20)\" y2=\"\(baseline)\" stroke=\"#999999\"/>\n"
            for (index, day) in starts.enumerated() {
                let x = 80 + index * 16
                let values = perDay[day] ?? (0, 0)
                let rxHeight = Int(Double(values.rx) / Double(largest) * Double(panelHeight - 20))
                let txHeight = Int(Double(values.tx) / Double(largest) * Double(panelHeight - 20))
                let label = TimeText.format(day, "%Y-%m-%d")
                svg += "<rect x=\"\(x + 2)\" y=\"\(baseline - rxHeight)\" width=\"6\" height=\"\(rxHeight)\" fill=\"#2b6cb0\"><title>\(escape(label)) received \(values.rx) bytes</title></rect>"
                svg += "<rect x=\"\(x + 8)\" y=\"\(baseline - txHeight)\" width=\"6\" height=\"\(txHeight)\" fill=\"#dd6b20\"><title>\(escape(label)) transmitted \(values.tx) bytes</title></rect>\n"
                if index % 7 == 0 || index == starts.count - 1 {
                    svg += "<text x=\"\(x + 8)\" y=\"\(baseline + 14)\" text-anchor=\"middle\">\(escape(TimeText.format(day, "%m-%d")))</text>\n"
                }
            }
        }
        return svg + "</svg>\n"
    }

    static func escape(_ text: String) -> String { text.escaping(EscapeTable.xml) }
}
