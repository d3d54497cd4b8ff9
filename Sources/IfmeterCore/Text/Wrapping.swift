/// Text broken at spaces into lines that fit a terminal.
package enum Wrapping {
    /// Lines of at most `width` characters, each prefixed by `indent`; a word wider than the room stands alone.
    package static func lines(_ text: String, width: Int, indent: String = "") -> [String] {
        let room = max(1, width - indent.count)
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            if !current.isEmpty && current.count + 1 + word.count > room {
                lines.append(indent + current)
                current = ""
            }
            current += (current.isEmpty ? "" : " ") + word
        }
        if !current.isEmpty || lines.isEmpty { lines.append(indent + current) }
        return lines
    }
}
