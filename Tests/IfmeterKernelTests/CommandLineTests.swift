import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The executables' contract: help on stdout with 0, one-line errors on
/// stderr with a sysexits code.
@Suite struct CommandLineTests {
    let ifmeter = TestEnvironment.binary("ifmeter")

    @Test func helpGoesToStandardOutput() throws {
        for arguments in [["--help"], ["--config", "/dev/null", "-h"], ["interfaces", "--help"], ["status", "-h"]] {
            let result = try runProcess(ifmeter, arguments)
            #expect(result.status == 0)
            #expect(result.standardOutput.hasPrefix("Usage: ifmeter"))
            #expect(result.standardError.isEmpty)
        }
    }

    static let usageErrors: [(arguments: [String], message: String)] = [
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

    /// The tests' traffic tool changes whatever network it runs in: with no --name it does nothing
    /// (it once made and deleted a tun0 on the host), and it says how it is used.
    @Test func theTrafficToolNeedsANameAndHasHelp() throws {
        let testnet = TestEnvironment.binary("ifmeter-testnet")
        let bare = try runProcess(testnet, [])
        #expect(bare.status == ExitCode.usage.rawValue)
        #expect(bare.standardError == "ifmeter-testnet: --name NAME is required: the tun it creates (see ifmeter-testnet --help)\n")
        let help = try runProcess(testnet, ["--help"])
        #expect(help.status == 0 && help.standardOutput.hasPrefix("Usage: ifmeter-testnet --name NAME"))
    }

    /// Output that cannot be written is an I/O error (74), never exit 0.
    @Test func aFailedWriteExits74() throws {
        for command in ["\"$0\" --help", "\"$0\" interfaces --all", "\"$0\" status --help"] {
            let result = try runProcess("/bin/sh", ["-c", command + " > /dev/full", ifmeter])
            #expect(result.status == ExitCode.ioError.rawValue, "\(command)")
            #expect(result.standardError == "ifmeter: stdout: write: No space left on device\n", "\(command)")
        }
    }

    @Test func configurationErrorsNameTheFileAndLine() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.conf").path
        try "[Classes]\nwwan*=satellite\n".write(toFile: path, atomically: true, encoding: .utf8)
        let bad = try runProcess(ifmeter, ["--config", path, "interfaces"])
        #expect(bad.status == ExitCode.config.rawValue)
        #expect(bad.standardError == "ifmeter: \(path):2: wwan*=\"satellite\": expected wifi, cellular, tunnel, wired, other or ignore\n")

        let missing = try runProcess(ifmeter, ["--config", directory.appendingPathComponent("absent.conf").path, "interfaces"])
        #expect(missing.status == ExitCode.noInput.rawValue)
        #expect(missing.standardError.hasSuffix("absent.conf: no such file\n"))
    }

    /// A FIFO where the configuration should be (or the boot id, for the
    /// daemon) is refused at once: opening one waits for a writer forever.
    @Test func aFIFOInPlaceOfAFileIsAOneLineErrorNotAHang() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("ifmeter.conf").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let bootIDConfig = directory.appendingPathComponent("boot.conf").path
        try "[Daemon]\nBootIDPath=\(fifo)\n".write(toFile: bootIDConfig, atomically: true, encoding: .utf8)
        let state = directory.path + "/state"
        for (arguments, code) in [
            ([ifmeter, "--config", fifo, "interfaces"], ExitCode.config),
            ([ifmeterd, "--config", fifo, "--state-dir", state, "--once"], .config),
            ([ifmeterd, "--config", bootIDConfig, "--state-dir", state, "--once"], .noInput),
        ] {
            let result = try runProcess("/usr/bin/timeout", ["-s", "KILL", "10"] + arguments)
            #expect(result.status == code.rawValue, "\(arguments): \(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count == 1, "\(result.standardError)")
            #expect(result.standardError.contains(fifo) && result.standardError.contains("a FIFO no process wrote to"), "\(result.standardError)")
        }
        // A pipe with a writer is read: process substitution, and standard
        // input. Its second line is wrong on purpose: the error quoting it
        // shows the pipe was read.
        for script in [
            "exec \"$0\" --config <(printf '[Interfaces]\\nWatch=bogus\\n') interfaces",
            "printf '[Interfaces]\\nWatch=bogus\\n' | \"$0\" --config /dev/stdin interfaces",
        ] {
            let result = try runProcess("/usr/bin/timeout", ["-s", "KILL", "10", "/bin/bash", "-c", script, ifmeter])
            #expect(result.status == ExitCode.config.rawValue, "\(script): \(result.standardError)")
            #expect(result.standardError.contains(":2: Watch=") && result.standardError.contains("bogus"), "\(script): \(result.standardError)")
        }
    }

    /// A file without end (a character device) or one far larger than any
    /// configuration is read up to a bound, then refused in one line.
    @Test func anEndlessOrHugeFileIsReadUpToABoundThenRefused() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let huge = directory.appendingPathComponent("huge.conf").path
        try String(repeating: "# a comment line of sixty-four bytes, repeated past any bound\n", count: 40_000)
            .write(toFile: huge, atomically: true, encoding: .utf8)
        let bootIDConfig = directory.appendingPathComponent("boot.conf").path
        try "[Daemon]\nBootIDPath=/dev/zero\n".write(toFile: bootIDConfig, atomically: true, encoding: .utf8)
        let state = directory.path + "/state"
        for (arguments, code, path) in [
            ([ifmeter, "--config", "/dev/zero", "interfaces"], ExitCode.config, "/dev/zero"),
            ([ifmeter, "--config", huge, "interfaces"], .config, huge),
            ([ifmeterd, "--config", bootIDConfig, "--state-dir", state, "--once"], .noInput, "/dev/zero"),
        ] {
            let result = try runProcess("/usr/bin/timeout", ["-s", "KILL", "20"] + arguments)
            #expect(result.status == code.rawValue, "\(arguments): \(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count == 1, "\(result.standardError)")
            #expect(result.standardError.contains(path) && result.standardError.contains("more than the"), "\(result.standardError)")
        }
    }

    let ifmeterd = TestEnvironment.binary("ifmeterd")

    /// What a boot id may be: the kernel's UUID, and the ids a container or
    /// test writes in its place (`_`, `.`, `:` included).
    @Test(arguments: [
        "3f1c9a52-8d4e-4b7a-9c0f-2e6d5a1b7c84\n", "3f1c9a52-8d4e-4b7a-9c0f-2e6d5a1b7c84", "test-boot-1\n", "host_1.boot:7\n",
        "vm.example:boot_2", String(repeating: "a", count: 64) + "\n", "written-on-windows\r\n",
    ])
    func bootIDsAccepted(_ content: String) throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("boot_id").path
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try BootID.read(from: path) == content.filter { $0 != "\n" && $0 != "\r\n" })
    }

    @Test func theKernelsBootIDIsAccepted() throws {
        let text = try #require(try FileSystem.readText(BootID.defaultPath))
        #expect(text.hasSuffix("\n"))
        #expect(try BootID.read(from: BootID.defaultPath) == String(text.dropLast()))
    }

    static let notBootIDs: [(label: String, content: String)] = [
        ("empty", "\n"),
        ("65 characters", String(repeating: "a", count: 65) + "\n"),
        ("a space", "boot 1\n"),
        ("a slash", "boot/1\n"),
        ("two lines", "boot-1\nboot-2\n"),
        // Only the final line break is dropped: spaces and a lone CR are
        // no part of an id (they had been trimmed into one).
        ("a leading space", " boot-1\n"),
        ("a trailing space", "boot-1 \n"),
        ("a tab", "\tboot-1"),
        ("a lone CR", "boot-1\r"),
        ("nothing at all", ""),
    ]

    @Test(arguments: notBootIDs)
    func bootIDsRefused(_ testCase: (label: String, content: String)) throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("boot_id").path
        try testCase.content.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) { try BootID.read(from: path) }
    }

    /// A BootIDPath= that cannot hold a boot id: a regular file too large
    /// for one holds wrong data (65); a device or FIFO is no input (66).
    /// One line each, and nothing waits on it for long.
    @Test(arguments: [("regular file of 257 bytes", ExitCode.dataError), ("regular file of 4 KiB", .dataError), ("device", .noInput), ("fifo", .noInput)])
    func bootIDPathsRefusedAtStart(_ testCase: (kind: String, code: ExitCode)) throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var path = directory.appendingPathComponent("boot_id").path
        switch testCase.kind {
        case "regular file of 257 bytes": try (String(repeating: "a", count: 256) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        case "regular file of 4 KiB": try String(repeating: "root:x:0:0:root:/root:/bin/bash\n", count: 128).write(toFile: path, atomically: true, encoding: .utf8)
        case "device": path = "/dev/zero"
        default: #expect(mkfifo(path, 0o600) == 0)
        }
        let config = directory.appendingPathComponent("ifmeter.conf").path
        try "[Daemon]\nBootIDPath=\(path)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try runProcess("/usr/bin/timeout", ["-s", "KILL", "20", ifmeterd, "--config", config, "--state-dir", directory.path + "/state", "--once"])
        #expect(result.status == testCase.code.rawValue, "\(result.standardError)")
        #expect(result.standardError.hasPrefix("ifmeterd: cannot read the boot id: \(path): "), "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1, "\(result.standardError)")
    }

    /// `make run` keeps its store in ./state; `ifmeter` run from there, with
    /// nothing naming a store, reads it instead of saying "no store yet".
    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/var/lib/ifmeter/ifmeter.db"), "an installed store takes precedence"))
    func findsTheStoreMakeRunKeeps() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("empty.conf").path
        try "".write(toFile: config, atomically: true, encoding: .utf8)
        try mustRun(ifmeterd, ["--config", config, "--state-dir", directory.path + "/state", "--once"])
        let result = try runProcess("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\" --config \"$3\" status --json", "sh", directory.path, ifmeter, config])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("\"schema\": \"ifmeter.status/1\""))
    }

    /// A file named as the state directory is said to be one, not taken
    /// for a directory where no daemon has run yet.
    @Test(arguments: ["status", "days", "forget tun0 --force"])
    func aFileAsTheStateDirectoryIsNamedSo(_ command: String) throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("state").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        let result = try runProcess(ifmeter, ["--state-dir", file] + command.split(separator: " ").map(String.init))
        #expect(result.status == ExitCode.noInput.rawValue)
        #expect(result.standardError == "ifmeter: \(file): not a directory; the state directory (--state-dir, StateDirectory=) is where the daemon keeps its store\n")
        // A directory that does not exist is named so: a daemon never started, or a typo.
        let missing = directory.appendingPathComponent("stat").path
        let typo = try runProcess(ifmeter, ["--state-dir", missing] + command.split(separator: " ").map(String.init))
        #expect(typo.status == ExitCode.noInput.rawValue)
        #expect(typo.standardError == "ifmeter: \(missing): no such directory, so no store yet: start the daemon (systemctl start ifmeterd, make run, or ifmeterd --state-dir \(missing)), or check the state directory (--state-dir, StateDirectory=)\n")
    }

    @Test func daemonHelpAndUsageErrors() throws {
        let help = try runProcess(ifmeterd, ["--help"])
        #expect(help.status == 0)
        #expect(help.standardOutput.hasPrefix("Usage: ifmeterd"))
        let unknown = try runProcess(ifmeterd, ["--daemonize"])
        #expect(unknown.status == ExitCode.usage.rawValue)
        #expect(unknown.standardError == "ifmeterd: unknown option --daemonize (see 'ifmeterd --help')\n")
        let versionAndMore = try runProcess(ifmeterd, ["--version", "extra"])
        #expect(versionAndMore.status == ExitCode.usage.rawValue)
        #expect(versionAndMore.standardError == "ifmeterd: unexpected argument extra (see 'ifmeterd --help')\n")
        let interval = try runProcess(ifmeterd, ["--interval", "0"])
        #expect(interval.status == ExitCode.usage.rawValue)
        #expect(interval.standardError == "ifmeterd: --interval 0: expected seconds from 0.1 to 86400.0 (see 'ifmeterd --help')\n")
        let relative = try runProcess(ifmeterd, ["--state-dir", "state", "--once"])
        #expect(relative.status == ExitCode.usage.rawValue)
        #expect(relative.standardError == "ifmeterd: --state-dir state: expected an absolute path (see 'ifmeterd --help')\n")
        for option in ["--config", "--state-dir", "--metrics-file"] {
            let empty = try runProcess(ifmeterd, [option, "", "--once"])
            #expect(empty.status == ExitCode.usage.rawValue, "\(option)")
            #expect(empty.standardError == "ifmeterd: \(option) needs a value, not an empty one (see 'ifmeterd --help')\n", "\(option)")
        }
        for option in ["--help", "--version"] {
            let full = try runProcess("/bin/sh", ["-c", "\"$0\" \(option) > /dev/full", ifmeterd])
            #expect(full.status == ExitCode.ioError.rawValue, "\(option)")
            #expect(full.standardError == "ifmeterd: stdout: write: No space left on device\n", "\(option)")
        }
    }

    /// An option given twice is said to be given twice, as ifmeter says it,
    /// not called unknown.
    @Test(arguments: [["--interval", "5", "--interval", "6"], ["--once", "--once"], ["--state-dir", "/a", "--state-dir=/b"]])
    func daemonOptionsGivenTwiceAreNamedSo(_ arguments: [String]) throws {
        let result = try runProcess(ifmeterd, arguments)
        #expect(result.status == ExitCode.usage.rawValue)
        #expect(result.standardError == "ifmeterd: \(arguments[0]) given more than once (see 'ifmeterd --help')\n")
    }

    @Test func daemonStartErrorsNameThePath() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("ifmeter.conf").path
        try "[Daemon]\nCommitIntervalSec=soon\n".write(toFile: config, atomically: true, encoding: .utf8)
        let bad = try runProcess(ifmeterd, ["--config", config, "--once"])
        #expect(bad.status == ExitCode.config.rawValue)
        #expect(bad.standardError == "ifmeterd: \(config):2: CommitIntervalSec=\"soon\": expected seconds from 0.0 to 86400.0\n")

        try "[Daemon]\nBootIDPath=/nonexistent/boot_id\n".write(toFile: config, atomically: true, encoding: .utf8)
        let state = directory.appendingPathComponent("state").path
        let noBoot = try runProcess(ifmeterd, ["--config", config, "--state-dir", state, "--once"])
        #expect(noBoot.status == ExitCode.noInput.rawValue)
        #expect(noBoot.standardError.hasPrefix("ifmeterd: cannot read the boot id: /nonexistent/boot_id: open: No such file or directory"))
        // Some other file is no boot id: refused, not stored in every row.
        try "[Daemon]\nBootIDPath=/etc/passwd\n".write(toFile: config, atomically: true, encoding: .utf8)
        let notABootID = try runProcess(ifmeterd, ["--config", config, "--state-dir", state, "--once"])
        #expect(notABootID.status == ExitCode.dataError.rawValue)
        #expect(notABootID.standardError.hasPrefix("ifmeterd: cannot read the boot id: /etc/passwd: "), "\(notABootID.standardError)")
        #expect(notABootID.standardError.split(separator: "\n").count == 1)

        let notADirectory = try runProcess(ifmeterd, ["--state-dir", config + "/state", "--once"])
        #expect(notADirectory.status == ExitCode.cannotCreate.rawValue)
        #expect(notADirectory.standardError.contains("\(config)"))
    }
}
