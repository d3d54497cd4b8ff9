import Foundation
import Testing
@testable import IfmeterCore

/// The executables' contract: help on stdout with 0, one-line errors on
/// stderr with a sysexits code.
@Suite struct CommandLineTests {
    let ifmeter = TestEnvironment.binary("ifmeter")

    @Test func helpGoesToStandardOutput() throws {
        for arguments in [["--help"], ["-h"], ["interfaces", "--help"]] {
            let result = try runProcess(ifmeter, arguments)
            #expect(result.status == 0)
            #expect(result.standardOutput.hasPrefix("Usage: ifmeter"))
            #expect(result.standardError.isEmpty)
        }
    }

    static let usageErrors: [(arguments: [String], message: String)] = [
        ([], "ifmeter: missing command (see 'ifmeter --help')\n"),
        (["frobnicate"], "ifmeter: unknown command frobnicate (see 'ifmeter --help')\n"),
        (["interfaces", "--colour"], "ifmeter: unknown option --colour (see 'ifmeter interfaces --help')\n"),
        (["interfaces", "extra"], "ifmeter: unexpected argument extra (see 'ifmeter interfaces --help')\n"),
        (["--config"], "ifmeter: --config needs a value (see 'ifmeter --help')\n"),
    ]

    @Test(arguments: usageErrors)
    func usageErrorsExit64WithOneLine(_ testCase: (arguments: [String], message: String)) throws {
        let result = try runProcess(ifmeter, testCase.arguments)
        #expect(result.status == ExitCode.usage.rawValue)
        #expect(result.standardError == testCase.message)
        #expect(result.standardOutput.isEmpty)
    }

    @Test func configurationErrorsNameTheFileAndLine() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.conf").path
        try "[Classes]\nwwan*=satellite\n".write(toFile: path, atomically: true, encoding: .utf8)
        let bad = try runProcess(ifmeter, ["--config", path, "interfaces"])
        #expect(bad.status == ExitCode.config.rawValue)
        #expect(bad.standardError == "ifmeter: \(path):2: wwan*=\"satellite\": expected wifi, cellular, tunnel, other or ignore\n")

        let missing = try runProcess(ifmeter, ["--config", directory.appendingPathComponent("absent.conf").path, "interfaces"])
        #expect(missing.status == ExitCode.noInput.rawValue)
        #expect(missing.standardError.hasSuffix("absent.conf: no such file\n"))
    }
}
