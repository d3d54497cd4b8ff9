import Foundation
import Testing
@testable import IfmeterCore

/// Stores as earlier versions wrote them (Stores/versionN.sql, built with
/// the sqlite3 shell from the schema text of that version): the CLI reads
/// them as they are, the daemon upgrades them in place, and no row's
/// figures change on the way.
@Suite struct StoreUpgradeTests {
    let directory: URL
    var path: String { directory.appendingPathComponent(CounterStore.fileName).path }

    init() throws { directory = try TestEnvironment.temporaryDirectory("upgrade") }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Stores")

    private func createStore(version: Int) throws {
        _ = try mustRun("/usr/bin/sqlite3", [path, ".read \(Self.fixtures.appendingPathComponent("version\(version).sql").path)"])
    }

    /// A journal of store 42 holding one record: wwan0 counted 5 bytes each way at 1767226250.
    private func writeJournal(_ path: String, generation: UInt64) throws {
        var pending = PendingWrites()
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: "wwan0", ifindex: 3, counters: LinkCounters(rxBytes: 5, txBytes: 5))]
        pending.record(outcome, at: Instant(wall: 1_767_226_250, sinceBoot: 700))
        try CommitJournal(path: path, header: JournalHeader(storeID: 42, generation: generation, bootID: "boot-a", namespace: 0))
            .append(JournalRecord(time: 1_767_226_250, batch: CommitBatch(pending: pending)))
    }

    /// What the reports and the daemon's start read, as one comparable value.
    private struct Contents: Equatable {
        var interfaces: [StoredInterface]
        var buckets: [[StoredBucket]]
        var events: [StoredEvent]
        var openLives: [StoredLife]
        var lastBootID: String?
    }

    private func contents(_ store: CounterStore) throws -> Contents {
        let state = try store.loadState()
        return Contents(
            interfaces: try store.interfaces().sorted { $0.name < $1.name },
            buckets: try Granularity.allCases.map { try store.buckets($0) },
            events: try store.events(), openLives: state.openLives, lastBootID: state.lastBootID)
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func anOlderStoreIsReadAsItIsAndUpgradedInPlaceWithEveryRow(version: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try createStore(version: version)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))

        // The CLI reads it without writing a byte.
        let read = try contents(CounterStore(directory: directory.path, readOnly: true))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
        #expect(read.interfaces.map(\.name) == ["tun0", "wwan0"])
        #expect(read.interfaces.map(\.totals.rxBytes) == [300, 1000])
        #expect(read.buckets.map(\.count) == [3, 2, 2, 2, 2])
        #expect(read.buckets[2].first { $0.name == "tun0" }?.incomplete == "history-unknown at 1767225600: first seen")
        #expect(read.openLives.map(\.life.name) == ["wwan0"])
        // tun0's removal is an event row and a life ended 'removed' (version
        // 7 writes the life alone): listed once, counted once.
        #expect(read.events.map(\.reason) == [.removed])
        #expect(read.events.first?.detail == "deleted; final counters counted")
        #expect(try CounterStore(directory: directory.path, readOnly: true).resetCounts() == ["tun0": ["removed": 1]])

        // The daemon's open upgrades it; every figure reads back the same.
        let store = try CounterStore(directory: directory.path)
        #expect(try store.database.query("PRAGMA user_version") { $0.integer(0) } == [CounterStore.schemaVersion])
        #expect(try contents(store) == read)
        #expect(try store.resetCounts() == ["tun0": ["removed": 1]])
        #expect(try store.integrityCheck() == "ok")
        #expect(try store.database.query("PRAGMA foreign_key_check") { $0.text(0) } == [])
        // Version 3's bucket key, and no index left on what it now orders.
        let key = try store.database.query("SELECT name FROM pragma_table_info('bucket') WHERE pk > 0 ORDER BY pk") { $0.text(0) }
        #expect(key == ["granularity", "start", "interface_id"])
        #expect(try store.database.query("SELECT name FROM sqlite_schema WHERE tbl_name = 'bucket' AND sql IS NOT NULL AND type = 'index'") { $0.text(0) } == [])
        // Version 6's CHECKs: comparisons, not IN lists, refusing what they did.
        let checked = try store.database.query("SELECT sql FROM sqlite_schema WHERE name IN ('bucket', 'event')") { $0.text(0) }
        #expect(checked.count == 2 && checked.allSatisfy { $0.contains("CHECK") && !$0.contains(" IN (") }, "\(checked)")
        #expect(throws: StoreError.self) { try store.database.run("INSERT INTO bucket(interface_id, granularity, start) VALUES (1, 'week', 0)") }
        #expect(try store.database.query("SELECT name FROM sqlite_schema WHERE tbl_name = 'event' AND type = 'index'") { $0.text(0) } == ["event_time"])
        // "Since boot" agrees with all-time after an upgrade from version 1 too.
        #expect(try store.counted(bootID: "boot-a") == ["wwan0": LinkCounters(rxBytes: 1000, txBytes: 2000, rxPackets: 10, txPackets: 20),
                                                          "tun0": LinkCounters(rxBytes: 300, txBytes: 400, rxPackets: 3, txPackets: 4)])

        // A commit adds to the upgraded rows rather than beside them.
        var pending = PendingWrites()
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: "wwan0", ifindex: 3, counters: LinkCounters(rxBytes: 5, txBytes: 7, rxPackets: 1, txPackets: 1))]
        pending.record(outcome, at: Instant(wall: 1_767_225_600 + 310, sinceBoot: 400))
        try store.commit(pending, openLives: [], bootID: "boot-a", at: 1_767_225_600 + 320, retention: Retention(), intervals: (15, 300))
        let fiveMinutes = try store.buckets(.fiveMinutes).filter { $0.name == "wwan0" }.map(\.counters.rxBytes)
        #expect(fiveMinutes == [400, 605])
        #expect(try store.buckets(.year).filter { $0.name == "wwan0" }.map(\.counters.rxBytes) == [1005])
        #expect(try store.interface(named: "wwan0")?.totals.rxBytes == 1005)
        // Every five-minute row of the older store was in the coarse rows
        // already, or (version 4) is folded into them by the upgrade, but
        // not again into the totals that held it: folding starts after the
        // last of them.
        #expect(try store.meta("folded_through") == "1767226200")
        #expect(try store.database.query("SELECT rx_bytes FROM bucket WHERE granularity = 'hour' AND interface_id = 1") { $0.integer(0) } == [1005])
        store.close()

        // Upgraded once: opening again changes nothing.
        let again = try CounterStore(directory: directory.path)
        #expect(try again.database.query("PRAGMA user_version") { $0.integer(0) } == [CounterStore.schemaVersion])
        #expect(try again.bucketTotals(.fiveMinutes)["wwan0"]?.rxBytes == 1005)
        // Retirement and `forget` delete a name's buckets first: a foreign
        // key on bucket would scan the table for each interface row deleted
        // (bucketTable's comment has the measurement).
        #expect(try again.database.query("SELECT count(*) FROM pragma_foreign_key_list('bucket')") { $0.integer(0) } == [0])
    }

    /// `ifmeter` applies the daemon's journal to an in-memory copy of a
    /// store it may not upgrade, upgraded as the daemon would: a version 4
    /// store's rows not folded yet are counted once.
    @Test(arguments: [2, 4, 5])
    func theCLIAppliesAJournalToAnOlderStoreUpgradedInMemory(version: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try createStore(version: version)
        _ = try mustRun("/usr/bin/sqlite3", [path, "INSERT INTO meta(key, value) VALUES ('store_id', '42')"])
        let journalPath = directory.appendingPathComponent("ifmeterd.journal").path
        let journal = try CommitJournal(path: journalPath, header: JournalHeader(storeID: 42, generation: 1, bootID: "boot-a", namespace: 0))
        // wwan0 again in a slot it has a row for, and in a new one.
        var pending = PendingWrites()
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: "wwan0", ifindex: 3, counters: LinkCounters(rxBytes: 5, txBytes: 5))]
        pending.record(outcome, at: Instant(wall: 1_767_225_950, sinceBoot: 400))
        pending.record(outcome, at: Instant(wall: 1_767_226_250, sinceBoot: 700))
        try journal.append(JournalRecord(time: 1_767_226_250, batch: CommitBatch(pending: pending)))
        let original = try Data(contentsOf: URL(fileURLWithPath: path))

        let reader = try CounterStore(directory: directory.path, readOnly: true)
        #expect(try reader.includeJournal(at: journalPath).applied == 1)
        #expect(try reader.buckets(.fiveMinutes).filter { $0.name == "wwan0" }.map(\.counters.rxBytes) == [400, 605, 5])
        #expect(try reader.interface(named: "wwan0")?.totals.rxBytes == 1010)
        #expect(try reader.bucketTotals(.hour)["wwan0"]?.rxBytes == 1010)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
    }

    /// The CLI first tries its own JournalFile=, which holds a journal the
    /// store applied already, then the one the store recorded: each try
    /// upgrades a fresh in-memory copy. The second copy's upgrade must move
    /// its folded_through too, or the version 4 rows it folds into the
    /// coarse rows are added to them (and to the totals) again.
    @Test func aSecondInMemoryUpgradeCountsTheUnfoldedRowsOnce() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try createStore(version: 4)
        let stale = directory.appendingPathComponent("configured.journal").path
        let recorded = directory.appendingPathComponent("recorded.journal").path
        _ = try mustRun("/usr/bin/sqlite3", [path, """
            INSERT INTO meta(key, value) VALUES ('store_id', '42'), ('journal_generation', '1'), ('journal_path', '\(recorded)')
            """])
        // Generation 1, applied already: its records are in the store.
        try writeJournal(stale, generation: 1)
        try writeJournal(recorded, generation: 2)

        let reader = try CounterStore(directory: directory.path, readOnly: true)
        #expect(try reader.includeJournal(at: stale).applied == 1)
        let foldedThrough = try reader.meta("folded_through")
        let totals = try reader.interface(named: "wwan0")?.totals.rxBytes
        let hours = try reader.bucketTotals(.hour)["wwan0"]?.rxBytes
        #expect(foldedThrough == "1767226200")
        #expect(totals == 1005)
        #expect(hours == 1005)
    }

    /// `ifmeter forget` opens the store for writing, which upgrades a
    /// version 4 store and folds its rows not folded yet: in the zone the
    /// daemon counted in (meta timezone), not the one forget was run in.
    /// tun0's only five-minute row (00:05 UTC) is in the Asia/Kolkata hour
    /// that began at 23:30 UTC.
    @Test func forgetUpgradingAVersion4StoreFoldsInTheDaemonsZone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try createStore(version: 4)
        _ = try mustRun("/usr/bin/sqlite3", [path, "INSERT INTO meta(key, value) VALUES ('timezone', 'Asia/Kolkata')"])
        let config = directory.appendingPathComponent("ifmeter.conf").path
        try "".write(toFile: config, atomically: true, encoding: .utf8)
        let forget = try runProcess("/usr/bin/env", ["TZ=UTC", TestEnvironment.binary("ifmeter"),
            "--state-dir", directory.path, "--config", config, "forget", "wwan0"])
        #expect(forget.status == 0, "\(forget.standardError)")
        let store = try CounterStore(directory: directory.path, readOnly: true)
        let hours = try store.database.query("""
            SELECT b.start FROM bucket b JOIN interface i ON i.id = b.interface_id WHERE b.granularity = 'hour' AND i.name = 'tun0'
            """) { $0.integer(0) }
        #expect(hours == [1_767_223_800])
    }

    /// A version 4 store whose five-minute row starts at a time no ifmeter
    /// writes (edited by hand) is refused in one line with exit 65, like
    /// every other value out of range, never a trap: the upgrade's fold
    /// must not add 300 to it unchecked. `forget` opens it for writing, as
    /// the daemon does; `status` with a journal upgrades a copy in memory.
    @Test(arguments: [["forget", "wwan0"], ["status"]])
    func aVersion4StoreWithAFiveMinuteRowAtTheEndOfTimeIsRefusedInOneLine(_ command: [String]) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try createStore(version: 4)
        let journalPath = directory.appendingPathComponent("ifmeterd.journal").path
        _ = try mustRun("/usr/bin/sqlite3", [path, """
            UPDATE bucket SET start = 9223372036854775807 WHERE granularity = '5min' AND interface_id = 2;
            INSERT INTO meta(key, value) VALUES ('store_id', '42');
            """])
        try writeJournal(journalPath, generation: 1)
        let config = directory.appendingPathComponent("ifmeter.conf").path
        try "[Daemon]\nJournalFile=\(journalPath)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try runProcess(TestEnvironment.binary("ifmeter"), ["--state-dir", directory.path, "--config", config] + command)
        #expect(result.status == ExitCode.dataError.rawValue, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1, "\(result.standardError)")
    }

    /// A bucket or event row whose interface row is gone (a hand edit:
    /// every writer ran with foreign keys on, the sqlite3 shell does not) is
    /// carried over as it is, by the CLI's in-memory upgrade and by the
    /// daemon's; the daemon starts.
    @Test(arguments: [
        (2, "INSERT INTO bucket(interface_id, granularity, start, rx_bytes) VALUES (99, 'year', 0, 7)", "bucket"),
        (5, "INSERT INTO event(time, interface_id, boot_id, reason, loss, detail) VALUES (1767225600, 99, 'boot-a', 'removed', 'none', 'x')", "event"),
    ])
    func aRowWithoutItsInterfaceDoesNotStopTheUpgrade(version: Int, orphan: String, table: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try createStore(version: version)
        _ = try mustRun("/usr/bin/sqlite3", [path, orphan + "; INSERT INTO meta(key, value) VALUES ('store_id', '42')"])
        let journalPath = directory.appendingPathComponent("ifmeterd.journal").path
        try writeJournal(journalPath, generation: 1)
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        #expect(try reader.includeJournal(at: journalPath).applied == 1)
        #expect(try reader.database.query("SELECT count(*) FROM \(table) WHERE interface_id = 99") { $0.integer(0) } == [1])
        let store = try CounterStore(directory: directory.path)
        #expect(try store.database.query("PRAGMA user_version") { $0.integer(0) } == [CounterStore.schemaVersion])
        #expect(try store.database.query("SELECT count(*) FROM \(table) WHERE interface_id = 99") { $0.integer(0) } == [1])
        #expect(try store.database.query("PRAGMA foreign_keys") { $0.integer(0) } == [1])
    }

    /// A store whose tables are not those of its version (edited by hand)
    /// is refused with one line naming it and exit 65, left as it was.
    @Test(arguments: [
        ("ALTER TABLE bucket DROP COLUMN incomplete", "no such column: incomplete"),
        ("DROP INDEX bucket_age; ALTER TABLE bucket RENAME TO b2; CREATE VIEW bucket AS SELECT * FROM b2", "no table bucket"),
    ])
    func aVersion2StoreWithOtherTablesIsRefusedAsItIs(_ edit: String, _ detail: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try createStore(version: 2)
        _ = try mustRun("/usr/bin/sqlite3", [path, edit])
        let before = try mustRun("/usr/bin/sqlite3", [path, ".dump"])
        #expect {
            _ = try CounterStore(directory: directory.path)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.exitCode == .dataError && !error.description.contains("\n") && error.description.hasPrefix(path)
                && error.description.contains("schema version 2 (\(detail))")
        }
        #expect(try mustRun("/usr/bin/sqlite3", [path, ".dump"]) == before)
    }
}
