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
        let widths = columns.indices.map { column in
            ([columns[column].title] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.indices.map { column in
                let padding = String(repeating: " ", count: widths[column] - cells[column].count)
                return columns[column].alignment == .left ? cells[column] + padding : padding + cells[column]
            }.joined(separator: "  ").trailingSpacesTrimmed()
        }
        return ([line(columns.map(\.title))] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}

extension String {
    func trailingSpacesTrimmed() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
