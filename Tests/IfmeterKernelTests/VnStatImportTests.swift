import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// `ifmeter import vnstat` on a database a real vnstatd wrote (Debian's vnstat, in its own namespace,
/// counting a tun carrying exact traffic), with older rows added in vnStat's schema: every view shows
/// vnStat's rows to the byte, as `vnstat --json` reports them.
@Suite(.enabled(if: TestEnvironment.isRoot && FileManager.default.fileExists(atPath: "/usr/sbin/vnstatd"), "needs root and Debian's vnstat"))
struct VnStatImportTests {
    let directory: URL
    var database: String { directory.appendingPathComponent("vnstat/vnstat.db").path }
    var vnstatConfig: String { directory.appendingPathComponent("vnstat.conf").path }
    var stateDirectory: String { directory.appendingPathComponent("state").path }

    init() throws {
        directory = try TestEnvironment.temporaryDirectory("vnstat")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("vnstat"), withIntermediateDirectories: true)
        try """
            DatabaseDir "\(directory.appendingPathComponent("vnstat").path)"
            UseLogging 0
            UpdateInterval 2
            PollInterval 2
            SaveInterval 1
            TimeSyncWait 0

            """.write(toFile: vnstatConfig, atomically: true, encoding: .utf8)
    }

    /// vnstatd counts `tun7` in a namespace of its own, then saves at SIGTERM.
    private func databaseWrittenByVnstatd() throws {
        let namespace = try NetworkNamespace()
        try namespace.tunTraffic(name: "tun7", persist: true)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // The test process blocks SIGTERM in its threads and children inherit the mask: vnstatd would
        // never see the signal it saves on.
        daemon.arguments = ["ip", "netns", "exec", namespace.name, "/usr/bin/python3", "-c",
                            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                            "/usr/sbin/vnstatd", "--config", vnstatConfig, "--nodaemon"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        // Its first poll takes the counters as a baseline; what passes after it is counted.
        try waitFor { (try? mustRun("/usr/bin/sqlite3", [database, "SELECT count(*) FROM interface WHERE name = 'tun7'"])) == "1\n" }
        Thread.sleep(forTimeInterval: 3)
        try namespace.tunTraffic(name: "tun7", rxPackets: 30, txPackets: 20, size: 1000, persist: true)
        Thread.sleep(forTimeInterval: 5)
        daemon.terminate()
        daemon.waitUntilExit()
        // History older than this vnstatd saw, as years of vnStat leave it.
        try mustRun("/usr/bin/sqlite3", [database, """
            UPDATE interface SET rxtotal = rxtotal + 7000000, txtotal = txtotal + 3000000 WHERE name = 'tun7';
            INSERT INTO day(interface, date, rx, tx) SELECT id, '2024-02-29', 4000000, 1000000 FROM interface WHERE name = 'tun7';
            INSERT INTO month(interface, date, rx, tx) SELECT id, '2024-02-01', 4000000, 1000000 FROM interface WHERE name = 'tun7';
            INSERT INTO year(interface, date, rx, tx) SELECT id, '2024-01-01', 7000000, 3000000 FROM interface WHERE name = 'tun7';
            INSERT INTO top(interface, date, rx, tx) SELECT id, '2023-07-14', 9000000, 9000000 FROM interface WHERE name = 'tun7';
            INSERT INTO top(interface, date, rx, tx) SELECT id, '2024-02-29', 4000000, 1000000 FROM interface WHERE name = 'tun7';
            """])
    }

    private func waitFor(_ condition: () throws -> Bool) throws {
        for _ in 0..<100 where try !condition() { Thread.sleep(forTimeInterval: 0.1) }
        try #require(try condition())
    }

    private func ifmeter(_ arguments: [String]) throws -> ProcessResult {
        try runProcess(TestEnvironment.binary("ifmeter"), ["--state-dir", stateDirectory] + arguments, environment: ["TZ": "UTC"])
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// vnStat's rows of one list, by the label ifmeter gives the same period.
    private func vnstatRows(_ traffic: [String: Any], _ list: String) -> [String: [UInt64]] {
        var rows: [String: [UInt64]] = [:]
        for row in traffic[list] as? [[String: Any]] ?? [] {
            let date = row["date"] as? [String: Any] ?? [:], time = row["time"] as? [String: Any]
            var label = String(format: "%04d", date["year"] as? Int ?? 0)
            if let month = date["month"] as? Int { label += String(format: "-%02d", month) }
            if let day = date["day"] as? Int { label += String(format: "-%02d", day) }
            if let time { label += String(format: " %02d:%02d", time["hour"] as? Int ?? 0, time["minute"] as? Int ?? 0) }
            rows[label] = [(row["rx"] as? NSNumber)?.uint64Value ?? 0, (row["tx"] as? NSNumber)?.uint64Value ?? 0]
        }
        return rows
    }

    @Test func everyViewShowsVnStatsRowsToTheByte() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try databaseWrittenByVnstatd()
        let first = try ifmeter(["import", "vnstat", database, "--vnstat-config", vnstatConfig])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("tun7: "), "\(first.standardOutput)")

        let report = try runProcess("/usr/bin/vnstat", ["--config", vnstatConfig, "--json"], environment: ["TZ": "UTC"])
        let interfaces = try json(report.standardOutput)["interfaces"] as? [[String: Any]] ?? []
        let traffic = try #require(interfaces.first { $0["name"] as? String == "tun7" }?["traffic"] as? [String: Any])
        // The traffic this vnstatd counted is in its rows: the test is not comparing empty lists.
        #expect(vnstatRows(traffic, "fiveminute").values.contains { $0[0] >= 30_000 && $0[1] >= 20_000 })
        for (list, view) in [("fiveminute", "fiveminutes"), ("hour", "hours"), ("day", "days"), ("month", "months"), ("year", "years"), ("top", "top")] {
            let shown = try ifmeter([view, "-i", "tun7", "--json", "--limit", "1000", "--begin", "2000-01-01"])
            #expect(shown.status == 0, "\(view): \(shown.standardError)")
            var rows: [String: [UInt64]] = [:]
            for row in try json(shown.standardOutput)["rows"] as? [[String: Any]] ?? [] {
                #expect(row["imported"] as? Bool == true, "\(view) \(row)")
                rows[row["label"] as? String ?? ""] = [(row["rx_bytes"] as? NSNumber)?.uint64Value ?? 0, (row["tx_bytes"] as? NSNumber)?.uint64Value ?? 0]
            }
            #expect(rows == vnstatRows(traffic, list), "\(view)")
        }
        let total = traffic["total"] as? [String: Any] ?? [:]
        let status = try json(try ifmeter(["status", "-i", "tun7", "--json"]).standardOutput)
        let allTime = ((status["interfaces"] as? [[String: Any]])?.first?["all_time"] as? [String: Any]) ?? [:]
        #expect((allTime["rx_bytes"] as? NSNumber)?.uint64Value == (total["rx"] as? NSNumber)?.uint64Value)
        #expect((allTime["tx_bytes"] as? NSNumber)?.uint64Value == (total["tx"] as? NSNumber)?.uint64Value)

        // Again: the same store, byte for byte in every table.
        func dump() throws -> String { try mustRun("/usr/bin/sqlite3", [stateDirectory + "/ifmeter.db", "SELECT * FROM imported_bucket; SELECT name, class, seam, rx_bytes, tx_bytes FROM imported_interface"]) }
        let before = try dump()
        #expect(try ifmeter(["import", "vnstat", database, "--vnstat-config", vnstatConfig]).status == 0)
        #expect(try dump() == before)
    }

    @Test(arguments: ["not sqlite", "not vnstat", "newer", "damaged date"])
    func aFileThatIsNotAVnStatDatabaseIsRefusedAndNothingIsWritten(_ kind: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try databaseWrittenByVnstatd()
        switch kind {
        case "not sqlite": try "hello\n".write(toFile: database, atomically: true, encoding: .utf8)
        case "not vnstat":
            try FileManager.default.removeItem(atPath: database)
            try mustRun("/usr/bin/sqlite3", [database, "CREATE TABLE t (x)"])
        case "newer": try mustRun("/usr/bin/sqlite3", [database, "UPDATE info SET value = '2' WHERE name = 'dbversion'"])
        default: try mustRun("/usr/bin/sqlite3", [database, "UPDATE day SET date = '2024-13-45' WHERE id = (SELECT min(id) FROM day)"])
        }
        let refused = try ifmeter(["import", "vnstat", database, "--vnstat-config", vnstatConfig])
        #expect(refused.status == 65, "\(kind): \(refused.standardError)")
        #expect(refused.standardError.hasPrefix("ifmeter: " + database + ": ") && refused.standardError.hasSuffix("nothing imported\n"), "\(refused.standardError)")
        #expect(refused.standardError.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: stateDirectory + "/ifmeter.db"))
    }
}
