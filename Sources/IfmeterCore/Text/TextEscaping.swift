extension String {
    /// Each Unicode scalar found in `table` replaced by its escape: one routine for every text format
    /// ifmeter writes. Scalars, never Characters: a quote followed by a combining mark is one Character
    /// but still a quote to every parser.
    func escaping(_ table: [Unicode.Scalar: String]) -> String {
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if let replacement = table[scalar] { result.append(contentsOf: replacement.unicodeScalars) } else { result.append(scalar) }
        }
        return String(result)
    }

    /// The text with every scalar a terminal may act on made visible (C0 but line feed and tab, DEL and
    /// C1 as `\xNN`, bidirectional overrides and isolates as `\u{NNNN}`), so a stored string can neither
    /// move the cursor, retitle the window nor write the clipboard.
    package func terminalSafe() -> String {
        // Most text is printable ASCII, which its bytes say without decoding scalars.
        if utf8.allSatisfy({ (0x20..<0x7f).contains($0) || $0 == 0x0a || $0 == 0x09 }) { return self }
        guard unicodeScalars.contains(where: Self.isTerminalControl) else { return self }
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if Self.isTerminalControl(scalar) {
                let hex = String(scalar.value, radix: 16)
                let text = scalar.value < 0x100
                    ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
                    : "\\u{" + hex + "}"
                result.append(contentsOf: text.unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    static func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0a, 0x09: false
        case 0x00..<0x20, 0x7f..<0xa0: true
        default: isBidirectionalControl(scalar.value)
        }
    }

    /// Embeddings, overrides, isolates and marks: they reorder how a terminal shows the text after them.
    static func isBidirectionalControl(_ value: UInt32) -> Bool {
        switch value {
        case 0x202a...0x202e, 0x2066...0x2069, 0x200e, 0x200f, 0x061c: true
        default: false
        }
    }
}

enum EscapeTable {
    /// A stored string quoted in a one-line error: line breaks made visible (`terminalSafe` does the rest).
    static let oneLine: [Unicode.Scalar: String] = ["\n": "\\n", "\r": "\\r"]
    static let prometheusLabel: [Unicode.Scalar: String] = ["\\": "\\\\", "\"": "\\\"", "\n": "\\n"]
    static let prometheusHelp: [Unicode.Scalar: String] = ["\\": "\\\\", "\n": "\\n"]
    /// XML element content and attribute values; control characters XML 1.0 forbids even as references become U+FFFD.
    static let xml: [Unicode.Scalar: String] = {
        var table: [Unicode.Scalar: String] = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;"]
        for value in UInt8(0)..<0x20 where ![0x09, 0x0a, 0x0d].contains(value) { table[Unicode.Scalar(value)] = "\u{FFFD}" }
        // What else a terminal acts on (carriage return, DEL, C1, bidirectional controls) as character
        // references: the same text to an XML reader, and nothing for the terminal filter to rewrite.
        for value in [0x0d] + Array(0x7f...0x9f) + Array(UInt32(0x061c)...0x2069).filter(String.isBidirectionalControl) {
            table[Unicode.Scalar(value)!] = "&#x" + String(value, radix: 16) + ";"
        }
        table["\u{FFFE}"] = "\u{FFFD}"
        table["\u{FFFF}"] = "\u{FFFD}"
        return table
    }()
}
