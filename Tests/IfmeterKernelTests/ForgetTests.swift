import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// `ifmeter forget`, vnStat's --remove: every row of one interface goes, in
/// one transaction, applied here with no daemon running (StoreEditTests: with one).
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct ForgetTests {
    @Test func forgetRemovesEveryRowOfOneInterfaceWithTheDaemonStopped() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 500, lives: 2)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 2, size: 500, lives: 1)
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 3000)

        let unknown = try daemon.ifmeter(["forget", "tun9", "--force"])
        #expect(unknown.status == ExitCode.usage.rawValue)
        #expect(unknown.standardError.hasPrefix("ifmeter: no interface tun9 (known: tun0 tun1)"))

        let removed = try daemon.ifmeter(["forget", "tun0", "--force"])
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(try daemon.totalsIfAny("tun0") == nil)
        #expect(try daemon.reasons("tun0").isEmpty)
        #expect(try daemon.store().bucketTotals(.day)["tun0"] == nil)
        // The other interface is untouched, and the daemon starts again.
        #expect(try daemon.totals("tun1").rxBytes == 1000)
        try daemon.runOnce()
        #expect(try daemon.store().integrityCheck() == "ok")
    }

    /// ifmeter(1)'s way with the package: the daemon runs as its own user and
    /// root runs `sudo ifmeter forget`. What forget leaves in the state
    /// directory (the lock, the pid file) stays the store owner's, so the
    /// daemon starts again on it.
    @Test func forgetRunByRootLeavesTheStateDirectoryToTheStoresOwner() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 500)
        #expect(daemon.stop() == 0)
        let nobody = try #require(getpwnam("nobody")).pointee
        _ = try mustRun("/bin/chown", ["-R", "nobody:\(nobody.pw_gid)", daemon.stateDirectory])
        let removed = try daemon.ifmeter(["forget", "tun0", "--force"])
        #expect(removed.status == 0, "\(removed.standardError)")
        for file in try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory) {
            var info = stat()
            #expect(lstat(daemon.stateDirectory + "/" + file, &info) == 0)
            #expect(info.st_uid == nobody.pw_uid, "\(file) belongs to uid \(info.st_uid)")
        }
        let restarted = try daemon.namespace.run(["runuser", "-u", "nobody", "--", TestEnvironment.binary("ifmeterd"),
                                                  "--config", daemon.configPath, "--state-dir", daemon.stateDirectory, "--once"])
        #expect(restarted.status == 0, "\(restarted.standardError)")
    }

    /// The kernel takes a name that looks like an option; `forget -- NAME`
    /// must still reach it.
    @Test func anInterfaceNamedLikeAnOptionCanBeForgotten() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        _ = try daemon.namespace.exec(["ip", "tuntap", "add", "dev", "-x", "mode", "tun"])
        _ = try daemon.namespace.exec(["ip", "tuntap", "add", "dev", "tun1", "mode", "tun"])
        try daemon.runOnce()
        #expect(try daemon.totalsIfAny("-x") != nil)
        _ = try daemon.namespace.exec(["ip", "link", "delete", "dev", "-x"])
        try daemon.runOnce()
        let removed = try daemon.ifmeter(["forget", "--force", "--", "-x"])
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(try daemon.totalsIfAny("-x") == nil)
        #expect(try daemon.totalsIfAny("tun1") != nil)
        try daemon.runOnce()
    }

    /// A daemon killed with a tunnel life only in its journal: `forget`
    /// applies the journal first, so the next start cannot bring the
    /// forgotten interface back.
    @Test func forgetAppliesAJournalLeftByAKillFirst() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 3600, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "vpn0", rxPackets: 3, size: 500)
        try daemon.waitForLog("vpn0: removed")
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        #expect(try daemon.storeFile().interfaces().first { $0.name == "vpn0" } == nil)
        let removed = try daemon.ifmeter(["forget", "vpn0", "--force"])
        #expect(removed.status == 0, "\(removed.standardError)")
        try daemon.runOnce()
        #expect(try daemon.totalsIfAny("vpn0") == nil)
        #expect(try daemon.reasons("vpn0").isEmpty)
    }

    /// tun6 with 2000 bytes, renamed tun7 while counted, then 700 more;
    /// the daemon stopped.
    private func renamedWhileCounted() throws -> DaemonHarness {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun6", rxPackets: 2, size: 1000, persist: true)
        try daemon.namespace.exec(["sh", "-c", "ip link set tun6 down && ip link set tun6 name tun7"])
        try daemon.namespace.tunTraffic(name: "tun7", rxPackets: 1, size: 700, persist: true)
        #expect(daemon.stop() == 0)
        return daemon
    }

    private func countedOn(_ name: String, _ daemon: DaemonHarness) -> String {
        "\(name): its records were removed from \(daemon.stateDirectory)/ifmeter.db; it was present at the last commit, so ifmeterd counts it on from zero\n"
    }

    /// A link renamed while counted keeps one life, begun under its old
    /// name: forgetting the old name removes that name's rows, not the life
    /// the link is still counted by (whose baseline carries what passes
    /// while the daemon is stopped). Forgetting the new name leaves the old
    /// name's history alone.
    @Test func forgettingARenamedLinksOldNameKeepsItsLife() throws {
        let daemon = try renamedWhileCounted()
        #expect(try daemon.totals("tun6").rxBytes == 2000)
        #expect(try daemon.totals("tun7").rxBytes == 700)

        let removed = try daemon.ifmeter(["forget", "tun6", "--force"])
        #expect(removed.standardOutput == "tun6: removed from \(daemon.stateDirectory)/ifmeter.db\n", "\(removed.standardError)")
        #expect(try daemon.totalsIfAny("tun6") == nil)
        try daemon.namespace.tunTraffic(name: "tun7", rxPackets: 1, size: 500, persist: true)  // while stopped
        try daemon.runOnce()
        #expect(try daemon.totals("tun7").rxBytes == 1200)
        #expect(try daemon.store().events().isEmpty)
        #expect(try daemon.totalsIfAny("tun6") == nil)

        let present = try daemon.ifmeter(["forget", "tun7", "--force"])
        #expect(present.standardOutput == countedOn("tun7", daemon))
        #expect(try daemon.totals("tun7") == .zero)
        try daemon.namespace.tunTraffic(name: "tun7", rxPackets: 1, size: 300, persist: true)
        try daemon.runOnce()
        #expect(try daemon.totals("tun7").rxBytes == 300)  // counted on from the forget
        #expect(try daemon.store().events().isEmpty)
        #expect(try daemon.store().integrityCheck() == "ok")
    }

    /// The new name of a renamed link is present too, though its life's row
    /// is the old name's: `forget` says it is counted on, and it is.
    @Test func forgettingARenamedLinksNewNameSaysItIsCountedOn() throws {
        let daemon = try renamedWhileCounted()

        let forgotten = try daemon.ifmeter(["forget", "tun7", "--force"])
        #expect(forgotten.standardOutput == countedOn("tun7", daemon), "\(forgotten.standardError)")
        try daemon.namespace.tunTraffic(name: "tun7", rxPackets: 1, size: 500, persist: true)  // while stopped
        try daemon.runOnce()
        #expect(try daemon.totals("tun7").rxBytes == 500)
        #expect(try daemon.totals("tun6").rxBytes == 2000)
        #expect(try daemon.store().integrityCheck() == "ok")
    }

    /// Applying a killed daemon's journal folds the five-minute rows not
    /// folded yet: `forget` run under another TZ cuts hours in the zone the
    /// daemon counted in (Asia/Kolkata's begin at :30 UTC), and leaves it
    /// recorded.
    @Test func forgetRunInAnotherZoneFoldsInTheDaemonsZone() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        // 2026-06-15 03:00 UTC: Asia/Kolkata hours begin at :30 UTC.
        let base: Int64 = 1_781_492_400
        func offset(_ moment: Int64) -> Double { Double(moment) - Date().timeIntervalSince1970 }
        let kolkata = ["TZ": "Asia/Kolkata"]
        try daemon.runOnce(clockOffset: offset(base + 40 * 60), environment: kolkata)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 1000, persist: true)
        // 03:50 UTC: a five-minute row in the Kolkata hour 03:30, not folded yet.
        try daemon.runOnce(clockOffset: offset(base + 50 * 60), environment: kolkata)
        // 04:20 UTC, still the Kolkata hour 03:30: a tunnel life journaled, then a kill.
        try daemon.start(interval: 3600, commitInterval: 3600, environment: kolkata.merging(
            ["IFMETER_TEST_CLOCK_OFFSET": String(offset(base + 80 * 60))]) { _, new in new })
        try daemon.namespace.tunTraffic(name: "vpn0", rxPackets: 3, size: 500)
        try daemon.waitForLog("vpn0: removed")
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)

        let forget = try runProcess("/usr/bin/env", ["TZ=UTC", TestEnvironment.binary("ifmeter"),
            "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "forget", "vpn0", "--force"])
        #expect(forget.status == 0, "\(forget.standardError)")

        // Every hour row the store holds begins at :30 UTC (a Kolkata hour), and
        // tun0's 1000 bytes of 03:50 UTC are in the hour that began at 03:30 UTC.
        let store = try daemon.storeFile()
        let hours = try store.database.query("""
            SELECT b.start, b.rx_bytes FROM bucket b JOIN interface i ON i.id = b.interface_id
            WHERE b.granularity = 'hour' AND i.name = 'tun0'
            """) { ($0.integer(0), $0.integer(1)) }
        #expect(hours.allSatisfy { ($0.0 - 1800) % 3600 == 0 }, "\(hours.map { ($0.0 - base, $0.1) })")
        #expect(try store.meta("timezone") == "Asia/Kolkata")
    }
}
