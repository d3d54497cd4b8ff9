import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

@Suite struct InterfaceNameTests {
    static let cases: [(bytes: [UInt8], encoded: String)] = [
        (Array("wlan0".utf8), "wlan0"),
        (Array("caf\u{E9}".utf8), "caf\\xc3\\xa9"),
        (Array("cafe\u{301}".utf8), "cafe\\xcc\\x81"),
        ([0x71, 0x22, 0xcc, 0x81], "q\"\\xcc\\x81"),
        ([0x5c, 0xcc, 0x81], "\\x5c\\xcc\\x81"),
        ([0x1b, 0x5b, 0x32, 0x4a], "\\x1b[2J"),
        ([0x78, 0xff, 0xfe], "x\\xff\\xfe"),
        (Array("=1+1".utf8), "=1+1"),
        ([0x20, 0x7f, 0x09], "\\x20\\x7f\\x09"),
    ]

    @Test(arguments: cases) func encodesAndDecodesExactly(_ testCase: (bytes: [UInt8], encoded: String)) {
        #expect(InterfaceName.encode(bytes: testCase.bytes) == testCase.encoded)
        #expect(InterfaceName.decode(testCase.encoded) == testCase.bytes)
        #expect(testCase.encoded.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7f })
    }

    /// NFC and NFD spellings are equal Swift Strings, their encodings are not.
    @Test func canonicallyEquivalentNamesStayDistinct() {
        #expect("caf\u{E9}" == "cafe\u{301}")
        #expect(InterfaceName.encode(bytes: "caf\u{E9}".utf8) != InterfaceName.encode(bytes: "cafe\u{301}".utf8))
    }

    @Test func onlyOneSpellingDecodes() {
        for text in ["a\\x61", "a\\xC3", "a\\", "a\\x6", "a b", "é", "a\\y00"] { #expect(InterfaceName.decode(text) == nil, "\(text)") }
    }

    @Test func typedNames() {
        #expect(InterfaceName.fromUser("wlan0") == "wlan0")
        #expect(InterfaceName.fromUser("caf\u{E9}") == "caf\\xc3\\xa9")
        #expect(InterfaceName.fromUser("caf\\xc3\\xa9") == "caf\\xc3\\xa9")
        #expect(InterfaceName.fromUser("a\\b") == "a\\x5cb")
        #expect(InterfaceName.pathComponent("caf\\xc3\\xa9") == "caf\u{E9}")
        #expect(InterfaceName.pathComponent("x\\xff") == nil)
    }

    @Test func overridePatternsMatchEncodedNames() throws {
        let configuration = try ConfigurationFile.parse("[Classes]\ncaf\u{E9}*=cellular\nwl\\xff*=ignore\n", path: "t.conf")
        #expect(configuration.overrides.map(\.pattern) == ["caf\\xc3\\xa9*", "wl\\xff*"])
        #expect(configuration.overrides[0].matches("caf\\xc3\\xa90"))
        #expect(!configuration.overrides[0].matches("cafe\\xcc\\x810"))
        #expect(configuration.overrides[1].matches("wl\\xff\\xfe"))
    }

    /// A path with invalid bytes is refused with its line, never rewritten to U+FFFD.
    @Test func aConfigurationThatIsNotUTF8IsRefused() throws {
        let directory = try TestEnvironment.temporaryDirectory("config-bytes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.conf").path
        try Data(Array("[Daemon]\nMetricsFile=/var/lib/x".utf8) + [0xff] + Array(".prom\n".utf8)).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConfigurationError(path: path, line: 2, message: "not valid UTF-8")) { try ConfigurationFile.load(path: path, required: true) }
    }
}
