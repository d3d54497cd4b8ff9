import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The edges of the state machine against the real kernel (ACCOUNTING.md,
/// Identity and rule 5): Watch= changes, renames and deletions while
/// stopped, namespaces, crashes right after a life, fast links. Truth is
/// what was pushed through the devices, to the byte; where the daemon could
/// not know, it must count less and say so with an event, never more.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct IdentityTests {
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

    // MARK: Item 1: a Watch= change never counts the past

    @Test func aWatchChangeByReloadCountsNothingThatPassedBefore() throws {
        let far = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.vethPair("veth-near", to: far, "veth-far")
        try daemon.start(interval: 60)
        try daemon.namespace.sendOverVeth(to: far, count: 40, size: 1000)  // unwatched: "other"
        try daemon.writeConfiguration("[Interfaces]\nWatch=other\n")
        daemon.signal(SIGHUP)
        try daemon.waitForLog("reloaded")
        #expect(try daemon.totalsIfAny("veth-near")?.txBytes ?? 0 == 0)
        try daemon.namespace.sendOverVeth(to: far, count: 3, size: 500)
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("veth-near").txBytes == 3 * 514)
        #expect(try daemon.reasons("veth-near") == ["history-unknown"])
    }

    @Test func aWatchChangeByRestartCountsNothingThatPassedBefore() throws {
        let far = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.vethPair("veth-near", to: far, "veth-far")
        try daemon.runOnce()  // present, not watched
        try daemon.namespace.sendOverVeth(to: far, count: 40, size: 1000)
        try daemon.writeConfiguration("[Interfaces]\nWatch=other\n")
        try daemon.runOnce()
        // Present at the last commit, so not "appeared while stopped".
        #expect(try daemon.totals("veth-near").txBytes == 0)
        #expect(try daemon.reasons("veth-near") == ["history-unknown"])
        try daemon.namespace.sendOverVeth(to: far, count: 2, size: 300)
        try daemon.runOnce()
        #expect(try daemon.totals("veth-near").txBytes == 2 * 314)
    }

    @Test func narrowedThenWidenedAcrossRestartsCountsOnlyTheWatchedTime() throws {
        let far = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=other\n")
        try daemon.namespace.vethPair("veth-near", to: far, "veth-far")
        try daemon.runOnce()
        try daemon.namespace.sendOverVeth(to: far, count: 5, size: 1000)  // watched
        try daemon.writeConfiguration("")
        try daemon.runOnce()  // counts up to now, then no longer watched
        try daemon.namespace.sendOverVeth(to: far, count: 30, size: 1000)  // unwatched
        try daemon.writeConfiguration("[Interfaces]\nWatch=other\n")
        try daemon.runOnce()
        try daemon.namespace.sendOverVeth(to: far, count: 2, size: 1000)  // watched again
        try daemon.runOnce()
        #expect(try daemon.totals("veth-near").txBytes == 7 * 1014)
        #expect(try daemon.reasons("veth-near") == ["history-unknown", "unwatched", "history-unknown"])
        #expect(try daemon.totals("veth-near").txBytes <= daemon.kernelCounters("veth-near").txBytes)
    }

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

    // MARK: Item 2: delete + rename while stopped

    @Test func deleteAndRenameWhileStoppedNeverCountsTwice() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", subnet: 0, rxPackets: 1, size: 100, persist: true)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 1, size: 100, persist: true)
        try daemon.runOnce()  // first sight: baselines
        try daemon.namespace.tunTraffic(name: "tun0", subnet: 0, rxPackets: 2, size: 1000)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 3, size: 1000)
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 5, size: 1000)  // after the last save
        try daemon.namespace.exec(["sh", "-c", "ip link del tun0 && ip link set tun1 down && ip link set tun1 name tun0"])
        try daemon.runOnce()
        // tun0: 2000 before it was deleted. tun1: 3000; its last 5000 cannot be
        // told from a replacement's, so they are recorded as lost, not counted.
        #expect(try daemon.totals("tun0").rxBytes == 2000)
        #expect(try daemon.totals("tun1").rxBytes == 3000)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "removed-while-stopped"])
        #expect(try daemon.reasons("tun1") == ["history-unknown", "renamed-or-replaced"])
        #expect(try daemon.store().events().last?.loss == .unknown)
        try daemon.namespace.tunTraffic(name: "tun0", subnet: 1, rxPackets: 1, size: 700)
        try daemon.runOnce()
        #expect(try daemon.totals("tun0").rxBytes == 2700)
    }

    // MARK: Item 3: the namespace is part of the identity

    @Test func aRecreatedNamespaceIsNotTheOldLifeContinued() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 300, txPackets: 300, size: 1000)
        try daemon.runOnce()
        let oldIndex = try daemon.namespace.inside { try NetlinkLinkSource().links() }.first { $0.name == "tun0" }?.ifindex
        // The container's namespace is recreated: same boot, same store, a
        // tunnel with the same name and, in a fresh namespace, the same ifindex.
        daemon.namespace = try NetworkNamespace()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 100, txPackets: 200, size: 1000, persist: true)
        let newIndex = try daemon.namespace.inside { try NetlinkLinkSource().links() }.first { $0.name == "tun0" }?.ifindex
        #expect(oldIndex == newIndex)
        try daemon.runOnce()
        // The new namespace's traffic before the daemon saw it is not counted
        // as the old life's (no undercount, no negative reset either).
        #expect(try daemon.totals("tun0").rxBytes == 300_000)
        #expect(try daemon.totals("tun0").txBytes == 300_000)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "namespace-changed", "history-unknown"])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 100, size: 1000)
        try daemon.runOnce()
        #expect(try daemon.totals("tun0").rxBytes == 400_000)
    }

    @Test func aDeviceMovedInWhileStoppedOnAStoredIfindexIsNotCounted() throws {
        let elsewhere = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 200, size: 1000)
        try daemon.runOnce()
        let index = try #require(try daemon.namespace.inside { try NetlinkLinkSource().links() }.first { $0.name == "tun0" }?.ifindex)
        // Stopped: tun0 is deleted; a device with 260,000 bytes of another
        // namespace's traffic moves in and takes tun0's free ifindex.
        try daemon.namespace.exec(["ip", "link", "del", "tun0"])
        try elsewhere.exec(["ip", "tuntap", "add", "dev", "vpn9", "mode", "tun"])
        try elsewhere.tunTraffic(name: "vpn9", rxPackets: 260, size: 1000)
        try elsewhere.exec(["ip", "link", "set", "vpn9", "netns", daemon.namespace.name])
        let moved = try daemon.namespace.inside { try NetlinkLinkSource().links() }.first { $0.name == "vpn9" }
        #expect(moved?.ifindex == index)
        try daemon.runOnce()
        #expect(try daemon.totals("tun0").rxBytes == 200_000)
        #expect(try daemon.reasons("tun0") == ["history-unknown", "renamed-or-replaced"])
        #expect(try daemon.totalsIfAny("vpn9")?.rxBytes ?? 0 == 0)
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

    // MARK: Item 4: a crash right after a life is never silent

    @Test func aLifeEndedJustBeforeAKillIsCountedOrRecorded() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 300, txPackets: 200, size: 1000, persist: true)
        try daemon.waitForLog("tun0: counting")
        try daemon.namespace.exec(["ip", "link", "del", "tun0"])
        try daemon.waitForLog("tun0: removed")
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        // The end was made durable when it was read, not at the next
        // sample: in the journal, which readers apply...
        #expect(try daemon.totals("tun0").rxBytes == 300_000)
        #expect(try daemon.totals("tun0").txBytes == 200_000)
        #expect(try daemon.storeFile().interfaces().first { $0.name == "tun0" } == nil)

        // The same, killed before the deletion could be read: the begin was
        // committed, so the restart knows the life and says what is missing.
        try daemon.start(interval: 60, commitInterval: 3600)
        // ... and the next start writes into the store itself.
        try daemon.waitForLog("journaled commit")
        #expect(try daemon.storeFile().interfaces().first { $0.name == "tun0" }?.totals.rxBytes == 300_000)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 50, size: 1000, persist: true)
        try daemon.waitForLog("tun1: counting")
        daemon.signal(SIGSTOP)
        try daemon.namespace.exec(["ip", "link", "del", "tun1"])
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        try daemon.runOnce()
        #expect(try daemon.reasons("tun1") == ["removed-while-stopped"])
        #expect(try daemon.store().events().last { $0.name == "tun1" }?.loss == .unknown)
        #expect(try daemon.totalsIfAny("tun1")?.rxBytes ?? 0 <= 50_000)
    }

    /// The event socket opens before the start's dump, and the store is
    /// read in between (a killed run's journal applied, here held up by
    /// another writer): a link created while the daemon was stopped and
    /// deleted in that window is in no dump, and its last messages, with
    /// its traffic, are the first the daemon reads of it. That traffic is
    /// this namespace's and is not counted: the event must say loss
    /// unknown, not a move from another namespace with nothing lost.
    @Test func aLinkGoneBeforeTheStartDumpIsNoMoveWithNothingLost() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 3600)
        let journaled = daemon.journalSize
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 1, size: 100)
        try daemon.waitForJournal(toChangeFrom: journaled)
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)  // the journal is applied at the next start
        try daemon.namespace.tunTraffic(name: "tun5", subnet: 5, rxPackets: 3, size: 100, persist: true)

        // A writer holds the store: the start waits for it after opening its sockets.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = ["sqlite3", daemon.stateDirectory + "/" + CounterStore.fileName]
        let commands = Pipe()
        let answers = Pipe()
        writer.standardInput = commands
        writer.standardOutput = answers
        try writer.run()
        commands.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\nSELECT 'locked';\n".utf8))
        #expect(String(decoding: answers.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("locked"))
        let starting = Process()
        starting.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        starting.arguments = ["ip", "netns", "exec", daemon.namespace.name, TestEnvironment.binary("ifmeterd"),
                              "--config", daemon.configPath, "--state-dir", daemon.stateDirectory, "--once"]
        starting.standardError = FileHandle.nullDevice
        try starting.run()
        // Its event socket and its dump socket are open: it is waiting for
        // the store. Counted once the process is ifmeterd: before its exec,
        // env and `ip netns exec` hold netlink sockets of their own.
        let process = "/proc/\(starting.processIdentifier)"
        var waiting = false
        for _ in 0..<1000 {
            let program = (try? FileManager.default.destinationOfSymbolicLink(atPath: process + "/exe")) ?? ""
            let sockets = ((try? FileManager.default.contentsOfDirectory(atPath: process + "/fd")) ?? []).filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: process + "/fd/" + $0))?.hasPrefix("socket:") ?? false
            }
            waiting = program.hasSuffix("/ifmeterd") && sockets.count >= 2
            if waiting { break }
            usleep(10_000)
        }
        #expect(waiting, "ifmeterd never opened its sockets")
        try daemon.namespace.exec(["ip", "link", "del", "tun5"])
        commands.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
        try commands.fileHandleForWriting.close()
        writer.waitUntilExit()
        starting.waitUntilExit()
        #expect(starting.terminationStatus == 0)

        let events = try daemon.store().events().filter { $0.name == "tun5" }
        #expect(events.map(\.reason.rawValue) == ["history-unknown", "removed"])
        #expect(events.first?.loss == .unknown)
        #expect(try daemon.totalsIfAny("tun5")?.rxBytes ?? 0 <= 300)
    }

    @Test func aRenameWhileRunningSurvivesAKill() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "tun6", rxPackets: 2, size: 1000, persist: true)
        daemon.signal(SIGHUP)  // a sample: 2000 counted under tun6
        try daemon.waitForLog("reloaded")
        let journaled = daemon.journalSize
        try daemon.namespace.exec(["sh", "-c", "ip link set tun6 down && ip link set tun6 name tun7"])
        try daemon.waitForJournal(toChangeFrom: journaled)  // the rename, read and journaled
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        try daemon.namespace.tunTraffic(name: "tun7", rxPackets: 1, size: 700)
        try daemon.runOnce()
        // Seen while running, so no rename-or-replacement doubt at restart.
        #expect(try daemon.totals("tun6").rxBytes == 2000)
        #expect(try daemon.totals("tun7").rxBytes == 700)
        #expect(try daemon.store().events().isEmpty)
    }

    // MARK: Item 5: since boot agrees with all time

    @Test func sinceBootAgreesWithAllTimeThroughRenamesAndMoves() throws {
        let elsewhere = try NetworkNamespace()
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 0)
        try daemon.namespace.tunTraffic(name: "r0", rxPackets: 10, size: 1000, persist: true)
        for (from, to) in [("r0", "r1"), ("r1", "r2")] {
            try daemon.namespace.exec(["sh", "-c", "ip link set \(from) down && ip link set \(from) name \(to)"])
            try daemon.namespace.tunTraffic(name: to, rxPackets: 10, size: 1000)
        }
        try daemon.namespace.tunTraffic(name: "m0", subnet: 1, rxPackets: 20, size: 1000, persist: true)
        try daemon.namespace.exec(["ip", "link", "set", "m0", "netns", elsewhere.name])
        try elsewhere.tunTraffic(name: "m0", subnet: 1, rxPackets: 40, size: 1000)
        try elsewhere.exec(["ip", "link", "set", "m0", "netns", daemon.namespace.name])
        try daemon.namespace.tunTraffic(name: "m0", subnet: 1, rxPackets: 10, size: 1000)
        #expect(daemon.stop() == 0)
        let document = try status(daemon)
        for (name, rx) in [("r0", 10_000), ("r1", 10_000), ("r2", 10_000), ("m0", 30_000)] {
            #expect(figure(document, name, "all_time") == UInt64(rx), "\(name)")
            #expect(figure(document, name, "since_boot") == UInt64(rx), "\(name)")
        }
    }

    // MARK: Item 7: the CLI in another namespace

    @Test func theCLIInAnotherNamespaceMixesNoForeignLinks() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 3600, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.waitForLog("tun0: counting")
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 1000)
        let home = try status(daemon)
        #expect(figure(home, "tun0", "all_time") == 2000)
        #expect(home["foreign_namespace"] as? Bool == false)
        let daemonNamespace = daemon.namespace
        daemon.namespace = try NetworkNamespace()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3000, size: 1000, persist: true)
        let away = try status(daemon)
        #expect(away["foreign_namespace"] as? Bool == true)
        #expect(figure(away, "tun0", "all_time") == 0)  // the store's; nothing foreign
        // Not "gone": from here nobody can tell.
        let state = (away["interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "tun0" }?["state"] as? String
        #expect(state == "unknown")
        daemon.namespace = daemonNamespace
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 2000)
    }

    // MARK: Item 8: fast links lose nothing

    @Test func aSixtyFourBitCounterIsNeverCappedWhateverMaxRateSays() throws {
        // MaxRate= applies to 32-bit sources only; 30 MB in a 0.2 s sample
        // is over 1 Gbit/s, a thousand times the cap.
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "MaxRate=1M\n")
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.start(interval: 0.2, commitInterval: 0)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 30_000, size: 1000)
        usleep(500_000)
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 30_000_000)
        #expect(try !daemon.reasons("tun0").contains("implausible"))
    }
}
