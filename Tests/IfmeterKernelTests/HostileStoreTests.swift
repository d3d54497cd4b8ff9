import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// No value in a store crashes a reader or the daemon: the fuzzing corpus
/// (Corpus/store, grown by `make fuzz`), a generated set, and every CLI
/// command over hostile stores, each ending 0 or with a sysexits code and
/// one line.
@Suite(.serialized) struct HostileStoreTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus/store")

    @Test func everyFuzzingCorpusEntry() throws {
        let directory = try TestEnvironment.temporaryDirectory("store-corpus")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path)
        #expect(files.count >= 10)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: Self.corpus.appendingPathComponent(file)))
            let problems = StoreFuzzHarness.run(bytes, directory: directory.path + "/s")
            #expect(problems.isEmpty, "\(file): \(problems)")
        }
    }

    /// Each hostile value in each column, one at a time.
    @Test func everyHostileValueInEveryColumn() throws {
        let directory = try TestEnvironment.temporaryDirectory("store-values")
        defer { try? FileManager.default.removeItem(at: directory) }
        let columns = StoreFuzzHarness.targets.reduce(0) { $0 + $1.columns.count }
        for column in 0..<columns {
            for value in 0..<StoreFuzzHarness.hostileValues.count {
                let input = [UInt8(column), 0, UInt8(value)]
                let problems = StoreFuzzHarness.run(input, directory: directory.path + "/s")
                #expect(problems.isEmpty, "\(input): \(problems)")
            }
        }
    }

    func hostileStore(_ statements: String) throws -> (directory: URL, state: String) {
        let directory = try TestEnvironment.temporaryDirectory("store-cli")
        let state = directory.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let store = try CounterStore(directory: state)
        try StoreFuzzHarness.seed(store)
        try store.database.execute(statements)
        store.close()
        return (directory, state)
    }

    static let hostileStores = [
        "UPDATE interface SET rx_bytes = -1",
        "UPDATE interface SET rx_bytes = 9223372036854775807, tx_bytes = 9223372036854775806",
        "UPDATE bucket SET rx_bytes = 9223372036854775807, tx_bytes = 9223372036854775807",
        "UPDATE life SET rx_bytes = -1, counted_rx_bytes = 9223372036854775807",
        "UPDATE meta SET value = '-9223372036854775808' WHERE key = 'last_commit'",
        "UPDATE meta SET value = 'nan' WHERE key = 'commit_interval'",
        "UPDATE meta SET value = 'inf' WHERE key = 'commit_interval'",
        "UPDATE meta SET value = '1e300' WHERE key = 'sample_interval'",
        "UPDATE event SET time = -9223372036854775808",
        "UPDATE bucket SET start = 9223372036854775807",
        "UPDATE life SET since_boot = 1e300",
    ]

    /// JSON and the history views list names as status does: tun2 before tun10.
    @Test func everyViewListsNamesInNaturalOrder() throws {
        let (directory, state) = try hostileStore("UPDATE interface SET name = 'tun10' WHERE id = 1; UPDATE interface SET name = 'tun2' WHERE id = 2")
        defer { try? FileManager.default.removeItem(at: directory) }
        for command in [["status", "--json", "--all"], ["days", "--json"], ["status", "--all"]] {
            let result = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state] + command)
            #expect(result.status == 0, "\(command): \(result.standardError)")
            let two = result.standardOutput.range(of: "tun2")
            let ten = result.standardOutput.range(of: "tun10")
            #expect(two != nil && ten != nil && two!.lowerBound < ten!.lowerBound, "\(command): \(result.standardOutput)")
        }
    }

    /// A table dropped by hand: every command, and the daemon, says which
    /// in one line, exit 65 as for any other damaged store.
    @Test(arguments: ["event", "present_link"])
    func aTableDroppedByHandIsADamagedStore(_ table: String) throws {
        let (directory, state) = try hostileStore("DROP TABLE \(table)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for command in [[TestEnvironment.binary("ifmeter"), "status"], [TestEnvironment.binary("ifmeterd"), "--once"]] {
            let result = try runProcess(command[0], ["--config", "/dev/null", "--state-dir", state] + command.dropFirst())
            #expect(result.status == ExitCode.dataError.rawValue, "\(command): \(result.standardError)")
            #expect(result.standardError.contains("schema version \(CounterStore.schemaVersion) (no table \(table))"), "\(command): \(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count == 1)
        }
    }

    /// Every command over each store: 0 or a sysexits code, one line on
    /// stderr, never a signal (a trap is 132 or 133).
    @Test(arguments: hostileStores) func everyCommandOverAHostileStore(_ statements: String) throws {
        let (directory, state) = try hostileStore(statements)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("ifmeter.conf").path
        try "[Budgets]\nBillingDay=3\ntunnel=1TB\nwlan0=1\n".write(toFile: config, atomically: true, encoding: .utf8)
        let commands = [["status"], ["status", "--json"], ["status", "--bytes"], ["classes"], ["check"], ["check", "--json"], ["days"],
                        ["hours"], ["months"], ["years"], ["top"], ["events"], ["export"], ["export", "--format", "jsonl"],
                        ["graph", "--svg", directory.path + "/g.svg"]]
        let allowed: Set<Int32> = [0, 1, 2, 64, 65, 66, 69, 73, 74, 78]
        for command in commands {
            let result = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", config, "--state-dir", state] + command)
            #expect(allowed.contains(result.status), "\(command): exit \(result.status): \(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count <= 1, "\(command): \(result.standardError)")
        }
    }

    /// A reader whose output waits on a pipe (`ifmeter export | less`) has
    /// let go of the store by then: a snapshot held while the pager is open
    /// would keep the daemon's WAL from being reset.
    @Test func aReaderBlockedOnItsOutputHoldsNoStore() throws {
        let (directory, state) = try hostileStore("""
            WITH RECURSIVE day(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM day WHERE n < 3000)
            INSERT INTO bucket(interface_id, granularity, start, rx_bytes, tx_bytes, rx_packets, tx_packets)
              SELECT 1, 'day', 1500000000 + n * 86400, n, n, 1, 1 FROM day
            """)
        defer { try? FileManager.default.removeItem(at: directory) }
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: TestEnvironment.binary("ifmeter"))
        reader.arguments = ["--config", "/dev/null", "--state-dir", state, "export", "--granularity", "day"]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        defer { reader.terminate() }
        // Over 64 KiB of rows: it blocks on the full pipe until read.
        let descriptors = "/proc/\(reader.processIdentifier)/fd"
        var held: [String] = []
        for _ in 0..<50 {
            usleep(100_000)
            let files = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
            held = files.compactMap { FileSystem.symbolicLinkTarget(descriptors + "/" + $0) }.filter { $0.hasPrefix(state) }
            if held.isEmpty { break }
        }
        #expect(reader.isRunning, "the export fit in the pipe: nothing was tested")
        #expect(held.isEmpty, "\(held)")
        let rows = output.fileHandleForReading.readDataToEndOfFile()
        reader.waitUntilExit()
        #expect(reader.terminationStatus == 0)
        #expect(rows.count > 65536)
    }

    /// A stored name no daemon wrote (a line feed, an escape, a `;` in it)
    /// is shown encoded by every command: it starts no line of its own,
    /// drives no terminal, and leaves each `--oneline` row its fields.
    @Test func aHandEditedNameIsShownEncodedEverywhere() throws {
        let (directory, state) = try hostileStore("UPDATE interface SET name = 'a' || char(10) || 'b' || char(27) || '[2J' WHERE id = 1")
        defer { try? FileManager.default.removeItem(at: directory) }
        let shown = "a\\x0ab\\x1b[2J"
        for command in [["status", "--all"], ["status", "--all", "--oneline"], ["events"], ["days"], ["status", "--json"], ["export"]] {
            let result = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state] + command)
            #expect(result.status == 0, "\(command): \(result.standardError)")
            #expect(result.standardOutput.contains(command.contains("--json") ? shown.replacingOccurrences(of: "\\", with: "\\\\") : shown), "\(command): \(result.standardOutput)")
            #expect(!result.standardOutput.unicodeScalars.contains("\u{1b}"), "\(command)")
            #expect(!result.standardOutput.split(separator: "\n").contains { $0.hasPrefix("b") }, "\(command)")
        }
        let selected = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state, "status", "-i", shown])
        #expect(selected.status == 0, "\(selected.standardError)")
        // Forgotten under the name shown: the row it stands for goes.
        let forget = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state, "forget", shown, "--force"])
        #expect(forget.status == 0, "\(forget.standardError)")
        let after = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state, "status", "--all"])
        #expect(!after.standardOutput.contains(shown), "\(after.standardOutput)")
        #expect(after.standardOutput.contains("wlan0"), "\(after.standardOutput)")
    }

    /// Free text edited into the store (a signal, a kind, an event's
    /// detail, an incomplete reason) with a line feed in it starts no line
    /// of its own on any screen: the break is shown as `\n`.
    @Test func handEditedFreeTextStaysOnItsLine() throws {
        let (directory, state) = try hostileStore("""
            UPDATE interface SET signal = 'sig' || char(10) || 'FORGED', kind = 'k' || char(10) || 'FORGED', incomplete = 'i' || char(10) || 'FORGED';
            UPDATE bucket SET incomplete = 'b' || char(10) || 'FORGED'; UPDATE event SET detail = 'd' || char(10) || 'FORGED'
            """)
        defer { try? FileManager.default.removeItem(at: directory) }
        for command in [["status", "--all"], ["status", "-i", "wlan0"], ["events"], ["days"], ["interfaces", "--all"]] {
            let result = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state] + command)
            #expect(result.status == 0, "\(command): \(result.standardError)")
            #expect(!result.standardOutput.split(separator: "\n").contains { $0.hasPrefix("FORGED") }, "\(command): \(result.standardOutput)")
        }
        let detail = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state, "status", "-i", "wlan0"])
        #expect(detail.standardOutput.contains("sig\\nFORGED"), "\(detail.standardOutput)")
    }

    /// Text where a count belongs reads as no number, not as zero: the
    /// reader refuses it in one line (65), as it refuses a negative count.
    @Test(arguments: [
        "UPDATE interface SET rx_bytes = 'abc'",
        "UPDATE bucket SET tx_bytes = x'00ff'",
        "INSERT INTO reset_count VALUES (1, 'removed', 'abc')",
    ])
    func textInACountIsRefusedNotReadAsZero(_ statements: String) throws {
        let (directory, state) = try hostileStore(statements)
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state, "status"])
        #expect(result.status == ExitCode.dataError.rawValue, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1, "\(result.standardError)")
        #expect(result.standardError.contains("not a whole number"), "\(result.standardError)")
    }

    /// Totals near 2^64, or totals and five-minute rows not folded yet
    /// that are each in range but sum past 2^62 (the next fold could not
    /// write them): the daemon refuses to build on them, in one line with
    /// exit 65, and leaves the file as it was.
    @Test(arguments: [
        "UPDATE interface SET rx_bytes = 9223372036854775000",
        "INSERT INTO reset_count VALUES (1, 'removed', -5)",
        "UPDATE interface SET tx_dropped = \((1 << 62) - 10); UPDATE bucket SET tx_dropped = 100 WHERE granularity = '5min'; UPDATE meta SET value = '0' WHERE key = 'folded_through'",
    ])
    func theDaemonRefusesTotalsTooLargeToCountOn(_ statements: String) throws {
        let (directory, state) = try hostileStore(statements)
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try Data(contentsOf: URL(fileURLWithPath: state + "/ifmeter.db"))
        let result = try runProcess(TestEnvironment.binary("ifmeterd"), ["--state-dir", state, "--once"])
        #expect(result.status == ExitCode.dataError.rawValue, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(result.standardError.contains("too large to go on counting"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: state + "/ifmeter.db")) == before)
    }

    /// A time or an ifindex no daemon wrote, which readers refuse (65): the
    /// daemon refuses the store too, before writing anything to it, rather
    /// than go on committing to a store no command can show.
    @Test(arguments: [
        ("UPDATE bucket SET start = 1125899906842624 WHERE granularity = 'day'", "time", ["days"]),
        ("UPDATE event SET new_ifindex = 99999999999", "ifindex", ["events"]),
        ("UPDATE life SET first_seen = -5", "time", [String]()),
        ("UPDATE life SET since_boot = 1e300", "since boot", [String]()),
    ])
    func theDaemonRefusesTimesAndIfindexesReadersRefuse(_ statements: String, _ problem: String, _ reader: [String]) throws {
        let (directory, state) = try hostileStore(statements)
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try Data(contentsOf: URL(fileURLWithPath: state + "/ifmeter.db"))
        let result = try runProcess(TestEnvironment.binary("ifmeterd"), ["--config", "/dev/null", "--state-dir", state, "--once"])
        #expect(result.status == ExitCode.dataError.rawValue, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(result.standardError.contains(problem), "\(result.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: state + "/ifmeter.db")) == before)
        guard !reader.isEmpty else { return }
        let read = try runProcess(TestEnvironment.binary("ifmeter"), ["--config", "/dev/null", "--state-dir", state] + reader)
        #expect(read.status == ExitCode.dataError.rawValue, "\(reader): \(read.standardError)")
    }
}
