import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The real daemon through the clock faults a real machine has: a bad RTC boots in 2031 and NTP
/// steps it back; a Raspberry Pi boots in 2020 and NTP steps it forward. Counting goes on, dating
/// waits for the clock, and the history counted before the boot is neither misdated nor pruned.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason), .serialized)
struct ClockStepTests {
    static let fiveYears = 5 * 365 * 86_400

    /// A first run at the true time: tun0's 1500 bytes in today's rows.
    private func daemonWithHistory() throws -> (DaemonHarness, stepFile: String) {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 500)
        #expect(daemon.stop() == 0)
        let stepFile = daemon.directory.appendingPathComponent("wall-step").path
        return (daemon, stepFile)
    }

    private func expectEveryRowDatedByTheTrueClock(_ daemon: DaemonHarness, rx: [String: UInt64]) throws {
        let store = try daemon.store()
        let now = Int64(time(nil))
        for granularity in Granularity.allCases {
            let buckets = try store.buckets(granularity)
            // The test's minutes, whatever bucket boundary they cross.
            let earliest = TimeBuckets.start(of: granularity, containing: now - 900)
            #expect(buckets.allSatisfy { $0.start >= earliest && $0.start <= now },
                    "\(granularity): \(buckets.map { TimeText.moment($0.start) })")
            for (name, bytes) in rx { #expect(try store.bucketTotals(granularity)[name]?.rxBytes == bytes, "\(granularity) \(name)") }
        }
    }

    @Test func aClockBootedInTheFutureIsDatedAnewWhenNTPStepsItBack() throws {
        let (daemon, stepFile) = try daemonWithHistory()
        let timesync = daemon.directory.appendingPathComponent("timesync").path
        try FileManager.default.createDirectory(atPath: timesync, withIntermediateDirectories: true)
        try String(Self.fiveYears).write(toFile: stepFile, atomically: true, encoding: .utf8)
        try daemon.start(interval: 60, environment: ["IFMETER_TEST_TIMESYNC_DIR": timesync, "IFMETER_TEST_WALL_STEP_FILE": stepFile])
        #expect(daemon.log.contains("the clock is not synchronised yet: counting, but dating traffic waits for it"))
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 2, size: 500)
        // timesyncd sets the clock and says so.
        try "0".write(toFile: stepFile, atomically: true, encoding: .utf8)
        #expect(FileManager.default.createFile(atPath: timesync + "/synchronized", contents: nil))
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded")
        #expect(daemon.log.contains("the wall clock stepped back by"))
        #expect(daemon.log.contains("the clock is synchronised"))
        #expect(daemon.stop() == 0)
        try expectEveryRowDatedByTheTrueClock(daemon, rx: ["tun0": 1500, "tun1": 1000])
    }

    @Test func aClockBootedInThePastIsDatedAnewWhenNTPStepsItForward() throws {
        let (daemon, stepFile) = try daemonWithHistory()
        try String(-6 * 365 * 86_400).write(toFile: stepFile, atomically: true, encoding: .utf8)
        // No time service here: a clock before the store's last commit is wrong all the same.
        try daemon.start(interval: 60, environment: ["IFMETER_TEST_TIMESYNC_DIR": "/nonexistent", "IFMETER_TEST_WALL_STEP_FILE": stepFile])
        #expect(daemon.log.contains("the clock is before the store's last commit"))
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 2, size: 500)
        try "0".write(toFile: stepFile, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded")
        #expect(daemon.log.contains("the wall clock stepped forward by"))
        #expect(daemon.stop() == 0)
        try expectEveryRowDatedByTheTrueClock(daemon, rx: ["tun0": 1500, "tun1": 1000])
    }

    /// A 2031 clock that nothing corrected in time committed rows there; once the clock is right
    /// they move to now, and nothing of the history before was pruned by the clock that said 2031.
    @Test func rowsAWrongClockCommittedInTheFutureComeBackToNow() throws {
        let (daemon, stepFile) = try daemonWithHistory()
        let timesync = daemon.directory.appendingPathComponent("timesync").path
        try FileManager.default.createDirectory(atPath: timesync, withIntermediateDirectories: true)
        try daemon.writeConfiguration("TimeSyncWaitSec=0.1\n")
        try String(Self.fiveYears).write(toFile: stepFile, atomically: true, encoding: .utf8)
        let environment = ["IFMETER_TEST_TIMESYNC_DIR": timesync, "IFMETER_TEST_WALL_STEP_FILE": stepFile]
        try daemon.start(interval: 60, environment: environment)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 2, size: 500)
        #expect(daemon.stop() == 0)  // a stop commits, dated 2031: the clock was never corrected
        #expect(try daemon.store().buckets(.day).contains { $0.start > Int64(time(nil)) })
        try "0".write(toFile: stepFile, atomically: true, encoding: .utf8)
        #expect(FileManager.default.createFile(atPath: timesync + "/synchronized", contents: nil))
        try daemon.start(interval: 60, environment: environment)
        #expect(daemon.stop() == 0)
        #expect(daemon.log.contains("by a wrong clock were moved into the current ones"))
        try expectEveryRowDatedByTheTrueClock(daemon, rx: ["tun0": 1500, "tun1": 1000])
    }
}
