import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The view readers read while the daemon runs: the store's last commit, whole, world-readable, and a
/// hostile one (a link, a FIFO, a huge file, code in its schema) refused in one line, exit 65.
@Suite struct ReadersViewTests {
    let directory: URL
    var viewPath: String { directory.appendingPathComponent(ReadersView.fileName).path }

    init() throws { directory = try TestEnvironment.temporaryDirectory("view") }

    private func committedStore(rxBytes: UInt64) throws -> CounterStore {
        let store = try CounterStore(directory: directory.path)
        var pending = PendingWrites()
        pending.interfaces["tun0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: "tun0", ifindex: 4, counters: LinkCounters(rxBytes: rxBytes, rxPackets: 1))]
        pending.record(outcome, at: Instant(wall: 1_700_000_100, sinceBoot: 50))
        let life = TrackedLife(ifindex: 4, name: "tun0", counters: LinkCounters(rxBytes: rxBytes, rxPackets: 1), sinceBoot: 12.5,
                               firstSeen: 1_700_000_000, lastSeen: 1_700_000_100)
        try store.commit(pending, openLives: [life], bootID: "boot-1", presence: PresenceUpdate(present: [4: "tun0"]),
                         at: 1_700_000_100, retention: Retention(), intervals: (15, 300))
        return store
    }

    @Test func theViewHoldsTheLastCommitAndAnyoneMayReadIt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try committedStore(rxBytes: 1234)
        try ReadersView.publish(store, in: directory.path)
        var info = stat()
        #expect(stat(viewPath, &info) == 0 && info.st_mode & 0o777 == 0o644)
        #expect(stat(store.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let view = try #require(try ReadersView.open(in: directory.path))
        #expect(try view.interfaces().map(\.name) == ["tun0"])
        #expect(try view.meta("store_id") == store.meta("store_id"))
        // The WAL holds the commit: the view has it all the same.
        #expect(FileSystem.hasData(store.path + "-wal"))
        let snapshot = try SnapshotReader.read(
            store: view, configuration: Configuration(), bootID: "boot-1", now: Instant(wall: 1_700_000_120, sinceBoot: 70),
            kernel: [], daemonRunning: true)
        #expect(snapshot.interfaces.first { $0.name == "tun0" }?.allTime.rxBytes == 1234)
        try ReadersView.withdraw(in: directory.path)
        #expect(try ReadersView.open(in: directory.path) == nil)
    }

    @Test(arguments: ["symlink", "fifo", "huge", "trigger", "not a store"])
    func aHostileViewIsRefusedInOneLine(_ kind: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try committedStore(rxBytes: 1)
        switch kind {
        case "symlink": #expect(symlink(store.path, viewPath) == 0)
        case "fifo": #expect(mkfifo(viewPath, 0o644) == 0)
        case "huge":
            try FileSystem.write([], to: viewPath)
            #expect(truncate(viewPath, off_t(ReadersView.sizeLimit + 1)) == 0)
        case "trigger":
            try ReadersView.publish(store, in: directory.path)
            try mustRun("/usr/bin/sqlite3", [viewPath, "CREATE TRIGGER spin AFTER INSERT ON meta BEGIN SELECT 1; END"])
        default: try FileSystem.write(Array(repeating: 0x41, count: 8192), to: viewPath)
        }
        let started = SystemClock.monotonic()
        #expect {
            _ = try ReadersView.open(in: directory.path)
        } throws: { error in
            let store = error as? StoreError
            let text = store?.description ?? ""
            return store?.exitCode == .dataError && text.contains(viewPath) && !text.contains("\n")
        }
        #expect(SystemClock.monotonic() - started < 5)
    }

    /// A store larger than a view may be is not published, and an older view of it is taken away.
    @Test func aStoreTooLargeForAViewWithdrawsIt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try committedStore(rxBytes: 1)
        try ReadersView.publish(store, in: directory.path)
        store.close()
        let path = directory.appendingPathComponent(CounterStore.fileName).path
        try mustRun("/usr/bin/sqlite3", [path, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) INSERT INTO meta SELECT 'padding' || i, zeroblob(1000000) FROM n"])
        let grown = try CounterStore(directory: directory.path, readOnly: true)
        #expect(throws: StoreError.self) { try ReadersView.publish(grown, in: directory.path) }
        #expect(!FileSystem.exists(viewPath))
    }
}
