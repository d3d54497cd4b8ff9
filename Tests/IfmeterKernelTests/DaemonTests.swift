import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// ifmeterd against the real kernel: tun devices in a private namespace,
/// exact traffic, and the totals the store holds afterwards, to the byte.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct DaemonTests {
    @Test func fiftyShortLivesAreCountedToTheByte() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        // Each life is created, carries traffic and is gone within
        // milliseconds: far shorter than the sampling interval.
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, txPackets: 2, size: 200, lives: 50)
        #expect(daemon.stop() == 0)
        let totals = try daemon.totals("tun0")
        #expect(totals.rxBytes == 50 * 3 * 200)
        #expect(totals.txBytes == 50 * 2 * 200)
        #expect(totals.rxPackets == 150)
        #expect(totals.txPackets == 100)
        #expect(try daemon.reasons("tun0") == Array(repeating: "removed", count: 50))
        // Every granularity of bucket adds up to the same totals.
        for granularity in Granularity.allCases {
            #expect(try daemon.store().bucketTotals(granularity)["tun0"]?.rxBytes == 30_000)
        }
    }

    @Test func recreatedWithinOneIntervalHasNoPhantomTraffic() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 10, txPackets: 10, size: 1000, persist: true)
        try daemon.namespace.exec(["ip", "link", "del", "tun0"])
        // Same name, new ifindex, smaller counters: a naive tool sees the
        // counter go down and invents ~2^64 or 4 GiB of traffic.
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, txPackets: 2, size: 100, persist: true)
        #expect(daemon.stop() == 0)
        let totals = try daemon.totals("tun0")
        #expect(totals.rxBytes == 10_000 + 100)
        #expect(totals.txBytes == 10_000 + 200)
        #expect(try daemon.reasons("tun0") == ["removed"])
        #expect(try daemon.kernelCounters("tun0").rxBytes == 100)
    }

    @Test func trafficJustBeforeDeletionIsCounted() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.start(interval: 60)
        // Traffic, then deletion, with no sample in between: only the
        // RTM_DELLINK message knows these bytes.
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 4, txPackets: 5, size: 500)
        try daemon.namespace.exec(["ip", "tuntap", "del", "dev", "tun0", "mode", "tun"])
        #expect(daemon.stop() == 0)
        let totals = try daemon.totals("tun0")
        #expect(totals.rxBytes == 2000)
        #expect(totals.txBytes == 2500)
    }

    /// Deleting an up device first sends a NEWLINK (IFF_UP cleared) with
    /// the counters; a down device sends only RTM_DELLINK. Drops counted on
    /// a down tun are therefore known from the DELLINK message alone.
    @Test func theDeleteMessageAloneCarriesTheFinalCounters() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.exec(["ip", "tuntap", "add", "dev", "tun0", "mode", "tun"])
        try daemon.start(interval: 60)
        try daemon.namespace.exec([TestEnvironment.binary("ifmeter-testnet"), "--name", "tun0", "--down-drops", "7"])
        try daemon.namespace.exec(["ip", "tuntap", "del", "dev", "tun0", "mode", "tun"])
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxDropped == 7)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "removed"])
    }

    @Test func aStopLongerThanSixMinutesIsCountedOnce() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        try daemon.runOnce()  // first sight: baseline
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 6, txPackets: 7, size: 300)
        // Restart with both clocks 400 s on (vnStat drops gaps over 360 s).
        try daemon.runOnce(clockOffset: 400)
        try daemon.runOnce(clockOffset: 800)
        let totals = try daemon.totals("tun0")
        #expect(totals.rxBytes == 1800)
        #expect(totals.txBytes == 2100)
        #expect(try daemon.reasons("tun0") == ["history-unknown"])
    }

    @Test func interfaceRecreatedWhileStoppedIsCountedFromZero() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.runOnce()
        try daemon.namespace.exec(["ip", "link", "del", "tun0"])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, txPackets: 1, size: 100, persist: true)
        try daemon.runOnce()
        let totals = try daemon.totals("tun0")
        #expect(totals.rxBytes == 300)
        #expect(totals.txBytes == 100)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "recreated"])
        #expect(try daemon.store().events().last?.loss == .unknown)
    }

    @Test func sighupRightAfterTrafficLosesNothing() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, txPackets: 3, size: 400, persist: true)
        // A reload that also changes the configuration.
        try daemon.writeConfiguration("MaxRate=1G\n")
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded")
        // Counted and committed before the new configuration applied.
        #expect(try daemon.totals("tun0").rxBytes == 800)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 400)
        #expect(daemon.stop() == 0)
        // Its last line says the final sample was committed, and where.
        #expect(daemon.log.hasSuffix("ifmeterd: stopped; a final sample was committed to \(daemon.stateDirectory)/ifmeter.db\n"), "\(daemon.log)")
        #expect(try daemon.totals("tun0").rxBytes == 1200)
        #expect(try daemon.totals("tun0").txBytes == 1200)
    }

    /// What a reload cannot apply is said, and the daemon runs on: a bad
    /// file keeps the running configuration; a setting read only at start
    /// waits for a restart.
    static let reloadsSaid: [(configuration: String, ending: String, said: String)] = [
        ("Bogus=1\n", "reload failed", "ifmeter.conf:3: unknown key \"Bogus\" in [Daemon]"),
    ]

    @Test(arguments: reloadsSaid)
    func aReloadSaysWhatItCannotApply(_ testCase: (configuration: String, ending: String, said: String)) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.writeConfiguration(testCase.configuration)
        daemon.signal(SIGHUP)
        try daemon.waitForLog(testCase.ending)
        #expect(daemon.log.contains(testCase.said))
        #expect(daemon.stop() == 0)
    }

    @Test func sigkillThenRestartLosesNothingAndCountsNothingTwice() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 0.1, commitInterval: 0)  // commit at every sample
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 5, txPackets: 5, size: 100, persist: true)
        try daemon.waitForLog("watched interface")
        usleep(300_000)  // several commits happen
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, txPackets: 0, size: 100)
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        try daemon.runOnce()
        try daemon.runOnce()
        let totals = try daemon.totals("tun0")
        #expect(totals.rxBytes == 700)
        #expect(totals.txBytes == 500)
        #expect(try daemon.store().integrityCheck() == "ok")
    }

    @Test func sigkillBeforeAnyCommitIsRecoveredFromTheKernel() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.start(interval: 0.1, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 9, txPackets: 4, size: 100)
        usleep(300_000)  // sampled, but not committed
        daemon.stop(with: SIGKILL)
        #expect(try daemon.totals("tun0").rxBytes == 0)
        try daemon.runOnce()
        #expect(try daemon.totals("tun0").rxBytes == 900)
        #expect(try daemon.totals("tun0").txBytes == 400)
    }

    @Test func wallClockJumpsMoveBytesBetweenBucketsWithoutLosingAny() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 100)
        try daemon.runOnce(clockOffset: 86_400)  // a day ahead
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 4, size: 100)
        try daemon.runOnce(clockOffset: -86_400)  // a day behind
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 5, size: 100)
        try daemon.runOnce()
        let store = try daemon.store()
        #expect(try daemon.totals("tun0").rxBytes == 1200)
        for granularity in Granularity.allCases {
            #expect(try store.bucketTotals(granularity)["tun0"]?.rxBytes == 1200, "\(granularity)")
        }
    }

    /// A reboot after a clean stop is no unknown loss: a link down at the stop lost nothing, one up
    /// then was unwatched at most from the stop to the boot; after a kill it stays unknown.
    @Test func aRebootAfterACleanStopBoundsWhatWasNotSeen() throws {
        let far = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=tunnel other\n")
        try daemon.namespace.vethPair("veth-near", to: far, "veth-far")  // up, with its carrier
        // A tun no process holds has no carrier: down, whatever IFF_UP says.
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 1, size: 100, persist: true)
        try daemon.namespace.awaitLinkWatcher("tun1", operstate: "down")
        try daemon.start(interval: 60)
        #expect(daemon.stop() == 0)
        try daemon.setBootID("test-boot-2")
        // The new boot began at this start: the machine's uptime is taken off its boot clock.
        let uptime = try #require(Double(try String(contentsOfFile: "/proc/uptime", encoding: .utf8).split(separator: " ")[0]))
        try daemon.start(interval: 60, environment: ["IFMETER_TEST_BOOTTIME_OFFSET": String(-uptime)])
        let events = try daemon.store().events().filter { $0.reason == .reboot }
        let up = try #require(events.first { $0.name == "veth-near" })
        guard case .unseen(let seconds) = up.loss else { Issue.record("veth-near: \(up.loss)"); return }
        #expect(seconds < 60 && up.detail.contains("not seen"), "\(seconds) \(up.detail)")
        #expect(events.first { $0.name == "tun1" }?.loss == ResetEvent.Loss.none)
        // A kill leaves no clean stop: what passed since the last commit is unknown.
        #expect(daemon.stop(with: SIGKILL) != 0)
        try daemon.setBootID("test-boot-3")
        try daemon.runOnce()
        #expect(try daemon.store().events().filter { $0.reason == .reboot }.suffix(2).allSatisfy { $0.loss == .unknown })
    }

    @Test func aRebootCountsFromZeroAndIsRecorded() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 100, persist: true)
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 100)
        try daemon.setBootID("test-boot-2")
        try daemon.runOnce()
        // After a reboot the kernel's counters started at boot: all of them count.
        #expect(try daemon.totals("tun0").rxBytes == 300)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "reboot"])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 100)
        try daemon.runOnce()
        // The life of the boot before was closed once: no second reboot event.
        #expect(try daemon.totals("tun0").rxBytes == 400)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "reboot"])
    }

    /// veth clears its peer before the messages sent at deletion, so they
    /// read rx 0. The guard keeps rx where the last sample left it instead
    /// of judging a reset; tx since that sample still counts.
    @Test func vethFinalCountersNeverGoBackwards() throws {
        let far = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=other\n")
        try daemon.namespace.vethPair("veth-near", to: far, "veth-far")
        try daemon.start(interval: 60)
        try daemon.namespace.sendOverVeth(to: far, count: 5, size: 500)
        try far.sendOverVethBack(to: daemon.namespace, count: 3, size: 200)
        daemon.signal(SIGHUP)  // a sample (and commit) between traffic and deletion
        try daemon.waitForLog("reload")
        try daemon.namespace.sendOverVeth(to: far, count: 2, size: 100)
        try daemon.namespace.exec(["ip", "link", "del", "veth-near"])
        #expect(daemon.stop() == 0)
        let totals = try daemon.totals("veth-near")
        #expect(totals.txBytes == 5 * 514 + 2 * 114)  // Ethernet framing adds 14 bytes
        #expect(totals.rxBytes == 3 * 214)
        #expect(try daemon.reasons("veth-near") == ["history-unknown", "removed"])
    }

    /// The rx a veth received after the last sample is in no message the
    /// kernel sends at its deletion: it is lost, and the event must say so
    /// rather than "its final counters were counted" (docs/ACCOUNTING.md, rule 7).
    @Test func aDeletedVethsLostRxTailIsRecordedAsALoss() throws {
        let far = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=other\n")
        try daemon.namespace.vethPair("veth-near", to: far, "veth-far")
        try daemon.start(interval: 60)
        try far.sendOverVethBack(to: daemon.namespace, count: 3, size: 200)
        daemon.signal(SIGHUP)  // a sample
        try daemon.waitForLog("reloaded")
        try far.sendOverVethBack(to: daemon.namespace, count: 4, size: 300)  // after it
        #expect(try daemon.kernelCounters("veth-near").rxBytes == 3 * 214 + 4 * 314)
        try daemon.namespace.exec(["ip", "link", "del", "veth-near"])
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("veth-near").rxBytes == 3 * 214)  // what could be known
        let removed = try #require(try daemon.store().events().last { $0.name == "veth-near" && $0.reason == .removed })
        #expect(removed.loss == .unknown)
    }

    @Test func aRenameKeepsTheLifeAndCountsUnderEachName() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 100, persist: true)
        try daemon.namespace.exec(["sh", "-c", "ip link set tun0 down && ip link set tun0 name tun5"])
        try daemon.namespace.tunTraffic(name: "tun5", rxPackets: 2, size: 100)
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 300)
        #expect(try daemon.totals("tun5").rxBytes == 200)
        #expect(try daemon.store().events().isEmpty)  // a rename is no reset
        #expect(daemon.log.contains("tun0: renamed tun5 (ifindex "), "\(daemon.log)")  // but says why tun0 stopped
    }

    /// A machine with no Wi-Fi, cellular or tunnel link (a newcomer's wired
    /// box): the start line says why nothing is counted and where to look.
    @Test func noWatchedLinkAtStartIsExplained() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        #expect(daemon.log.contains("0 watched interfaces (no link here is of a class in Watch=wifi cellular tunnel yet; 'ifmeter interfaces --all' shows each link's class);"), "\(daemon.log)")
        #expect(daemon.stop() == 0)
    }

    /// Without `--config` the daemon reads /etc/ifmeter/ifmeter.conf where
    /// one stands, at start and at every reload: one created after the start
    /// (as `ifmeter status` tells a newcomer under `make run`) applies at
    /// the next SIGHUP, and the start line says what was read.
    @Test func aDefaultConfigurationCreatedAfterTheStartAppliesAtReload() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 100, persist: true)
        try daemon.startOnTheDefaultConfiguration()
        #expect(daemon.log.contains("configuration defaults (no /etc/ifmeter/ifmeter.conf)"), "\(daemon.log)")
        #expect(daemon.log.contains("1 watched interface (tun0)"), "\(daemon.log)")
        try daemon.writeDefaultConfiguration("[Interfaces]\nWatch=wifi cellular\n")
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded /etc/ifmeter/ifmeter.conf")
        #expect(daemon.stop() == 0)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "unwatched"])
    }

    /// A configuration that appeared after the start is the daemon's own
    /// file at the reload that reads it: a `MetricsFile=` naming it is
    /// refused, and the file stays as written (it had been replaced by the
    /// metrics, and every later reload and `ifmeter` failed on it).
    @Test func aDefaultConfigurationCreatedAfterTheStartIsNeverAnOutput() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.startOnTheDefaultConfiguration(interval: 1)
        let text = "[Daemon]\nMetricsFile=/etc/ifmeter/./ifmeter.conf\n"
        try daemon.writeDefaultConfiguration(text)
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reload: keeping MetricsFile=")
        try daemon.waitForLog("the same file as /etc/ifmeter/ifmeter.conf")
        usleep(1_500_000)  // a sample or more: the metrics file would have been written by now
        #expect(try daemon.readDefaultConfiguration() == text)
        #expect(daemon.stop() == 0)
    }

    /// Renamed to a name an override ignores: counted up to the rename,
    /// closed under the name it was counted under; the ignored name gets
    /// no row, event or metrics series.
    @Test func aRenameIntoAnIgnoredNameEndsTheLifeUnderItsOldName() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Classes]\nzz3=ignore\n")
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun3", rxPackets: 3, size: 100, persist: true)
        try daemon.namespace.exec(["sh", "-c", "ip link set tun3 down && ip link set tun3 name zz3"])
        try daemon.namespace.tunTraffic(name: "zz3", rxPackets: 2, size: 100, persist: true)
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun3").rxBytes == 300)
        #expect(try daemon.totalsIfAny("zz3") == nil)
        #expect(try daemon.store().events().map(\.name) == ["tun3"])
        #expect(try daemon.reasons("tun3") == ["unwatched"])
    }

    @Test func aMoveToAnotherNamespaceClosesTheLifeWithoutLoss() throws {
        let elsewhere = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 4, txPackets: 1, size: 100, persist: true)
        try daemon.namespace.exec(["ip", "link", "set", "tun0", "netns", elsewhere.name])
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 400)
        #expect(try daemon.totals("tun0").txBytes == 100)
        #expect(try daemon.store().events().isEmpty)  // moved, not removed
    }

    /// Rule 9: with the daemon stopped (SIGSTOP) and a tiny event buffer,
    /// churn overruns the socket; on resuming the daemon re-dumps, records
    /// the life that vanished unseen, and stays exact for the one that lived on.
    @Test func anEventOverrunIsReconciledByARedump() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "EventBufferBytes=4K\n")
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, persist: true)
        try daemon.start(interval: 60)
        daemon.signal(SIGSTOP)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 5, txPackets: 6, size: 100)
        try daemon.namespace.tunTraffic(name: "tun9", subnet: 9, rxPackets: 1, size: 100, lives: 40)
        try daemon.namespace.exec(["ip", "link", "del", "tun1"])
        daemon.signal(SIGCONT)
        try daemon.waitForLog("link events were lost")
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 500)
        #expect(try daemon.totals("tun0").txBytes == 600)
        #expect(try daemon.reasons("tun1") == ["history-unknown", "events-lost"])
        // Lives that came and went unseen cannot be counted, and nothing is invented.
        #expect(try (daemon.totalsIfAny("tun9")?.rxBytes ?? 0) <= 40 * 100)
    }

    @Test func onlyWatchedClassesAreCounted() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Classes]\ntun1=ignore\n")
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 100, persist: true)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 1, size: 100, persist: true)
        #expect(daemon.stop() == 0)
        let names = try daemon.store().interfaces().map(\.name)
        #expect(names == ["tun0"])  // lo is "other", tun1 is ignored
    }

    @Test func aSecondDaemonOnTheSameStoreIsRefused() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        let second = try runProcess("/usr/bin/env", [
            "ip", "netns", "exec", daemon.namespace.name, TestEnvironment.binary("ifmeterd"),
            "--config", daemon.configPath, "--state-dir", daemon.stateDirectory, "--once",
        ])
        #expect(second.status == ExitCode.unavailable.rawValue)
        #expect(second.standardError == "ifmeterd: \(daemon.stateDirectory): another ifmeterd is using this state directory\n")
        #expect(daemon.stop() == 0)
    }
}
