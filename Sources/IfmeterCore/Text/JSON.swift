/// A JSON value, rendered without Foundation so the binaries stay small; object keys keep the order
/// they were given in, so output is stable for golden tests and readable by people.
package indirect enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    package static func == (lhs: JSON, rhs: JSON) -> Bool { lhs.rendered() == rhs.rendered() }

    /// Compact when `indent` is nil, else pretty-printed with that many spaces.
    package func rendered(indent: Int? = 2) -> String {
        var output = ""
        write(to: &output, indent: indent, depth: 0)
        return output
    }

    private func write(to output: inout String, indent: Int?, depth: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .uint(let value): output += String(value)
        case .double(let value): output += value.isFinite ? String(value) : "null"
        case .string(let value): JSON.writeString(value, to: &output)
        case .array(let items):
            writeContainer(open: "[", close: "]", count: items.count, to: &output, indent: indent, depth: depth) { index, out in
                items[index].write(to: &out, indent: indent, depth: depth + 1)
            }
        case .object(let members):
            writeContainer(open: "{", close: "}", count: members.count, to: &output, indent: indent, depth: depth) { index, out in
                JSON.writeString(members[index].0, to: &out)
                out += indent == nil ? ":" : ": "
                members[index].1.write(to: &out, indent: indent, depth: depth + 1)
            }
        }
    }

    private func writeContainer(
        open: String, close: String, count: Int, to output: inout String, indent: Int?, depth: Int,
        item: (Int, inout String) -> Void
    ) {
        output += open
        guard count > 0 else { return output += close }
        let inner = indent.map { "\n" + String(repeating: " ", count: $0 * (depth + 1)) } ?? ""
        for index in 0..<count {
            if index > 0 { output += "," }
            output += inner
            item(index, &output)
        }
        output += indent.map { "\n" + String(repeating: " ", count: $0 * depth) } ?? ""
        output += close
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            // Whatever a terminal acts on (C0, DEL, C1, bidirectional controls) and the JavaScript line
            // separators as \u escapes: a record stays one line, never drives a terminal, and leaves `Output`'s
            // terminal filter nothing to rewrite (its `\u{...}` would not be JSON).
            case _ where String.isTerminalControl(scalar) || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
