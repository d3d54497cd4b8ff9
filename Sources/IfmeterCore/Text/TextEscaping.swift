extension String {
    /// Each character found in `table` replaced by its escape sequence: one
    /// routine for the text formats ifmeter writes, each with its own table.
    func escaping(_ table: [Character: String]) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for character in self {
            if let replacement = table[character] { result += replacement } else { result.append(character) }
        }
        return result
    }
}

enum EscapeTable {
    /// Prometheus label values: backslash, double quote, line feed.
    static let prometheusLabel: [Character: String] = ["\\": "\\\\", "\"": "\\\"", "\n": "\\n"]
    /// Prometheus HELP text: backslash and line feed only.
    static let prometheusHelp: [Character: String] = ["\\": "\\\\", "\n": "\\n"]
    /// XML element content and attribute values.
    static let xml: [Character: String] = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;"]
}
