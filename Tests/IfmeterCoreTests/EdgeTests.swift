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
}
