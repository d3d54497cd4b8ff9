import Foundation
import Glibc
import Testing
@testable import IfmeterCore

/// Sequences at the edges of the accounting state machine (ACCOUNTING.md),
/// against the real kernel: links crossing the watched set, renames onto
/// names with a past, namespace moves, kills between a life change and the
/// store commit. Truth is what was pushed through the devices, to the byte.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct EdgeTests {
    /// Rule 5 tells "appeared while stopped" (counted from zero) from
    /// "present but not watched" (its past not counted) by the links the
    /// store holds as present. An unwatched link that appears while the
    /// daemon runs must be held so when read, not at the next store commit:
    /// after a kill -9 and a restart that widens Watch=, a device moved in
    /// with another namespace's traffic was counted from zero.
    @Test func anUnwatchedLinkMovedInBeforeAKillIsNotCountedWhenWatchWidens() throws {
        let elsewhere = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=wifi\n")
        try daemon.start(interval: 60, commitInterval: 3600)
        try elsewhere.exec(["ip", "tuntap", "add", "dev", "vpn9", "mode", "tun"])
        try elsewhere.tunTraffic(name: "vpn9", rxPackets: 260, size: 1000)  // another namespace's
        let journaled = daemon.journalSize
        try elsewhere.exec(["ip", "link", "set", "vpn9", "netns", daemon.namespace.name])
        try daemon.waitForJournal(toChangeFrom: journaled)
        try daemon.namespace.tunTraffic(name: "vpn9", rxPackets: 3, size: 1000)  // here, not watched
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        try daemon.writeConfiguration("")  // Watch= now counts tunnels
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "vpn9", rxPackets: 2, size: 1000)
        try daemon.runOnce()
        #expect(try daemon.totals("vpn9").rxBytes == 2000)
        #expect(try daemon.reasons("vpn9") == ["history-unknown"])
    }

    /// A link that moves away is closed with nothing lost (rule 7). Back
    /// while the daemon is stopped, it keeps its ifindex and its counters:
    /// the traffic already counted here and what it carried elsewhere. The
    /// kernel hands a new device an ifindex its namespace used before only on
    /// a wrap or when asked to, so a link absent at the last save on the
    /// ifindex of an earlier life here moved in: its counters are not ours.
    @Test func aLinkMovedAwayWhileRunningAndBackWhileStoppedIsNotCountedTwice() throws {
        let elsewhere = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 10, size: 1000, persist: true)
        try daemon.waitForLog("tun0: counting")
        let journaled = daemon.journalSize
        try daemon.namespace.exec(["ip", "link", "set", "tun0", "netns", elsewhere.name])
        try daemon.waitForJournal(toChangeFrom: journaled)
        #expect(daemon.stop() == 0)
        try elsewhere.tunTraffic(name: "tun0", rxPackets: 5, size: 1000)
        try elsewhere.exec(["ip", "link", "set", "tun0", "netns", daemon.namespace.name])
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 1000)
        try daemon.runOnce()
        #expect(try daemon.totals("tun0").rxBytes == 12_000)
        #expect(try daemon.reasons("tun0") == ["moved-in"])
        #expect(try daemon.store().events().last?.loss == .unknown)
        let document = try status(daemon)
        #expect(figure(document, "tun0", "all_time") == 12_000)
        #expect(figure(document, "tun0", "since_boot") == 12_000)
    }

    private func status(_ daemon: DaemonHarness, _ arguments: [String] = []) throws -> [String: Any] {
        let result = try daemon.namespace.run(
            [TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "status", "--json"] + arguments)
        #expect(result.status == 0, "\(result.standardError)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    private func figure(_ document: [String: Any], _ name: String, _ key: String) -> UInt64? {
        let interfaces = document["interfaces"] as? [[String: Any]] ?? []
        let counters = interfaces.first { $0["name"] as? String == name }?[key] as? [String: Any]
        return number(counters?["rx_bytes"])
    }
}
