import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// vnStat's --add, --delete, --rename and --remove with the daemon running: `ifmeter` hands the edit
/// to the daemon, which applies it between two commits and counts on; nothing it counted is lost.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct StoreEditTests {
    @Test func renameMergeAndForgetWhileTheDaemonCounts() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 500)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 2, size: 500)
        try daemon.namespace.tunTraffic(name: "tun3", subnet: 3, rxPackets: 1, size: 300, persist: true)

        let renamed = try daemon.ifmeter(["rename", "tun0", "wg0"])
        #expect(renamed.status == 0, "\(renamed.standardError)")
        #expect(renamed.standardOutput.hasPrefix("tun0: its history is now wg0's"))
        let merged = try daemon.ifmeter(["merge", "tun1", "wg0"])
        #expect(merged.status == 0, "\(merged.standardError)")
        let present = try daemon.ifmeter(["rename", "tun3", "wg3"])
        #expect(present.status == ExitCode.usage.rawValue)
        #expect(present.standardError.hasPrefix("ifmeter: tun3 is a link counted now"))
        let taken = try daemon.ifmeter(["rename", "wg0", "tun3"])
        #expect(taken.standardError == "ifmeter: tun3 has records of its own; merge wg0 tun3 adds wg0's to them\n")
        let unforced = try daemon.ifmeter(["forget", "tun3"])
        #expect(unforced.status == ExitCode.usage.rawValue)

        // The daemon counts on: tun3's next traffic, and the wg0 it now holds, survive its stop.
        try daemon.namespace.exec(["ip", "link", "del", "tun3"])
        try daemon.namespace.tunTraffic(name: "tun3", subnet: 3, rxPackets: 2, size: 300)
        let status = try daemon.ifmeter(["status", "--all", "--json"])
        #expect(status.standardOutput.contains("\"wg0\""))
        #expect(!status.standardOutput.contains("\"tun0\"") && !status.standardOutput.contains("\"tun1\""))
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("wg0").rxBytes == 3 * 500 + 2 * 500)
        #expect(try daemon.store().bucketTotals(.day)["wg0"]?.rxBytes == 3 * 500 + 2 * 500)
        #expect(try daemon.totalsIfAny("tun0") == nil && daemon.totalsIfAny("tun1") == nil)
        #expect(try daemon.reasons("wg0").filter { $0 == "removed" }.count == 2)
        #expect(try daemon.totals("tun3").rxBytes == 3 * 300)

        try daemon.start(interval: 60)
        let forgotten = try daemon.ifmeter(["forget", "wg0", "--force"])
        #expect(forgotten.status == 0, "\(forgotten.standardError)")
        #expect(daemon.stop() == 0)
        #expect(try daemon.totalsIfAny("wg0") == nil)
        #expect(try daemon.store().integrityCheck() == "ok")
    }

    /// `watch` counts a link Watch= leaves out from the daemon's next sample; `unwatch` stops it there.
    @Test func watchAndUnwatchAnInterfaceByName() throws {
        let far = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.vethPair("veth-near", to: far, "veth-far")
        try daemon.start(interval: 60)
        try daemon.namespace.sendOverVeth(to: far, count: 4, size: 400)  // not watched: not counted
        let watched = try daemon.ifmeter(["watch", "veth-near"])
        #expect(watched.status == 0, "\(watched.standardError)")
        let listed = try daemon.ifmeter(["interfaces"], inNamespace: true)
        #expect(listed.standardOutput.contains("veth-near"), "\(listed.standardOutput)")
        try daemon.namespace.sendOverVeth(to: far, count: 5, size: 500)
        let unwatched = try daemon.ifmeter(["unwatch", "veth-near"])
        #expect(unwatched.status == 0, "\(unwatched.standardError)")
        try daemon.namespace.sendOverVeth(to: far, count: 2, size: 100)  // after it: not counted
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("veth-near").txBytes == 5 * 514)  // Ethernet framing adds 14 bytes
        #expect(try daemon.store().chosenWatches() == ["veth-near": false])

        // With no daemon, the choice goes straight to the store; the next start counts from its first sample.
        let again = try daemon.ifmeter(["watch", "veth-near"])
        #expect(again.status == 0, "\(again.standardError)")
        let live = try daemon.ifmeter(["live", "--count", "1", "--interval", "0.1"], inNamespace: true)
        #expect(live.standardOutput.contains("veth-near"), "\(live.standardOutput) \(live.standardError)")
        try daemon.start(interval: 60)
        try daemon.namespace.sendOverVeth(to: far, count: 3, size: 300)
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("veth-near").txBytes == 5 * 514 + 3 * 314)
    }

    /// `kill -HUP $(cat ifmeterd.pid)` reloads the daemon: the file holds its pid alone (the start
    /// time that tells readers it is this process is in ifmeterd.live).
    @Test func thePidFileHoldsThePidAlone() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        let pidFile = daemon.stateDirectory + "/ifmeterd.pid"
        let text = try String(contentsOfFile: pidFile, encoding: .utf8)
        #expect(text.hasSuffix("\n") && Int32(text.dropLast()) != nil, "\(text)")
        let reloaded = try runProcess("/bin/sh", ["-c", "kill -HUP $(cat \(pidFile))"])
        #expect(reloaded.status == 0, "\(reloaded.standardError)")
        try daemon.waitForLog("reload")
        let status = try daemon.ifmeter(["status", "--json"])
        #expect(status.standardOutput.contains("\"running\": true"), "\(status.standardOutput)")
        #expect(daemon.stop() == 0)
    }
}
