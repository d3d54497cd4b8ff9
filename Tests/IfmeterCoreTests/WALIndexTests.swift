import Foundation
import Glibc
import Testing
@testable import IfmeterCore

/// `WALIndexDirectory=`: SQLite's WAL index (`-shm`) kept in a directory of
/// its own (the package's is the tmpfs runtime directory), with the real
/// daemon, the real CLI and a real tunnel life.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct WALIndexTests {
    private func ifmeter(_ daemon: DaemonHarness, _ arguments: [String]) throws -> ProcessResult {
        try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
    }

    private func files(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    private func mode(of path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// The daemon commits with its index in the directory, beside nothing
    /// in the state directory; `ifmeter` reads the commits through the same
    /// index (it creates no `-shm` of its own); a kill -9 loses nothing;
    /// the last process to close removes the index, as SQLite does.
    @Test func theIndexLivesInItsDirectoryAndEveryProcessSharesIt() throws {
        let runtime = try TestEnvironment.temporaryDirectory("walindex")
        defer { try? FileManager.default.removeItem(at: runtime) }
        let daemon = try DaemonHarness(
            namespace: NetworkNamespace(), configuration: "WALIndexDirectory=\(runtime.path)\nJournalFile=\(runtime.path)/ifmeterd.journal\n")
        try daemon.start(interval: 1, commitInterval: 1)
        try daemon.namespace.tunTraffic(name: "vpn0", rxPackets: 300, txPackets: 200, size: 1000)
        try daemon.waitForLog("vpn0: removed")
        let store = daemon.stateDirectory + "/" + CounterStore.fileName
        let anchors = files(in: runtime.path).filter { $0.hasPrefix("ifmeter-") }
        #expect(anchors.count == 2 && anchors.allSatisfy { $0.hasSuffix(".db") || $0.hasSuffix(".db-shm") }, "\(anchors)")
        // The index and its anchor at the store's mode: readers in its group
        // map the index as they would beside it.
        for anchor in anchors { #expect(mode(of: runtime.path + "/" + anchor) == CounterStore.fileMode) }
        #expect(FileManager.default.fileExists(atPath: store + "-shm") == false)

        // Commits land meanwhile (one a second): each read is whole.
        for _ in 0..<3 {
            let shown = try ifmeter(daemon, ["status", "--json", "--all"])
            #expect(shown.status == 0, "\(shown.standardError)")
            #expect(shown.standardOutput.contains("300000"))
        }
        #expect(FileManager.default.fileExists(atPath: store + "-shm") == false, "ifmeter mapped an index of its own")

        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        try daemon.runOnce()
        #expect(files(in: runtime.path).contains { $0.hasSuffix(".db-shm") } == false, "\(files(in: runtime.path))")
        #expect(FileManager.default.fileExists(atPath: store + "-shm") == false)
        let stored = try #require(try daemon.storeFile().interfaces().first { $0.name == "vpn0" })
        #expect(stored.totals.rxBytes == 300_000)
        #expect(stored.totals.txBytes == 200_000)
    }

    /// A directory that is not there: the daemon says so and does not
    /// start (the index would stay beside the store without a word).
    @Test func aMissingDirectoryIsAStartError() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "WALIndexDirectory=/nonexistent/ifmeter\n")
        let result = try daemon.runOnceAllowingFailure()
        #expect(result.status == 73)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("WALIndexDirectory=/nonexistent/ifmeter: no such directory"), "\(lines)")
    }

    /// Something planted where the index would go (a FIFO SQLite would
    /// open, a directory) is left alone: the index stays beside the store,
    /// for every process alike, and nothing waits or fails.
    @Test(arguments: ["fifo", "directory"])
    func somethingPlantedAtTheIndexIsLeftAlone(kind: String) throws {
        let runtime = try TestEnvironment.temporaryDirectory("walindex")
        defer { try? FileManager.default.removeItem(at: runtime) }
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "WALIndexDirectory=\(runtime.path)\n")
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, txPackets: 0, size: 500, persist: true)
        try daemon.runOnce()
        var store = stat()
        #expect(stat(daemon.stateDirectory + "/" + CounterStore.fileName, &store) == 0)
        let index = runtime.path + "/ifmeter-" + String(store.st_dev, radix: 16) + "-" + String(store.st_ino, radix: 16) + ".db-shm"
        #expect(kind == "fifo" ? mkfifo(index, 0o600) == 0 : mkdir(index, 0o700) == 0)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, txPackets: 0, size: 500, persist: true)
        try daemon.runOnce()
        let shown = try ifmeter(daemon, ["status", "--json", "--all"])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(try daemon.storeFile().interfaces().first { $0.name == "tun0" }?.totals.rxBytes == 1_500)
        var planted = stat()
        #expect(lstat(index, &planted) == 0 && (planted.st_mode & S_IFMT) == (kind == "fifo" ? S_IFIFO : S_IFDIR))
    }

    /// After a reboot /run is empty until the daemon starts: `ifmeter`
    /// then reads with the index beside the store, as SQLite places it.
    @Test func theCLIReadsWhileTheDirectoryIsMissing() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, txPackets: 0, size: 500, persist: true)
        try daemon.runOnce()
        try daemon.writeConfiguration("WALIndexDirectory=/nonexistent/ifmeter\n")
        let shown = try ifmeter(daemon, ["status", "--json", "--all"])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(shown.standardOutput.contains("\"tun0\""))
    }
}
