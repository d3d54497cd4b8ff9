import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct RetirementDaemonTests {
    static let later = 70.0 * 86_400

    private func ifmeter(_ daemon: DaemonHarness, _ arguments: [String]) throws -> ProcessResult {
        try daemon.namespace.run(["env", "IFMETER_TEST_CLOCK_OFFSET=\(Self.later)", TestEnvironment.binary("ifmeter"),
                                  "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
    }

    /// The tunnel class as `ifmeter classes --json` shows it, its member list aside.
    private func tunnelClass(_ daemon: DaemonHarness) throws -> NSDictionary {
        let result = try ifmeter(daemon, ["classes", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let classes = try #require(document["classes"] as? [[String: Any]])
        var tunnel = try #require(classes.first { $0["class"] as? String == "tunnel" })
        tunnel["interfaces"] = nil
        return tunnel as NSDictionary
    }

    @Test func theDaemonRetiresGoneTunnelsAndEveryCommandShowsTheirClassUnchanged() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let metrics = daemon.directory.appendingPathComponent("ifmeter.prom").path
        try daemon.writeConfiguration("MetricsFile=\(metrics)\n")
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 500, lives: 2)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 2, size: 500, lives: 1)
        #expect(daemon.stop() == 0)
        let before = try tunnelClass(daemon)

        // The first commit 70 days on retires both; the same daemon then
        // counts tun0 again, under a row of its own.
        try daemon.start(interval: 60, environment: ["IFMETER_TEST_CLOCK_OFFSET": String(Self.later)])
        #expect(try daemon.store().interfaces().map(\.name) == ["retired tunnel"])
        #expect(try tunnelClass(daemon) == before)
        let retired = try #require(try daemon.store().interface(named: "retired tunnel"))
        #expect(retired.totals.rxBytes == 4000)
        #expect(retired.signal == "2 names retired")

        let summary = try ifmeter(daemon, ["status"])
        #expect(summary.standardOutput.contains("1 retired total not shown (--all shows them).\n"), "\(summary.standardOutput)")
        let detail = try ifmeter(daemon, ["status", "-i", "retired tunnel"])
        #expect(detail.status == 0, "\(detail.standardError)")
        #expect(detail.standardOutput.contains("\nretired tunnel  tunnel (2 names retired), retired\n"), "\(detail.standardOutput)")
        let json = try ifmeter(daemon, ["status", "--all", "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let row = try #require((document["interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "retired tunnel" })
        #expect(row["state"] as? String == "retired")
        let months = try ifmeter(daemon, ["months", "-i", "retired tunnel", "--json"])
        #expect(months.status == 0 && months.standardOutput.contains("\"retired tunnel\""), "\(months.standardError)")

        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 500)
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 500)
        #expect(try daemon.totals("retired tunnel").rxBytes == 4000)
        // The metrics file shows the links of the last week, never an aggregate.
        let published = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(published.contains("device=\"tun0\""))
        #expect(!published.contains("retired"))

        let forgotten = try ifmeter(daemon, ["forget", "retired tunnel", "--force"])
        #expect(forgotten.status == 0, "\(forgotten.standardError)")
        #expect(try daemon.store().interfaces().map(\.name) == ["tun0"])
        try daemon.runOnce(clockOffset: Self.later + 60)
        #expect(try daemon.store().integrityCheck() == "ok")
    }
}
