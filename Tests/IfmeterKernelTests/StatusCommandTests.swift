import Foundation
import FoundationXML
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// `ifmeter` as users run it, against a real daemon and kernel.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct StatusCommandTests {
    func ifmeter(_ daemon: DaemonHarness, _ arguments: [String], asUser user: String? = nil, group: String? = nil) throws -> ProcessResult {
        let command = [TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments
        let prefix = user.map { ["runuser", "-u", $0] + (group.map { ["-g", $0] } ?? []) + ["--"] } ?? []
        return try daemon.namespace.run(prefix + command)
    }

    func json(_ result: ProcessResult) throws -> [String: Any] {
        #expect(result.status == 0, "\(result.standardError)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    func allTime(_ document: [String: Any], _ name: String) throws -> (rx: UInt64, tx: UInt64) {
        let interfaces = try #require(document["interfaces"] as? [[String: Any]])
        let interface = try #require(interfaces.first { $0["name"] as? String == name })
        let counters = try #require(interface["all_time"] as? [String: Any])
        return (number(counters["rx_bytes"]), number(counters["tx_bytes"]))
    }

    /// The daemon counts with the configuration it was started with; a plain `ifmeter` reading another
    /// says so in one line and names the one to pass, and says nothing when they are the same.
    @Test func aReaderWithAnotherConfigurationIsToldTheDaemons() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=wifi cellular tunnel wired\n")
        try daemon.runOnce()
        let plain = try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", "/dev/null"])
        #expect(plain.status == 0)
        #expect(plain.standardError == "ifmeter: the daemon counts with \(daemon.configPath) (Watch=wifi cellular tunnel wired), this reads /dev/null: --config \(daemon.configPath) shows what it counts\n")
        let same = try ifmeter(daemon, [])
        #expect(same.status == 0 && same.standardError.isEmpty, "\(same.standardError)")
    }

    /// A daemon that counted a persistent tun0 (2,000 bytes in) and stopped.
    func stoppedAfterCountingTun0() throws -> DaemonHarness {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 1000, persist: true)
        try daemon.waitForLog("tun0: counting")
        #expect(daemon.stop() == 0)
        return daemon
    }

    /// Starts and stops the daemon: the last event it records for `name` is
    /// the one status showed as `pending` while it was stopped.
    func expectNextStartRecords(_ pending: [String: Any], of name: String, _ daemon: DaemonHarness) throws {
        try daemon.start(interval: 60)
        #expect(daemon.stop() == 0)
        let recorded = try json(try ifmeter(daemon, ["events", "--json", "-i", name]))
        let last = try #require((recorded["events"] as? [[String: Any]])?.last)
        for key in ["reason", "loss", "old_ifindex", "new_ifindex", "detail"] {
            #expect("\(pending[key] ?? "nil")" == "\(last[key] ?? "nil")", "\(key)")
        }
    }

    /// The store lags by a commit interval; status adds the kernel's delta of
    /// the same life and so matches the kernel to the byte.
    @Test func liveDeltaMakesStatusEqualTheKernel() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 3600, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.waitForLog("tun0: counting")
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 12, txPackets: 7, size: 1000)
        let document = try json(try ifmeter(daemon, ["status", "--json"]))
        let kernel = try daemon.kernelCounters("tun0")
        let shown = try allTime(document, "tun0")
        #expect(shown.rx == kernel.rxBytes)
        #expect(shown.tx == kernel.txBytes)
        #expect(shown.rx == 12_000)
        // The store knows tun0's life (committed when it began) but none of
        // its traffic yet: the accounting rules, run over the store's state
        // and the kernel now, did the work.
        #expect(try daemon.totalsIfAny("tun0") == .zero)
        let daemonState = try #require(document["daemon"] as? [String: Any])
        #expect(daemonState["running"] as? Bool == true)
        #expect(daemon.stop() == 0)
    }

    /// While the daemon is stopped, status runs the start-up rules over the
    /// store and the kernel: a link recreated meanwhile shows the reset the
    /// daemon will record at its next start, not a total that changed
    /// without a word, and the same totals the daemon then keeps.
    @Test func aLinkRecreatedWhileStoppedShowsItsResetBeforeTheDaemonRecordsIt() throws {
        let daemon = try stoppedAfterCountingTun0()
        try daemon.namespace.exec(["ip", "link", "del", "tun0"])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 1000, persist: true)

        func tun0(_ document: [String: Any]) throws -> [String: Any] {
            let interfaces = try #require(document["interfaces"] as? [[String: Any]])
            return try #require(interfaces.first { $0["name"] as? String == "tun0" })
        }
        let before = try json(try ifmeter(daemon, ["status", "--json"]))
        let pending = try #require(try tun0(before)["last_reset"] as? [String: Any], "no reset shown for the recreated tun0")
        #expect((try #require(before["daemon"] as? [String: Any]))["running"] as? Bool == false)
        let text = try ifmeter(daemon, ["status", "-i", "tun0"])
        #expect(text.standardOutput.contains("last event  "), "\(text.standardOutput)")
        #expect(text.standardOutput.contains("(at the daemon's next start)"), "\(text.standardOutput)")

        try expectNextStartRecords(pending, of: "tun0", daemon)
        let after = try json(try ifmeter(daemon, ["status", "--json"]))
        #expect(try allTime(after, "tun0") == allTime(before, "tun0"))
    }

    /// A watched link created while the daemon was stopped, with no traffic
    /// yet: status lists it at zero with the event its next start records,
    /// instead of leaving it out until it carries a byte.
    @Test func aSilentLinkCreatedWhileStoppedIsListedWithItsEvent() throws {
        let daemon = try stoppedAfterCountingTun0()
        try daemon.namespace.exec(["ip", "tuntap", "add", "dev", "tun1", "mode", "tun"])

        let document = try json(try ifmeter(daemon, ["status", "--json"]))
        let interfaces = try #require(document["interfaces"] as? [[String: Any]])
        let tun1 = try #require(interfaces.first { $0["name"] as? String == "tun1" }, "tun1 not listed: \(interfaces.map { $0["name"] })")
        #expect(try allTime(document, "tun1") == (0, 0))
        let pending = try #require(tun1["last_reset"] as? [String: Any], "no event shown for tun1")
        #expect(pending["reason"] as? String == "appeared-while-stopped")
        let text = try ifmeter(daemon, ["status", "-i", "tun1"])
        #expect(text.standardOutput.contains("(at the daemon's next start) appeared-while-stopped"), "\(text.standardOutput)")
        // The history views know it as the daemon's too.
        #expect(try ifmeter(daemon, ["days", "-i", "tun1"]).status == 0)

        try expectNextStartRecords(pending, of: "tun1", daemon)
    }

    /// A link that was present, unwatched, at the running daemon's last
    /// commit is not listed because the configuration file now watches its
    /// class: until a reload the daemon does not count it.
    @Test func aClassWatchedOnlyByAnUnreloadedConfigurationIsNotListed() throws {
        let configuration = "[Interfaces]\nWatch=tunnel\n"
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: configuration)
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        try daemon.start(interval: 1, commitInterval: 1)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 1000, persist: true)
        try daemon.waitForLog("tun0: counting")
        usleep(2_500_000)   // a store commit after tun0's life began: it records v0 and v1 present
        let text = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try text.replacingOccurrences(of: "Watch=tunnel", with: "Watch=tunnel other").write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        let document = try json(try ifmeter(daemon, ["status", "--json"]))
        let names = try #require(document["interfaces"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        #expect(names == ["tun0"])
        #expect(daemon.stop() == 0)
    }

    /// A user in no group of the daemon's, with no write access anywhere, reads the daemon's view
    /// while it runs and, once it stopped, the view of its last commit, with the kernel's counters
    /// on top; the store itself stays the daemon's alone (0600).
    @Test func anUnprivilegedUserReadsTheView() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 0.5)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 500, persist: true)
        let running = try ifmeter(daemon, ["status", "--json"], asUser: "nobody")
        #expect(try allTime(try json(running), "tun0").rx == 1500)
        #expect(daemon.stop() == 0)
        var info = stat()
        #expect(stat(daemon.stateDirectory + "/ifmeter.db", &info) == 0 && info.st_mode & 0o777 == 0o600)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 500)
        let stopped = try ifmeter(daemon, ["status", "--json"], asUser: "nobody")
        let document = try json(stopped)
        #expect(try allTime(document, "tun0").rx == 2000)  // committed 1500 + live 500
        #expect((document["daemon"] as? [String: Any])?["running"] as? Bool == false)
        let days = try ifmeter(daemon, ["days"], asUser: "nobody")
        #expect(days.status == 0)
        #expect(days.standardOutput.contains("tun0"))
        // Reading is everyone's; changing the store is not.
        let forget = try ifmeter(daemon, ["forget", "tun0", "--force"], asUser: "nobody")
        #expect(forget.status == ExitCode.noPermission.rawValue)
        #expect(forget.standardError == "ifmeter: \(daemon.stateDirectory)/ifmeter.db: permission denied: forget changes the store; run it as root (sudo ifmeter forget) or as the daemon's user\n")
    }

    /// A store this user may not read says so; it is not "no store yet".
    @Test func permissionErrorsAreReportedAsSuch() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        #expect(daemon.stop() == 0)
        #expect(chmod(daemon.stateDirectory, 0o700) == 0)
        let result = try ifmeter(daemon, ["status"], asUser: "nobody")
        #expect(result.status == ExitCode.noPermission.rawValue)
        #expect(result.standardError.hasPrefix("ifmeter: \(daemon.stateDirectory)/ifmeter.db: permission denied"))
        #expect(!result.standardError.contains("no store yet"))
        // forget checks the store the same way before it tries the lock.
        let forget = try ifmeter(daemon, ["forget", "tun0", "--force"], asUser: "nobody")
        #expect(forget.status == ExitCode.noPermission.rawValue)
        #expect(forget.standardError.hasPrefix("ifmeter: \(daemon.stateDirectory)/ifmeter.db: permission denied"))
    }

    @Test func exitCodesForMissingAndCorruptStores() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let missing = try ifmeter(daemon, ["status"])
        #expect(missing.status == ExitCode.noInput.rawValue)
        #expect(missing.standardError == "ifmeter: \(daemon.stateDirectory): no such directory, so no store yet: start the daemon (systemctl start ifmeterd, make run, or ifmeterd --state-dir \(daemon.stateDirectory)), or check the state directory (--state-dir, StateDirectory=)\n")
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        let empty = try ifmeter(daemon, ["status"])
        #expect(empty.status == ExitCode.noInput.rawValue)
        #expect(empty.standardError == "ifmeter: \(daemon.stateDirectory)/ifmeter.db: no store yet: start the daemon (systemctl start ifmeterd, make run, or ifmeterd --state-dir \(daemon.stateDirectory))\n")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: daemon.stateDirectory + "/ifmeter.db"))
        let corrupt = try ifmeter(daemon, ["status"])
        #expect(corrupt.status == ExitCode.dataError.rawValue)
        #expect(corrupt.standardError.hasPrefix("ifmeter: \(daemon.stateDirectory)/ifmeter.db: "))
        #expect(corrupt.standardError.split(separator: "\n").count == 1)
    }

    /// A store with nothing counted yet: the class table says so rather
    /// than show its header alone.
    @Test func classesWithNothingCountedSaySo() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        #expect(daemon.stop() == 0)
        let classes = try ifmeter(daemon, ["classes"])
        #expect(classes.status == 0)
        #expect(classes.standardOutput.contains("\nNo interface counted yet.\n"), "\(classes.standardOutput)")
        #expect(!classes.standardOutput.contains("CLASS"))
    }

    @Test func checkExitCodesFollowTheBudgets() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 10, size: 1000, persist: true)
        #expect(daemon.stop() == 0)
        let noBudget = try ifmeter(daemon, ["check"])
        #expect(noBudget.status == ExitCode.config.rawValue)
        try daemon.writeConfiguration("[Budgets]\ntunnel=5KB\n")
        let exceeded = try ifmeter(daemon, ["check", "--json"])
        #expect(exceeded.status == 2)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(exceeded.standardOutput.utf8)) as? [String: Any])
        #expect(document["schema"] as? String == "ifmeter.check/1")
        #expect(((document["budgets"] as? [[String: Any]])?.first?["state"] as? String) == "exceeded")
        try daemon.writeConfiguration("[Budgets]\ntunnel=1TB\n")
        #expect(try ifmeter(daemon, ["check"]).status == 0)
    }

    /// vnstat --alert's way: the budget on the command line, the verdict in the exit status; a wrong
    /// option or config line is one line on stderr with its sysexits code.
    @Test func checkTakesABudgetOnTheCommandLine() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 10, size: 1000, persist: true)
        #expect(daemon.stop() == 0)
        let rx = try ifmeter(daemon, ["check", "--limit", "5KB", "--per", "day", "--direction", "rx", "-i", "tun0"])
        #expect(rx.status == 2, "\(rx.standardError)")
        #expect(rx.standardOutput.hasPrefix("budgets, day "), "\(rx.standardOutput)")
        #expect(rx.standardOutput.contains("(rx):\n") && rx.standardOutput.contains("EXCEEDED"))
        #expect(try ifmeter(daemon, ["check", "--limit", "5KB", "--per", "day", "--direction", "tx", "-i", "tun0"]).status == 0)
        let quiet = try ifmeter(daemon, ["check", "--quiet", "--limit", "1TB", "-i", "tunnel"])
        #expect(quiet.status == 0 && quiet.standardOutput.isEmpty, "\(quiet.standardOutput)")
        let loud = try ifmeter(daemon, ["check", "--quiet", "--limit", "1KB", "-i", "tunnel", "--per", "hour"])
        #expect(loud.status == 2 && loud.standardOutput.contains("EXCEEDED"))
        let usage = try ifmeter(daemon, ["check", "--per", "day"])
        #expect(usage.status == ExitCode.usage.rawValue)
        #expect(usage.standardError.split(separator: "\n").count == 1, "\(usage.standardError)")
        try daemon.writeConfiguration("[Aliases]\ntun0=vpn\n")
        let aliased = try ifmeter(daemon, ["check", "--limit", "5KB", "--per", "day", "--direction", "rx", "-i", "vpn"])
        #expect(aliased.status == 2 && aliased.standardError.isEmpty, "\(aliased.standardError)")
        try daemon.writeConfiguration("[Budgets]\ntun0=5GB per week\n")
        let config = try ifmeter(daemon, ["check"])
        #expect(config.status == ExitCode.config.rawValue)
        #expect(config.standardError == "ifmeter: \(daemon.configPath):4: tun0=\"5GB per week\": expected per hour, day, month, cycle or year\n")
    }

    /// A budget for an interface the store has never counted (named before
    /// the link first appears, or misspelt) is said once on stderr by check
    /// and status, and its row says so rather than "ok, too early": a cron
    /// check on it would otherwise stay silent for good.
    @Test func aBudgetForAnInterfaceNeverCountedIsSaidSo() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 1000, persist: true)
        try daemon.waitForLog("tun0: counting")
        #expect(daemon.stop() == 0)
        try daemon.writeConfiguration("[Budgets]\ntun0=1TB\nwwan1=5GB\n")
        let warning = "ifmeter: budget wwan1: no interface of that name has been counted yet\n"
        for arguments in [["check"], ["status"], ["status", "-i", "tun0"]] {
            let result = try ifmeter(daemon, arguments)
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
            #expect(result.standardError == warning, "\(arguments)")
            let lines = result.standardOutput.split(separator: "\n")
            let row = try #require(lines.first { $0.hasPrefix("  wwan1 ") }, "\(arguments): \(result.standardOutput)")
            #expect(row.hasSuffix("  not counted yet"), "\(arguments): \(row)")
            #expect(lines.first { $0.hasPrefix("  tun0 ") }?.hasSuffix("  ok, too early") == true, "\(arguments): \(result.standardOutput)")
            #expect(row.count <= 80, "\(arguments): \(row)")
        }
        let checked = try ifmeter(daemon, ["check", "--json"])
        #expect(checked.standardError == warning)
        let budgets = try #require(try json(checked)["budgets"] as? [[String: Any]])
        #expect(budgets.map { $0["interface_counted"] as? Bool } == [true, false], "\(budgets)")
        // Counted once, it is an interface like any other.
        try daemon.namespace.tunTraffic(name: "wwan1", rxPackets: 1, size: 1000, persist: true)
        try daemon.runOnce()
        let later = try ifmeter(daemon, ["check"])
        #expect(later.standardError == "")
        #expect(!later.standardOutput.contains("not counted yet"), "\(later.standardOutput)")
    }

    @Test func everyReadCommandSpeaksVersionedJSON() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 100, persist: true)
        #expect(daemon.stop() == 0)
        let schemas = [
            ["status"]: "ifmeter.status/1", ["hours"]: "ifmeter.history/1", ["days"]: "ifmeter.history/1",
            ["months"]: "ifmeter.history/1", ["years"]: "ifmeter.history/1", ["top"]: "ifmeter.history/1",
            ["classes"]: "ifmeter.classes/1", ["events"]: "ifmeter.events/1", ["interfaces"]: "ifmeter.interfaces/1",
        ]
        for (command, schema) in schemas {
            let document = try json(try ifmeter(daemon, command + ["--json"]))
            #expect(document["schema"] as? String == schema, "\(command)")
            #expect(document["estimate"] as? Bool == true, "\(command)")
            #expect(document["basis"] as? String == Estimate.basis, "\(command)")
        }
        let live = try ifmeter(daemon, ["live", "--json", "--count", "2", "--interval", "0.2"])
        #expect(live.status == 0)
        let lines = live.standardOutput.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(record["schema"] as? String == "ifmeter.live/1")
        }
    }

    /// In a pipe `live` appends a line per interface and refresh, as vnStat -l does, and ends with the
    /// min, average and max of each rate; every line within 80 columns, the caveat once, last.
    @Test func livePipedAppendsLinesAndEndsWithMinAverageMax() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        let live = try ifmeter(daemon, ["live", "--all", "--count", "3", "--interval", "0.1"])
        #expect(live.status == 0, "\(live.standardError)")
        let lines = live.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.first == "ifmeter live, every 0.1 s, 3 times")
        #expect(lines.filter { $0.hasPrefix("v0 ") && $0.contains(" rx ") && $0.contains(" tx ") }.count == 3, "\(live.standardOutput)")
        #expect(!live.standardOutput.contains("\u{1B}"))
        for label in ["  total ", "  max ", "  average ", "  min "] {
            #expect(lines.filter { $0.hasPrefix(label) }.count == 2, "\(label): \(live.standardOutput)")
        }
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines.last.map(String.init) == Estimate.basis + ".")
        #expect(lines.filter { $0.contains("estimate") }.count == 1)
    }

    /// [Display] sets the units and date labels of every screen; the command line wins, JSON keeps bytes and ISO.
    @Test func displayDefaultsComeFromTheConfigurationAndTheCommandLineWins() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Display]\nUnits=si\nRateUnit=bytes\nDayFormat=%d.%m.%Y\n")
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 20, size: 100, persist: true)
        #expect(daemon.stop() == 0)
        let today = TimeText.format(Int64(time(nil)), "%d.%m.%Y")
        let days = try ifmeter(daemon, ["days"])
        #expect(days.status == 0, "\(days.standardError)")
        let row = try #require(days.standardOutput.split(separator: "\n").first { $0.hasPrefix(today) }, "\(days.standardOutput)")
        #expect(row.contains(" kB ") && row.contains(" B/s") && !row.contains("bit/s"), "\(row)")
        let overridden = try ifmeter(daemon, ["days", "--iec", "--bit-rates"]).standardOutput
        let back = try #require(overridden.split(separator: "\n").first { $0.hasPrefix(today) }, "\(overridden)")
        #expect(back.contains(" KiB ") && back.contains("bit/s"), "\(back)")
        let document = try json(try ifmeter(daemon, ["days", "--json"]))
        let rows = try #require(document["rows"] as? [[String: Any]])
        #expect(rows.allSatisfy { ($0["label"] as? String)?.contains("-") == true && $0["average_bytes_per_second"] is Double }, "\(rows)")
        let status = try ifmeter(daemon, ["status"]).standardOutput
        #expect(status.contains(" kB") && !status.contains("KiB"), "\(status)")
    }

    @Test func graphWritesWellFormedSVGAndExportCarriesTheLabel() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 100, persist: true)
        #expect(daemon.stop() == 0)
        let svg = daemon.directory.appendingPathComponent("graph.svg").path
        #expect(try ifmeter(daemon, ["graph", "--svg", svg, "--days", "14"]).status == 0)
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: svg)))
        #expect(parser.parse())
        let csv = try ifmeter(daemon, ["export", "--format", "csv", "--granularity", "hour"])
        #expect(csv.status == 0)
        let rows = csv.standardOutput.split(separator: "\n")
        #expect(rows.first == "interface,class,granularity,start_utc,rx_bytes,tx_bytes,rx_packets,tx_packets,incomplete,basis")
        #expect(rows.dropFirst().allSatisfy { $0.hasSuffix(",estimate: kernel interface counters") })
        let unwritable = try ifmeter(daemon, ["graph", "--svg", "/nonexistent/dir/graph.svg"])
        #expect(unwritable.status == ExitCode.cannotCreate.rawValue)
        #expect(unwritable.standardError.contains("/nonexistent/dir/graph.svg"))
    }

    /// One selection everywhere: -i on every command that lists
    /// interfaces, a+b merged, and a name nothing knows refused with the
    /// known ones instead of an empty screen and exit 0.
    @Test func oneInterfaceSelectionEverywhere() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 1000, persist: true)
        try daemon.namespace.tunTraffic(name: "tun1", rxPackets: 3, size: 1000, persist: true)
        #expect(daemon.stop() == 0)
        for command in [["status"], ["days"], ["hours"], ["events"], ["export"], ["graph", "--svg", daemon.directory.path + "/g.svg"]] {
            let typo = try ifmeter(daemon, command + ["-i", "tun7"])
            #expect(typo.status == ExitCode.usage.rawValue, "\(command)")
            #expect(typo.standardError == "ifmeter: no interface tun7 (known: tun0 tun1) (see 'ifmeter \(command[0]) --help')\n", "\(command)")
            // A link the kernel shows but nothing counts is named as such, not as unknown.
            let loopback = try ifmeter(daemon, command + ["-i", "lo"])
            #expect(loopback.status == ExitCode.usage.rawValue, "\(command)")
            #expect(loopback.standardError ==
                "ifmeter: lo is a link here that ifmeter does not count (loopback, never counted): 'ifmeter interfaces --all' lists every link\n",
                "\(command): \(loopback.standardError)")
        }
        // A link here named with a +, which nothing counts, is named whole.
        try daemon.namespace.exec(["ip", "link", "add", "x+y", "type", "veth", "peer", "name", "x+z"])
        let plus = try ifmeter(daemon, ["status", "-i", "x+y"])
        #expect(plus.status == ExitCode.usage.rawValue)
        #expect(plus.standardError == "ifmeter: x+y is a link here that ifmeter does not count (other by kind veth, not in Watch=wifi cellular tunnel): 'ifmeter interfaces --all' lists every link\n", "\(plus.standardError)")
        let merged = try json(try ifmeter(daemon, ["status", "--json", "-i", "tun0+tun1", "-i", "tun1"]))
        let interfaces = try #require(merged["interfaces"] as? [[String: Any]])
        #expect(interfaces.map { $0["name"] as? String } == ["tun0+tun1", "tun1"])
        #expect(try allTime(merged, "tun0+tun1").rx == 5000)
        #expect(try allTime(merged, "tun1").rx == 3000)
        let days = try json(try ifmeter(daemon, ["days", "--json", "-i", "tun0+tun1"]))
        let rows = try #require(days["rows"] as? [[String: Any]])
        #expect(rows.map { $0["interface"] as? String } == ["tun0+tun1"])
        #expect(number(rows.first?["rx_bytes"]) == 5000)
        let export = try ifmeter(daemon, ["export", "-i", "tun1"])
        #expect(export.status == 0)
        #expect(export.standardOutput.split(separator: "\n").dropFirst().allSatisfy { $0.hasPrefix("tun1,") })
        #expect(export.standardOutput.split(separator: "\n").count == 2)
        // tun1 vanishes while the daemon is stopped: an event for tun1 only.
        try daemon.namespace.exec(["ip", "link", "del", "tun1"])
        try daemon.start(interval: 60)
        #expect(daemon.stop() == 0)
        #expect(try ifmeter(daemon, ["events"]).standardOutput.contains("tun1"))
        let events = try ifmeter(daemon, ["events", "-i", "tun0"])
        #expect(events.status == 0)
        #expect(!events.standardOutput.contains("tun1"))
    }

    @Test func usageErrorsAndHelpPerCommand() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        for command in ["status", "hours", "days", "months", "years", "top", "classes", "events", "live", "export", "graph", "check", "interfaces"] {
            let help = try ifmeter(daemon, [command, "--help"])
            #expect(help.status == 0)
            #expect(help.standardOutput.hasPrefix("Usage: ifmeter \(command)"), "\(command)")
        }
        let cases: [([String], String)] = [
            (["days", "--limit", "zero"], "ifmeter: --limit zero: expected a whole number from 0 to 1000000 (see 'ifmeter days --help')\n"),
            (["days", "--begin", "last-week"], "ifmeter: --begin last-week: expected YYYY-MM-DD, \"YYYY-MM-DD HH:MM\", today or yesterday (see 'ifmeter days --help')\n"),
            (["export", "--format", "xml"], "ifmeter: --format xml: expected csv or jsonl (see 'ifmeter export --help')\n"),
            (["graph"], "ifmeter: graph needs -o FILE (FILE.png for a PNG) or --svg FILE (see 'ifmeter graph --help')\n"),
        ]
        for (arguments, message) in cases {
            let result = try ifmeter(daemon, arguments)
            #expect(result.status == ExitCode.usage.rawValue, "\(arguments)")
            #expect(result.standardError == message)
        }
    }
}
