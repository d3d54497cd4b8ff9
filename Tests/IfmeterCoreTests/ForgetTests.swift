import Foundation
import Glibc
import Testing
@testable import IfmeterCore

/// `ifmeter forget`, vnStat's --remove: every row of one interface goes, in
/// one transaction, and only while no daemon runs on the store.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct ForgetTests {
    private func ifmeter(_ daemon: DaemonHarness, _ arguments: [String]) throws -> ProcessResult {
        try runProcess(TestEnvironment.binary("ifmeter"), ["--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
    }

    @Test func forgetRemovesEveryRowOfOneInterfaceOnlyWithTheDaemonStopped() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 500, lives: 2)
        try daemon.namespace.tunTraffic(name: "tun1", subnet: 1, rxPackets: 2, size: 500, lives: 1)
        let refused = try ifmeter(daemon, ["forget", "tun0"])
        #expect(refused.status == ExitCode.unavailable.rawValue)
        #expect(refused.standardError == "ifmeter: \(daemon.stateDirectory): ifmeterd is running; stop it first (systemctl stop ifmeterd)\n")
        #expect(daemon.stop() == 0)
        #expect(try daemon.totals("tun0").rxBytes == 3000)

        let unknown = try ifmeter(daemon, ["forget", "tun9"])
        #expect(unknown.status == ExitCode.usage.rawValue)
        #expect(unknown.standardError.hasPrefix("ifmeter: no interface tun9 (known: tun0 tun1)"))

        let removed = try ifmeter(daemon, ["forget", "tun0"])
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(try daemon.totalsIfAny("tun0") == nil)
        #expect(try daemon.reasons("tun0").isEmpty)
        #expect(try daemon.store().bucketTotals(.day)["tun0"] == nil)
        // The other interface is untouched, and the daemon starts again.
        #expect(try daemon.totals("tun1").rxBytes == 1000)
        try daemon.runOnce()
        #expect(try daemon.store().integrityCheck() == "ok")
    }

    /// A daemon killed with a tunnel life only in its journal: `forget`
    /// applies the journal first, so the next start cannot bring the
    /// forgotten interface back.
    /// Also when JournalFile= has moved since (the store recorded where the
    /// killed daemon journaled).
    @Test(arguments: [false, true])
    func forgetAppliesAJournalLeftByAKillFirst(journalFileMovedSince: Bool) throws {
        let runtime = try TestEnvironment.temporaryDirectory("runtime")
        defer { try? FileManager.default.removeItem(at: runtime) }
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 3600, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "vpn0", rxPackets: 3, size: 500)
        try daemon.waitForLog("vpn0: removed")
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        #expect(try daemon.storeFile().interfaces().first { $0.name == "vpn0" } == nil)
        if journalFileMovedSince {
            let configuration = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
            try (configuration + "JournalFile=\(runtime.path)/moved.journal\n").write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        }
        let removed = try ifmeter(daemon, ["forget", "vpn0"])
        #expect(removed.status == 0, "\(removed.standardError)")
        try daemon.runOnce()
        #expect(try daemon.totalsIfAny("vpn0") == nil)
        #expect(try daemon.reasons("vpn0").isEmpty)
    }
}
