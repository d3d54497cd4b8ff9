/// A plain text table: left-aligned text, right-aligned numbers.
package struct TextTable {
    package enum Alignment { case left, right }

    package var columns: [(title: String, alignment: Alignment)]
    package var rows: [[String]] = []

    package init(_ columns: [(String, Alignment)]) {
        self.columns = columns.map { (title: $0.0, alignment: $0.1) }
    }

    package mutating func append(_ row: [String]) {
        precondition(row.count == columns.count, "a row has one cell per column")
        rows.append(row)
    }

    package func rendered() -> String {
        let widths = self.widths
        return ([columns.map(\.title)] + rows).map { line($0, widths: widths) }.joined(separator: "\n") + "\n"
    }

    /// The table within `width` columns where it can be: the last column's text (a sentence, a signal)
    /// is wrapped under itself, the others keep their widths.
    package func rendered(fitting width: Int) -> String {
        let widths = self.widths
        let start = widths.dropLast().reduce(0, +) + 2 * (columns.count - 1)
        let indent = String(repeating: " ", count: start)
        return ([columns.map(\.title)] + rows).map { cells in
            let head = line(Array(cells.dropLast()) + [""], widths: Array(widths.dropLast()) + [0])
            let wrapped = Wrapping.lines(cells.last ?? "", width: max(width - start, 12))
            return ([head + String(repeating: " ", count: start - head.count) + wrapped[0]] + wrapped.dropFirst().map { indent + $0 })
                .map { $0.trailingSpacesTrimmed() }.joined(separator: "\n")
        }.joined(separator: "\n") + "\n"
    }

    private var widths: [Int] {
        columns.indices.map { column in
            ([columns[column].title] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
    }

    private func line(_ cells: [String], widths: [Int]) -> String {
        cells.indices.map { column in
            let padding = String(repeating: " ", count: max(0, widths[column] - cells[column].count))
            return columns[column].alignment == .left ? cells[column] + padding : padding + cells[column]
        }.joined(separator: "  ").trailingSpacesTrimmed()
    }
}

extension String {
    func trailingSpacesTrimmed() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
