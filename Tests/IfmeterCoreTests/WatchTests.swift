import Foundation
import Glibc
import Testing
@testable import IfmeterCore

/// What is counted and what `status` says when nothing is, with the real
/// daemon and kernel in a private namespace.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct WatchTests {
    func ifmeter(_ daemon: DaemonHarness, _ arguments: [String]) throws -> ProcessResult {
        try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
    }

    /// Loopback traffic never crosses a link: Watch=other counts a veth pair
    /// but never lo, however much passes over it.
    @Test func loopbackIsNeverCountedEvenWithWatchOther() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=other\n")
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        try daemon.runOnce()
        try daemon.namespace.inside {
            let receiver = try UDPSocket(bindTo: "127.0.0.1", port: 9999)
            let sender = try UDPSocket(bindTo: nil, port: 0)
            for _ in 0..<20 { try sender.send(bytes: 1000, to: "127.0.0.1", port: 9999) }
            _ = receiver
        }
        #expect(try daemon.kernelCounters("lo").rxBytes >= 20_000)
        try daemon.runOnce()
        let names = try daemon.store().interfaces().map(\.name)
        #expect(names.sorted() == ["v0", "v1"])
        let listed = try ifmeter(daemon, ["interfaces", "--all"])
        #expect(listed.standardOutput.contains("\nlo         ignored  loopback, never counted"), "\(listed.standardOutput)")
    }

    /// With nothing counted, status lists what is there and the Watch= line
    /// that would count it.
    @Test func statusNamesTheWatchLineThatWouldCount() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        try daemon.runOnce()
        let status = try ifmeter(daemon, ["status"])
        #expect(status.status == 0)
        #expect(status.standardOutput.contains("""

            No interface counted yet.
            Watch=wifi cellular tunnel counts none of the interfaces here:
              v0  other  kind veth
              v1  other  kind veth
            To count v0 v1, set in \(daemon.configPath) and reload the daemon (systemctl reload ifmeterd, or SIGHUP to ifmeterd):
              [Interfaces]
              Watch=wifi cellular tunnel other

            """), "\(status.standardOutput)")
        // The line it offers does count them.
        try daemon.writeConfiguration("[Interfaces]\nWatch=wifi cellular tunnel other\n")
        try daemon.runOnce()
        #expect(try daemon.store().interfaces().map(\.name).sorted() == ["v0", "v1"])
    }

    /// `[Aliases]` names an interface on the screens; the store and -i keep
    /// the kernel's name.
    @Test func aliasesAreShownBesideTheName() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Aliases]\ntun0=office vpn\n")
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 4, size: 500, persist: true)
        try daemon.runOnce()
        let summary = try ifmeter(daemon, ["status"])
        #expect(summary.standardOutput.contains("\ntun0 (office vpn)  tunnel"), "\(summary.standardOutput)")
        let detail = try ifmeter(daemon, ["status", "-i", "tun0"])
        // up or down: a persistent tun with no writer loses its carrier a
        // moment after the writer exits (linkwatch), so either may show.
        #expect(detail.standardOutput.contains("\ntun0 (office vpn)  tunnel (kind tun), "), "\(detail.standardOutput)")
        let json = try ifmeter(daemon, ["status", "--json"])
        #expect(json.standardOutput.contains("\"name\": \"tun0\",\n      \"alias\": \"office vpn\""), "\(json.standardOutput)")
        let graph = try ifmeter(daemon, ["graph", "--svg", "-", "-i", "tun0"])
        #expect(graph.standardOutput.contains(">tun0 (office vpn)</text>"))
        #expect(try daemon.store().interfaces().map(\.name) == ["tun0"])
    }

    /// `live --all` shows the links Watch= leaves out, never loopback.
    @Test func liveAllShowsUnwatchedLinks() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        let all = try ifmeter(daemon, ["live", "--all", "--count", "1", "--interval", "0.1"])
        #expect(all.status == 0)
        #expect(all.standardOutput.contains("\nv0 ") && all.standardOutput.contains("\nv1 "), "\(all.standardOutput)")
        #expect(!all.standardOutput.contains("\nlo "))
        let watched = try ifmeter(daemon, ["live", "-i", "v0", "--count", "1", "--interval", "0.1"])
        #expect(watched.status == 64)
        let chosen = try ifmeter(daemon, ["live", "--all", "-i", "v0", "--count", "1", "--interval", "0.1"])
        #expect(chosen.status == 0 && chosen.standardOutput.contains("\nv0 ") && !chosen.standardOutput.contains("\nv1 "))
    }
}
