import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The metrics file against its real consumers: promtool and node_exporter.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct MetricsFileTests {
    @Test func promtoolAndNodeExporterAcceptItAndAgreeWithStatus() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let textfiles = daemon.directory.appendingPathComponent("textfiles")
        try FileManager.default.createDirectory(at: textfiles, withIntermediateDirectories: true)
        let metrics = textfiles.appendingPathComponent("ifmeter.prom").path
        try daemon.start(interval: 0.2, extra: ["--metrics-file", metrics])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 6, txPackets: 4, size: 700, persist: true)
        try daemon.namespace.tunTraffic(name: "wg0", subnet: 1, rxPackets: 2, size: 100, lives: 3)
        #expect(daemon.stop() == 0)

        let check = try runProcess("/bin/sh", ["-c", "promtool check metrics < \(metrics)"])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        let attributes = try FileManager.default.attributesOfItem(atPath: metrics)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o644)

        // node_exporter with only the textfile collector, on loopback.
        let scrape = try scrapeTextfiles(in: textfiles.path)
        let lines = scrape.split(separator: "\n")
        #expect(lines.contains("node_textfile_scrape_error 0"))
        func value(_ series: String) -> UInt64 {
            lines.first { $0.hasPrefix(series + " ") }.flatMap { UInt64($0.split(separator: " ").last!) } ?? .max
        }
        let status = try daemon.namespace.exec([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "status", "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
        for interface in try #require(document["interfaces"] as? [[String: Any]]) {
            let name = try #require(interface["name"] as? String)
            let allTime = try #require(interface["all_time"] as? [String: Any])
            let labels = "{class=\"tunnel\",device=\"\(name)\"}"
            #expect(value("ifmeter_receive_bytes_total\(labels)") == number(allTime["rx_bytes"]), "\(name)")
            #expect(value("ifmeter_transmit_bytes_total\(labels)") == number(allTime["tx_bytes"]), "\(name)")
        }
        #expect(value("ifmeter_receive_bytes_total{class=\"tunnel\",device=\"tun0\"}") == 4200)
        #expect(value("ifmeter_receive_bytes_total{class=\"tunnel\",device=\"wg0\"}") == 600)
        #expect(value("ifmeter_resets_total{class=\"tunnel\",device=\"wg0\",reason=\"removed\"}") == 3)
    }

    /// Issue 13's hygiene: a new device is shown at zero first, an idle
    /// watched one is shown, the ifindex is a gauge (a recreation starts no
    /// new series), the build is described.
    @Test func seriesAreStableAndANewDeviceStartsAtZero() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let metrics = daemon.directory.appendingPathComponent("ifmeter.prom").path
        try daemon.start(interval: 3600, extra: ["--metrics-file", metrics])
        func series(_ prefix: String) throws -> [String] {
            try String(contentsOfFile: metrics, encoding: .utf8).split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
        }
        #expect(try series("ifmeter_build_info") == ["ifmeter_build_info{version=\"\(Version.number)\"} 1"])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 1000, persist: true)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, persist: true)  // idle
        daemon.signal(SIGHUP)  // a sample and a write
        try daemon.waitForLog("reloaded")
        #expect(try series("ifmeter_receive_bytes_total{device=\"tun0\"") == ["ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 0"])
        #expect(try series("ifmeter_receive_bytes_total{device=\"tun1\"") == ["ifmeter_receive_bytes_total{device=\"tun1\",class=\"tunnel\"} 0"])
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded", occurrences: 2)
        #expect(try series("ifmeter_receive_bytes_total{device=\"tun0\"") == ["ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 3000"])
        let before = try series("ifmeter_interface_info{device=\"tun0\"")
        #expect(before.count == 1 && !before[0].contains("ifindex"))
        // Recreated: the same series, a new ifindex value.
        let oldIndex = try series("ifmeter_interface_ifindex{device=\"tun0\"")
        try daemon.namespace.exec(["ip", "link", "del", "tun0"])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 1000, persist: true)
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded", occurrences: 3)
        #expect(try series("ifmeter_interface_info{device=\"tun0\"") == before)
        #expect(try series("ifmeter_receive_bytes_total{device=\"tun0\"") == ["ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 4000"])
        let newIndex = try series("ifmeter_interface_ifindex{device=\"tun0\"")
        #expect(oldIndex.count == 1 && newIndex.count == 1 && oldIndex != newIndex)
        #expect(daemon.stop() == 0)
        let check = try runProcess("/bin/sh", ["-c", "promtool check metrics < \(metrics)"])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
    }

    /// Memory follows the links of the last MetricsKeepGoneSec=: a gone
    /// interface leaves the ledger, and one that comes back is published
    /// with its stored totals, counted once.
    @Test func anInterfaceBackAfterItWasForgottenKeepsItsTotals() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "MetricsKeepGoneSec=0\n")
        let metrics = daemon.directory.appendingPathComponent("ifmeter.prom").path
        try daemon.start(interval: 0.2, commitInterval: 0, extra: ["--metrics-file", metrics])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 500)  // created and deleted
        // Forgotten once gone for more than a whole second (the clock's grain): within ten.
        var forgotten = false
        for _ in 0..<100 where !forgotten {
            usleep(100_000)
            forgotten = try !String(contentsOfFile: metrics, encoding: .utf8).contains("device=\"tun0\"")
        }
        #expect(forgotten)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 300, persist: true)
        usleep(600_000)
        #expect(daemon.stop() == 0)
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(text.contains("ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 1300\n"), "\(text)")
        #expect(try daemon.totals("tun0").rxBytes == 1300)
    }

    @Test func aReaderRacingTheWriterNeverSeesAPartialFile() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let metrics = daemon.directory.appendingPathComponent("ifmeter.prom").path
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.start(interval: 0.1, extra: ["--metrics-file", metrics])
        var reads = 0
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            guard let data = FileManager.default.contents(atPath: metrics) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            #expect(text.hasSuffix("\n"))
            #expect(text.contains("\nifmeter_store_write_errors_total 0\n"))
            reads += 1
        }
        #expect(reads > 100)
        #expect(daemon.stop() == 0)
        // No temporary file is left behind for node_exporter to trip on.
        #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    @Test func aSymlinkAtTheMetricsPathIsReplacedNotFollowed() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let victim = daemon.directory.appendingPathComponent("passwd-copy").path
        try "root:x:0:0\n".write(toFile: victim, atomically: true, encoding: .utf8)
        let metrics = daemon.directory.appendingPathComponent("ifmeter.prom").path
        try FileManager.default.createSymbolicLink(atPath: metrics, withDestinationPath: victim)
        try daemon.runOnce(extra: ["--metrics-file", metrics])
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root:x:0:0\n")
        let type = try FileManager.default.attributesOfItem(atPath: metrics)[.type] as? FileAttributeType
        #expect(type == .typeRegular)
    }

    /// The metrics file replaces whatever is at its path: pointed at one of
    /// the store's own files (a slip of `--metrics-file` or `MetricsFile=`),
    /// it must be refused before anything is written, not put over the store.
    @Test(arguments: ["ifmeter.db", "ifmeter.db-wal", "ifmeterd.lock", "ifmeterd.journal"])
    func aMetricsFileOnTheStoresOwnFilesIsRefused(name: String) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let result = try daemon.runOnceAllowingFailure(extra: ["--metrics-file", daemon.stateDirectory + "/" + name])
        #expect(result.status == ExitCode.config.rawValue, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(result.standardError.contains(daemon.stateDirectory + "/" + name))
        #expect(try storeHeader(daemon) == "SQLite format 3\0")
        #expect(try daemon.store().integrityCheck() == "ok")
        try daemon.runOnce()
    }

    /// The same slip made in the file and applied by a reload is refused,
    /// and the running metrics file kept.
    @Test func aReloadOntoTheStoresOwnFileKeepsTheRunningMetricsFile() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let textfiles = daemon.directory.appendingPathComponent("textfiles").path
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        try daemon.writeConfiguration("MetricsFile=\(textfiles)/ifmeter.prom\n")
        try daemon.start(interval: 0.2)
        try daemon.writeConfiguration("MetricsFile=\(daemon.stateDirectory)/ifmeter.db\n")
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded")
        usleep(600_000)
        #expect(daemon.stop() == 0)
        // The WAL holds the pages last written, so SQLite alone may still
        // read a replaced file as the store: its first bytes tell.
        #expect(try storeHeader(daemon) == "SQLite format 3\0")
        #expect(daemon.log.contains("reload: keeping MetricsFile=\(textfiles)/ifmeter.prom"))
    }

    /// Budgets and their use as gauges, with the period's bounds, equal to what check counts; new budgets
    /// are published at the reload. (Use between reads of the store: `useGrowsWithTheRunningTotals`.)
    @Test func budgetGaugesAgreeWithCheck() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.writeConfiguration("[Budgets]\ntunnel=1MB\ntun0=2KB per day rx\ntun0=1GB per hour tx\n")
        let metrics = daemon.directory.appendingPathComponent("ifmeter.prom").path
        try daemon.start(interval: 3600, extra: ["--metrics-file", metrics])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, txPackets: 2, size: 1000, persist: true)
        func gauges() throws -> [String: UInt64] {
            var values: [String: UInt64] = [:]
            for line in try String(contentsOfFile: metrics, encoding: .utf8).split(separator: "\n") where line.hasPrefix("ifmeter_budget_") {
                let parts = line.split(separator: " ")
                values[String(parts[0])] = UInt64(parts[1])
            }
            return values
        }
        func checked() throws -> [[String: Any]] {
            let result = try runProcess(
                TestEnvironment.binary("ifmeter"), ["--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "check", "--json"])
            #expect(result.status == 2, "\(result.standardError)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            return try #require(document["budgets"] as? [[String: Any]])
        }
        let series = [
            #"{class="tunnel",period="cycle",direction="total"}"#, #"{device="tun0",period="day",direction="rx"}"#,
            #"{device="tun0",period="hour",direction="tx"}"#, #"{class="wifi",period="cycle",direction="total"}"#,
        ]
        daemon.signal(SIGHUP)  // tun0's first publication, at 0
        try daemon.waitForLog("reloaded")
        try daemon.writeConfiguration("[Budgets]\ntunnel=1MB\ntun0=2KB per day rx\ntun0=1GB per hour tx\nwifi=1GB\n")
        daemon.signal(SIGHUP)  // a sample, a commit, the new budgets
        try daemon.waitForLog("reloaded", occurrences: 2)
        let reloaded = try gauges()
        #expect(reloaded["ifmeter_budget_used_bytes" + series[1]] == 3_000, "\(reloaded)")
        #expect(reloaded["ifmeter_budget_used_bytes" + series[2]] == 2_000)
        #expect(reloaded["ifmeter_budget_bytes" + series[0]] == 1_000_000)
        #expect(reloaded["ifmeter_budget_bytes" + series[1]] == 2_000)
        #expect(reloaded["ifmeter_budget_bytes" + series[3]] == 1_000_000_000)
        #expect(daemon.stop() == 0)  // the last commit, and the store read after it
        let committed = try gauges()
        for (index, budget) in try checked().enumerated() {
            #expect(committed["ifmeter_budget_used_bytes" + series[index]] == number(budget["used_bytes"]), "\(series[index])")
            #expect(committed["ifmeter_budget_used_bytes" + series[index]] == reloaded["ifmeter_budget_used_bytes" + series[index]])
            let start = try #require(committed["ifmeter_budget_period_start_timestamp_seconds" + series[index]])
            #expect(TimeText.utc(Int64(start)) == budget["period_start"] as? String)
        }
        let lint = try runProcess("/bin/sh", ["-c", "promtool check metrics < \(metrics)"])
        #expect(lint.status == 0, "\(lint.standardOutput)\(lint.standardError)")
    }

    private func storeHeader(_ daemon: DaemonHarness) throws -> String {
        String(decoding: (try FileSystem.readBytes(daemon.stateDirectory + "/ifmeter.db") ?? []).prefix(16), as: UTF8.self)
    }
}

@Suite struct MetricsRenderingTests {
    func snapshot(rx: UInt64, device: String = "tun0") -> MetricsSnapshot {
        MetricsSnapshot(
            interfaces: [MetricsInterface(
                device: device, info: InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun"), ifindex: 4,
                totals: LinkCounters(rxBytes: rx), resets: ["removed": 2])],
            lastSample: 1_800_000_000, sampleDuration: 0.001, storeWriteErrors: 0, lastCommit: 1_800_000_000)
    }

    /// Within one process a counter never goes down, even if the caller's
    /// totals did; a new process never reads the old file (see the hostile
    /// directory tests) and starts from what it is given.
    @Test func countersNeverDecreaseWithinAProcess() throws {
        let directory = try TestEnvironment.temporaryDirectory("metrics")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.prom").path
        let metrics = MetricsFile(path: path)
        try metrics.write(snapshot(rx: 5000))
        #expect(metrics.render(snapshot(rx: 4000)).contains("ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 5000\n"))
        #expect(metrics.render(snapshot(rx: 6000)).contains("ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 6000\n"))
        #expect(MetricsFile(path: path).render(snapshot(rx: 4000)).contains("ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 4000\n"))
    }

    /// What the daemon keeps in /run is bounded: a file over the relay's limit is not written, and the
    /// last one stays.
    @Test func aMetricsFileOverTheLimitIsRefusedAndTheLastOneStays() throws {
        let directory = try TestEnvironment.temporaryDirectory("metrics")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.prom").path
        let metrics = MetricsFile(path: path)
        try metrics.write(snapshot(rx: 5000))
        let written = try FileSystem.readBytes(path)
        var huge = snapshot(rx: 1)
        huge.interfaces = (0..<400).map { index in
            MetricsInterface(device: String(repeating: "x", count: 2000) + "\(index)", info: huge.interfaces[0].info, ifindex: 4,
                             totals: LinkCounters(rxBytes: 1), resets: ["removed": 1])
        }
        #expect(metrics.render(huge).utf8.count > MetricsRelay.sizeLimit)
        let refusal = #expect(throws: SystemError.self) { try metrics.write(huge) }
        #expect(refusal?.errno == EFBIG)
        #expect(try FileSystem.readBytes(path) == written)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["ifmeter.prom"])
    }

    /// No budget, no budget family: a file without [Budgets] reads as before.
    @Test func budgetsAreGaugesByTargetPeriodAndDirection() {
        var withBudgets = snapshot(rx: 1)
        withBudgets.budgets = [
            MetricsBudget(budget: Budget(target: .interfaceClass(.cellular), bytes: 20_000_000_000), used: 7, periodStart: 1_799_000_000, periodEnd: 1_801_000_000),
            MetricsBudget(budget: Budget(target: .interface("tun0"), bytes: 5, period: .day, direction: .rx), used: 9, periodStart: 1_799_990_000, periodEnd: 1_800_076_400),
        ]
        let text = MetricsFile(path: "/nonexistent/x.prom").render(withBudgets)
        let plain = MetricsFile(path: "/nonexistent/x.prom").render(snapshot(rx: 1))
        #expect(!plain.contains("budget"))
        #expect(text.hasPrefix(plain))
        let added = text.dropFirst(plain.count).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(added == [
            #"ifmeter_budget_bytes{class="cellular",period="cycle",direction="total"} 20000000000"#,
            #"ifmeter_budget_bytes{device="tun0",period="day",direction="rx"} 5"#,
            #"ifmeter_budget_used_bytes{class="cellular",period="cycle",direction="total"} 7"#,
            #"ifmeter_budget_used_bytes{device="tun0",period="day",direction="rx"} 9"#,
            #"ifmeter_budget_period_start_timestamp_seconds{class="cellular",period="cycle",direction="total"} 1799000000"#,
            #"ifmeter_budget_period_start_timestamp_seconds{device="tun0",period="day",direction="rx"} 1799990000"#,
            #"ifmeter_budget_period_end_timestamp_seconds{class="cellular",period="cycle",direction="total"} 1801000000"#,
            #"ifmeter_budget_period_end_timestamp_seconds{device="tun0",period="day",direction="rx"} 1800076400"#,
        ])
    }

    /// Between reads of the store, use grows by what each covered interface's running total grew since.
    static let growth: [(budget: Budget, used: UInt64)] = [
        (Budget(target: .interface("tun0"), bytes: 1, direction: .rx), 100 + 40),
        (Budget(target: .interface("tun0"), bytes: 1, direction: .tx), 100 + 0),
        (Budget(target: .interfaceClass(.tunnel), bytes: 1), 100 + 40 + 500),  // wg0 is new since the read
        (Budget(target: .interfaceClass(.cellular), bytes: 1), 100),
    ]

    @Test(arguments: growth)
    func useGrowsWithTheRunningTotals(_ testCase: (budget: Budget, used: UInt64)) {
        let (budget, used) = testCase
        let projection = BudgetProjection(used: 100, cycleStart: 0, cycleEnd: 10, countingSince: 0, now: 5)
        let status = BudgetStatus(budget: budget, periodStart: 0, periodEnd: 10, billingDay: 1, used: 100, projection: projection, state: .ok)
        let ledger = BudgetLedger(statuses: [status], baseline: ["tun0": LinkCounters(rxBytes: 1_000, txBytes: 50)])
        let tunnel = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
        let interfaces = [
            MetricsInterface(device: "tun0", info: tunnel, ifindex: 4, totals: LinkCounters(rxBytes: 1_040, txBytes: 50), resets: [:]),
            MetricsInterface(device: "wg0", info: tunnel, ifindex: 5, totals: LinkCounters(rxBytes: 500), resets: [:]),
        ]
        #expect(ledger.current(interfaces).map(\.used) == [used])
        #expect(!ledger.needsRead(at: 9) && ledger.needsRead(at: 10))
    }

    @Test func labelsAndHelpAreEscaped() {
        let text = MetricsFile(path: "/nonexistent/x.prom").render(snapshot(rx: 1, device: "we\"ird\\dev\nice"))
        #expect(text.contains("device=\"we\\\"ird\\\\dev\\nice\""))
        for line in text.split(separator: "\n") where line.hasPrefix("# HELP") {
            #expect(line.contains("Estimate from kernel interface counters"))
        }
        #expect(!text.contains("node_"))
        // HELP and TYPE once per family, before its samples.
        let families = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE") }.map { $0.split(separator: " ")[2] }
        #expect(Set(families).count == families.count)
    }

    @Test func aMissingMetricsDirectoryIsAStartError() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runProcess(TestEnvironment.binary("ifmeterd"), [
            "--state-dir", directory.appendingPathComponent("state").path, "--metrics-file", "/nonexistent/textfiles/ifmeter.prom", "--once",
        ])
        #expect(result.status == ExitCode.cannotCreate.rawValue)
        #expect(result.standardError == "ifmeterd: /nonexistent/textfiles/ifmeter.prom: metrics directory /nonexistent/textfiles does not exist\n")
    }

    /// Every write replaces the metrics file by a rename, which would
    /// replace a device as well (`MetricsFile=/dev/null`): refused at the
    /// start, in one line (exit 78), and the device stays. (A FIFO planted
    /// in a shared directory is replaced: HostileNeighbourTests.)
    @Test(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
    func aDeviceAsTheMetricsFileIsAStartError() throws {
        let kind = FileSystem.NonFile.device
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.prom").path
        #expect(mknod(path, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)
        let result = try runProcess(TestEnvironment.binary("ifmeterd"), [
            "--config", "/dev/null", "--state-dir", directory.appendingPathComponent("state").path, "--metrics-file", path, "--once",
        ])
        #expect(result.status == ExitCode.config.rawValue, "\(result.standardError)")
        #expect(result.standardError == "ifmeterd: MetricsFile=\(path): \(kind), not a file; left untouched: name a file of its own\n")
        #expect(FileSystem.nonFileKind(path) == kind)
    }

    /// `--once` takes no further sample: a metrics file it could not write
    /// is its exit code (73), in a line that promises no retry and comes
    /// last, after the start line, as a failing command's error does.
    @Test func aMetricsFileOnceUnwritableIsTheExitCode() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A directory in the file's place: no rename can replace it, even as root.
        let path = directory.appendingPathComponent("ifmeter.prom").path
        try FileManager.default.createDirectory(atPath: path + "/occupied", withIntermediateDirectories: true)
        let result = try runProcess(TestEnvironment.binary("ifmeterd"), [
            "--config", "/dev/null", "--state-dir", directory.appendingPathComponent("state").path, "--metrics-file", path, "--once",
        ])
        #expect(result.status == ExitCode.cannotCreate.rawValue, "\(result.standardError)")
        let errors = result.standardError.split(separator: "\n").filter { $0.contains(path) }
        #expect(errors.count == 1, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").last?.hasPrefix("metrics file not written: \(path): ") == true, "\(result.standardError)")
        #expect(!result.standardError.contains("retry"), "\(result.standardError)")
    }
}
