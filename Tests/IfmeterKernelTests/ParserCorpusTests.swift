import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The configuration parser against the fuzzing corpus (kept in the tree,
/// grown by `make fuzz`) and a generated corpus of hostile files: every
/// input parses or fails with file:line, one line, never a crash.
@Suite struct ParserCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus/config")

    static func check(_ text: String) -> Bool {
        do {
            _ = try ConfigurationFile.parse(text, path: "corpus.conf")
            return true
        } catch {
            let lines = ConfigurationFile.lines(of: text).count
            guard let line = error.line, (1...lines).contains(line) else { return false }
            return !error.description.contains("\n") && error.description.hasPrefix("corpus.conf:\(line): ")
        }
    }

    @Test func everyFuzzingCorpusEntry() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path)
        #expect(files.count >= 10)
        for file in files {
            let data = try Data(contentsOf: Self.corpus.appendingPathComponent(file))
            #expect(Self.check(String(decoding: data, as: UTF8.self)), "\(file)")
        }
    }

    /// Deterministic hostile files: random bytes, unknown keys, bad and
    /// huge values, duplicate sections, invalid globs, NUL bytes, long lines.
    static func generated(_ seed: UInt64, count: Int) -> [String] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        let pieces = ["[Daemon]", "[Classes]", "[Budgets]", "[Retention]", "[Interfaces]", "[Nope]", "SampleIntervalSec=", "MaxRate=",
                      "Watch=", "BillingDay=", "DailyDays=", "ppp*=", "wwan[=", "cellular=", "=", "\u{0}", "\r", "#", "  ", "99999999999999999999",
                      "-1", "1e308", "nan", "G", "GiB", "ignore", "tunnel", "\u{FFFD}", "[", "]", "*", "?",
                      "BillingDay.", "wwan0=5GB", " per ", "day", "hour", " rx", " tx", "total", "\t"]
        return (0..<count).map { _ in
            var text = ""
            for _ in 0..<(next() % 40) {
                switch next() % 10 {
                case 0: text += String(decoding: (0..<(next() % 30)).map { _ in UInt8(truncatingIfNeeded: next()) }, as: UTF8.self)
                case 1: text += String(repeating: "x", count: Int(next() % 6000))
                case 2, 3: text += "\n"
                default: text += pieces[Int(next() % UInt64(pieces.count))]
                }
            }
            return text
        }
    }

    @Test func generatedHostileFiles() {
        for (index, text) in Self.generated(42, count: 3000).enumerated() {
            var outcome = "parsed"
            do { _ = try ConfigurationFile.parse(text, path: "corpus.conf") } catch { outcome = "\(error)" }
            #expect(Self.check(text), "generated file \(index): \(outcome.debugDescription)")
        }
    }

    /// The same through the binaries: exit 0 or 78 (64 for arguments), one
    /// line on stderr, never a signal.
    @Test func throughTheBinaries() throws {
        let directory = try TestEnvironment.temporaryDirectory("corpus")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.conf").path
        for (index, text) in Self.generated(7, count: 40).enumerated() {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let result = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", path, "--state-dir", directory.path, "classes"])
            #expect([ExitCode.config.rawValue, ExitCode.noInput.rawValue].contains(result.status), "file \(index): \(result.status) \(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count == 1, "file \(index)")
        }
        for (index, text) in Self.generated(9, count: 40).enumerated() {
            let words = text.split(whereSeparator: { $0 == "\n" || $0 == " " }).map(String.init).filter { !$0.contains("\u{0}") }
            for binary in ["ifmeter", "ifmeterd"] {
                let result = try runProcess(TestEnvironment.binary(binary), ["--state-dir", directory.path + "/nonexistent/x", "--help-never"] + words)
                #expect(result.status == ExitCode.usage.rawValue, "\(binary) arguments \(index): \(result.status) \(result.standardError)")
                #expect(result.standardError.split(separator: "\n").count == 1, "\(binary) arguments \(index)")
            }
        }
    }
}
