import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The commit journal with a real daemon: what a kill leaves in it, and what cannot be applied.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct JournalDaemonTests {
    /// A tunnel life between store commits costs one journal append, in the
    /// runtime directory systemd gives (a tmpfs under the unit); killed then,
    /// the next start commits it, to the byte. Readers look for the journal
    /// in fixed places only (the packaged /run/ifmeter, the state directory),
    /// never where a store or a daemon says: this one they do not see.
    @Test func aLifeJournaledInTheRuntimeDirectorySurvivesAKill() throws {
        let runtime = try TestEnvironment.temporaryDirectory("runtime")
        defer { try? FileManager.default.removeItem(at: runtime) }
        let journal = runtime.path + "/" + Configuration.journalName
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 3600, commitInterval: 3600, environment: ["RUNTIME_DIRECTORY": runtime.path])
        let committed = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/ifmeter.db-wal")[.size] as? Int
        try daemon.namespace.tunTraffic(name: "vpn0", rxPackets: 300, txPackets: 200, size: 1000)
        try daemon.waitForLog("vpn0: removed")
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        // The store file was not written for it: the WAL did not grow.
        #expect(try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/ifmeter.db-wal")[.size] as? Int == committed)
        #expect(FileManager.default.fileExists(atPath: daemon.journalPath) == false)
        #expect(try #require(try CommitJournal.read(journal)).records.isEmpty == false)

        let shown = try daemon.namespace.run(
            [TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "status", "--json", "--all"])
        #expect(shown.status == 0)
        #expect(!shown.standardOutput.contains("\"vpn0\""))
        #expect(daemon.log.contains("\(runtime.path): the readers' view and journal are kept here, but ifmeter looks in \(daemon.stateDirectory)"))

        try daemon.runOnce(environment: ["RUNTIME_DIRECTORY": runtime.path])
        let stored = try #require(try daemon.storeFile().interfaces().first { $0.name == "vpn0" })
        #expect(stored.totals.rxBytes == 300_000)
        #expect(stored.totals.txBytes == 200_000)
        #expect(try CommitJournal.read(journal)?.records.isEmpty == true)
    }

    /// Life changes past the journal's bound commit the store, which empties
    /// the journal, long before the commit interval; killed then, every byte
    /// of every life is counted once.
    @Test func aJournalAtItsBoundIsCommittedToTheStore() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 3600, commitInterval: 3600)
        let walBefore = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/ifmeter.db-wal")[.size] as? Int ?? 0
        // About 230 journal bytes a life: 1,300 lives pass the bound.
        let lives = 1300
        try daemon.namespace.tunTraffic(name: "vpn0", rxPackets: 2, size: 1000, lives: lives)
        try daemon.waitForLog("vpn0: removed", occurrences: lives)
        #expect(daemon.journalSize < LifeChangeRoute.journalBound + (32 << 10), "journal \(daemon.journalSize) bytes")
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        let walAfter = try FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/ifmeter.db-wal")[.size] as? Int ?? 0
        #expect(walAfter > walBefore, "no store commit before the interval: the bound was never reached")
        try daemon.runOnce()
        #expect(try daemon.totals("vpn0").rxBytes == UInt64(lives) * 2000)
    }

    /// A small record's batch: one delta of `seed` bytes to a name of its own.
    static func batch(_ seed: Int64) -> CommitBatch {
        var pending = PendingWrites()
        pending.deltas[PendingWrites.Slot(name: "tun\(seed)", start: 1_700_000_100)] = LinkCounters(rxBytes: UInt64(seed), txBytes: 1)
        return CommitBatch(pending: pending)
    }

    /// Another store's journal, a damaged one, one that would take a total
    /// past 2^62, a symlink at the journal's path, a journal whose creation
    /// was cut short: the daemon starts, says so in one line naming the
    /// file, applies nothing it should not, and the store stays whole and in range.
    @Test(arguments: ["other-store", "damaged", "out-of-range", "symlink", "torn", "unwritten"])
    func aFileThatIsNotThisStoresJournalIsNeverApplied(_ kind: String) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 3, size: 1000)
        try FileManager.default.removeItem(atPath: daemon.journalPath)
        var bytes: [UInt8]? = nil
        func journal(generation: UInt64? = nil, storeID: UInt64? = nil) throws -> CommitJournal {
            let store = try CounterStore(directory: daemon.stateDirectory)
            defer { store.close() }
            return try CommitJournal(path: daemon.journalPath, header: JournalHeader(
                storeID: try storeID ?? store.journalIdentity(), generation: try generation ?? store.appliedJournalGeneration() + 1,
                bootID: "test-boot-1", namespace: 0))
        }
        switch kind {
        case "other-store":
            try journal(generation: 9, storeID: 42).append(JournalRecord(time: 1_700_000_000, batch: Self.batch(1)))
        case "damaged":
            let damaged = try journal()
            for seed: Int64 in 1...2 { try damaged.append(JournalRecord(time: 1_700_000_000, batch: Self.batch(seed))) }
            var written = try #require(try FileSystem.readBytes(daemon.journalPath))
            written[written.count - 40] ^= 0xff
            written[written.count / 2] ^= 0xff
            bytes = written
        case "out-of-range":
            var pending = PendingWrites()
            pending.deltas[PendingWrites.Slot(name: "tun0", start: 1_700_000_000)] = LinkCounters(rxBytes: 1 << 62)
            let crafted = try journal()
            for _ in 0..<2 { try crafted.append(JournalRecord(time: 1_700_000_000, batch: CommitBatch(pending: pending))) }
        case "symlink":
            #expect(symlink("/dev/zero", daemon.journalPath) == 0)
        case "torn":
            bytes = Array("ifmeter jou".utf8)  // a creation cut short
        default:
            bytes = [UInt8](repeating: 0, count: 4096)  // blocks a crash left unwritten
        }
        if let bytes { try FileSystem.write(bytes, to: daemon.journalPath) }
        let result = try daemon.runOnceAllowingFailure()
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").contains { $0.contains(daemon.journalPath + ":") }, "\(result.standardError)")
        if kind != "symlink" { #expect(try CommitJournal.read(daemon.journalPath)?.records.isEmpty == true) }
        #expect(try daemon.storeFile().integrityCheck() == "ok")
        #expect(try daemon.totals("tun0").rxBytes == 3000)
        // And the store stays one the daemon counts into.
        try daemon.runOnce()
    }

    /// A journal directory the daemon cannot write does not keep it from
    /// counting: life changes go to the store, and it says so once.
    @Test func aJournalThatCannotBeWrittenFallsBackToTheStore() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        try FileSystem.write(Array("x".utf8), to: daemon.journalPath, mode: 0o000)
        #expect(chattrImmutable(daemon.journalPath))
        defer { _ = chattrImmutable(daemon.journalPath, set: false) }
        try daemon.start(interval: 3600, commitInterval: 3600)
        try daemon.namespace.tunTraffic(name: "vpn0", rxPackets: 30, size: 1000)
        try daemon.waitForLog("vpn0: removed")
        #expect(daemon.stop(with: SIGKILL) == SIGKILL)
        #expect(daemon.log.contains("committing life changes to the store directly"))
        #expect(try daemon.storeFile().interfaces().first { $0.name == "vpn0" }?.totals.rxBytes == 30_000)
    }

    private func chattrImmutable(_ path: String, set: Bool = true) -> Bool {
        (try? runProcess("/usr/bin/chattr", [set ? "+i" : "-i", path]))?.status == 0
    }

    /// A journal `ifmeter` cannot read is said in one line; the store is
    /// still shown.
    @Test func aJournalTheCLICannotReadIsSaid() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        try FileManager.default.removeItem(atPath: daemon.journalPath)
        try FileManager.default.createDirectory(atPath: daemon.journalPath, withIntermediateDirectories: false)
        let shown = try daemon.ifmeter(["status"], inNamespace: true)
        #expect(shown.status == 0)
        let lines = shown.standardError.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.contains("\(daemon.journalPath): not a regular file; tunnel lives since the daemon's last commit are not shown") == true)
    }

}
