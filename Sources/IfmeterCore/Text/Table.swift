/// A plain text table: left-aligned text, right-aligned numbers.
public struct TextTable {
    public enum Alignment { case left, right }

    public var columns: [(title: String, alignment: Alignment)]
    public var rows: [[String]] = []

    public init(_ columns: [(String, Alignment)]) {
        self.columns = columns.map { (title: $0.0, alignment: $0.1) }
    }

    public mutating func append(_ row: [String]) {
        precondition(row.count == columns.count, "a row has one cell per column")
        rows.append(row)
    }

    public func rendered() -> String {
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
