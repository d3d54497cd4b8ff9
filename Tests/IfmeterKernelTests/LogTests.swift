import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The journal prefix only when stderr really is the journal's stream.
@Suite struct LogTests {
    static let cases: [(variable: String?, stderr: (device: UInt64, inode: UInt64)?, journal: Bool)] = [
        ("8:12345", (8, 12345), true),
        ("8:12345", (8, 99), false),  // a terminal that inherited the variable
        ("9:12345", (8, 12345), false),
        (nil, (8, 12345), false),
        ("", (8, 12345), false),
        ("8:12345:1", (8, 12345), false),
        ("x:y", (8, 12345), false),
        ("8:12345", nil, false),  // stderr closed
    ]

    @Test(arguments: cases)
    func prefixOnlyOnTheJournalStream(_ testCase: (variable: String?, stderr: (device: UInt64, inode: UInt64)?, journal: Bool)) {
        #expect(Log.isJournalStream(testCase.variable, standardError: testCase.stderr) == testCase.journal)
    }

    /// What reaches a terminal or the log: printable text as it is, controls
    /// made visible, each record on one line.
    static let escapes: [(text: String, safe: String, oneLine: String)] = [
        ("tun0: counting (ifindex 7, tunnel)", "tun0: counting (ifindex 7, tunnel)", "tun0: counting (ifindex 7, tunnel)"),
        ("a\tb\nc", "a\tb\nc", "a\tb c"),
        ("\u{1b}[2J~\u{7f}", "\\x1b[2J~\\x7f", "\u{1b}[2J~\u{7f}"),
        ("wg\r\nx", "wg\\x0d\nx", "wg\r x"),
        ("ü-\u{9b}-\u{202e}-🚀", "ü-\\x9b-\\u{202e}-🚀", "ü-\u{9b}-\u{202e}-🚀"),
        ("ü-∆", "ü-∆", "ü-∆"),
    ]

    @Test(arguments: escapes)
    func textIsMadeSafeForATerminalAndOneLine(_ testCase: (text: String, safe: String, oneLine: String)) {
        #expect(testCase.text.terminalSafe() == testCase.safe)
        #expect(testCase.text.replacingNewlines() == testCase.oneLine)
    }

    /// The real daemon with JOURNAL_STREAM naming another file than its
    /// stderr (a terminal's case) writes no `<N>` prefix; naming its
    /// stderr's own device and inode, it does.
    @Test func theDaemonChecksItsStandardError() throws {
        let directory = try TestEnvironment.temporaryDirectory("journal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        var info = stat()
        #expect(stat(log, &info) == 0)
        let ifmeterd = TestEnvironment.binary("ifmeterd")
        // One pass on a store of its own logs its start-up notice.
        for (variable, prefixed) in [("1:1", false), ("\(info.st_dev):\(info.st_ino)", true)] {
            let state = directory.appendingPathComponent("state-\(prefixed)").path
            let result = try runProcess("/bin/sh", ["-c", "exec \"$0\" --once --config /dev/null --state-dir \"$2\" 2>>\"$1\"", ifmeterd, log, state],
                                        environment: ProcessInfo.processInfo.environment.merging(["JOURNAL_STREAM": variable]) { $1 })
            #expect(result.status == 0)
            let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            let notice = lines.last { $0.contains("watched interface") }
            #expect(notice?.hasPrefix("<5>store") == prefixed, "\(variable): \(notice ?? "")")
            #expect(notice?.hasPrefix("ifmeterd: store") == !prefixed)
        }
    }
}
