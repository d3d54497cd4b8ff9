/// Interface names as ifmeter holds them, one ASCII form per kernel name: Swift strings compare by
/// canonical equivalence and repair invalid UTF-8, so two kernel names could meet as one String. ASCII
/// printables but backslash stay, other bytes become `\xNN` (lowercase): String equality is byte equality.
package enum InterfaceName {
    package static func encode(bytes: some Sequence<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            if byte > 0x20 && byte < 0x7f && byte != 0x5c {
                scalars.append(Unicode.Scalar(byte))
            } else {
                scalars.append(contentsOf: "\\x".unicodeScalars)
                scalars.append(hexDigit(byte >> 4))
                scalars.append(hexDigit(byte & 0xf))
            }
        }
        return String(scalars)
    }

    /// The kernel bytes of an encoded name; nil when `name` is not in the
    /// encoded form (a stray backslash, a character outside printable ASCII).
    package static func decode(_ name: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var utf8 = name.utf8.makeIterator()
        while let byte = utf8.next() {
            if byte == 0x5c {
                guard utf8.next() == UInt8(ascii: "x"), let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                    return nil
                }
                let decoded = high << 4 | low
                // Only the bytes encode itself escapes: one spelling per name.
                guard !(decoded > 0x20 && decoded < 0x7f && decoded != 0x5c) else { return nil }
                bytes.append(decoded)
            } else if byte > 0x20 && byte < 0x7f {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        return bytes
    }

    package static func isEncoded(_ name: String) -> Bool { decode(name) != nil }

    /// A name a person typed: taken as it is when already encoded (as ifmeter prints names) or naming a
    /// retired aggregate, else its UTF-8 bytes are encoded.
    package static func fromUser(_ text: String) -> String {
        isEncoded(text) || retiredClass(of: text) != nil ? text : encode(bytes: text.utf8)
    }

    // Interfaces gone past the daily retention fold into a row per class (CounterStore.retireGoneInterfaces)
    // named with a bare space, which no kernel name nor its encoding (`\x20`) holds: it never collides.

    /// The name of the row that holds `interfaceClass`'s retired interfaces: `retired tunnel`.
    package static func retired(_ interfaceClass: InterfaceClass) -> String { "retired " + interfaceClass.rawValue }

    /// The class whose retired interfaces `name` holds; nil for any other name.
    package static func retiredClass(of name: String) -> InterfaceClass? {
        guard name.hasPrefix("retired ") else { return nil }
        return InterfaceClass(rawValue: String(name.dropFirst("retired ".count)))
    }

    /// Whether `name` is a per-class aggregate of retired interfaces.
    package static func isRetired(_ name: String) -> Bool { retiredClass(of: name) != nil }

    /// The name as a sysfs path component; nil when its bytes are not UTF-8, which no Swift path carries.
    package static func pathComponent(_ name: String) -> String? {
        guard let bytes = decode(name) else { return nil }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return String(scalars)
            case .error: return nil
            }
        }
    }

    private static func hexDigit(_ value: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(value < 10 ? 0x30 + value : 0x61 + value - 10)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
