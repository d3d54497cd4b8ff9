/// How `ifmeter` asks a running daemon for a `StoreEdit`: a request file in the state directory
/// (only root and the daemon's user write there), SIGHUP, and the reply file the daemon leaves.
/// The daemon takes the request by renaming it, so a request withdrawn after a timeout is never
/// also applied. Names travel in hex: a name may hold any byte but NUL and '/'.
package enum EditRequest {
    package static let requestName = "ifmeterd.request"
    package static let replyName = "ifmeterd.reply"
    /// Held by the asking `ifmeter` from writing the request to reading the reply: one at a time.
    package static let lockName = "ifmeter-edit.lock"
    static let header = "ifmeter-edit 1"

    package static func encode(_ edit: StoreEdit) -> [UInt8] {
        Array("\(header)\n\(edit.verb) \(edit.names.map { hex(Array($0.utf8)) }.joined(separator: " "))\n".utf8)
    }

    package static func decode(_ bytes: [UInt8]) -> StoreEdit? {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard lines.count == 3, lines[2].isEmpty, String(decoding: lines[0], as: UTF8.self) == header else { return nil }
        let words = lines[1].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        guard let verb = words.first else { return nil }
        var names: [String] = []
        for word in words.dropFirst() {
            guard let bytes = unhex(word), let name = String(validating: bytes, as: UTF8.self), !name.isEmpty else { return nil }
            names.append(name)
        }
        return StoreEdit(verb: verb, names: names)
    }

    package static func encode(_ outcome: EditOutcome) -> [UInt8] {
        Array("\(outcome.status.rawValue) \(outcome.message.escaping(EscapeTable.oneLine))\n".utf8)
    }

    package static func decode(reply bytes: [UInt8]) -> EditOutcome? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasSuffix("\n"), let space = text.firstIndex(of: " "),
              let code = Int32(text[..<space]), let status = ExitCode(rawValue: code) else { return nil }
        return EditOutcome(status, String(text[text.index(after: space)...].dropLast()))
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    private static func unhex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0, digits.count <= 2 * 256 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
