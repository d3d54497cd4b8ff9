import Foundation
@testable import IfmeterCore
import IfmeterTestSupport
import Testing

/// The upgrade mechanism, with no real step yet: schema 1 is the first
/// release's, and a later one adds its steps to `CounterStore.migrations`.
@Suite struct StoreMigrationTests {
    let directory: URL

    init() throws { directory = try TestEnvironment.temporaryDirectory("migration") }

    @Test func aFreshStoreIsTheCurrentSchema() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        #expect(CounterStore.schemaVersion == 3)
        #expect(CounterStore.migrations.map(\.version) == [2, 3])
        #expect(try store.database.query("PRAGMA user_version") { $0.integer(0) } == [3])
    }

    /// A schema-1 store (no imported history) reads as one with none, and a writer upgrades it.
    @Test func aSchemaOneStoreReadsAndUpgrades() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        try store.database.execute("DROP TABLE imported_bucket; DROP TABLE imported_interface; PRAGMA user_version = 1")
        store.close()
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        #expect(try reader.importedInterfaces().isEmpty)
        #expect(try reader.buckets(.day).isEmpty)
        reader.close()
        let upgraded = try CounterStore(directory: directory.path)
        #expect(try upgraded.database.query("PRAGMA user_version") { $0.integer(0) } == [3])
        #expect(try upgraded.hasImportTables)
    }

    /// Schema 3 rebuilds the reset log for the `unseen` loss: every event of a schema-2 store is
    /// kept, id and all, and a reader of the store as it was sees them too.
    @Test func aSchemaTwoLogUpgradesWithEveryEvent() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        try store.database.execute("""
            DROP TABLE event;
            CREATE TABLE event (id INTEGER PRIMARY KEY, time INTEGER NOT NULL, interface_id INTEGER NOT NULL REFERENCES interface(id),
              boot_id TEXT NOT NULL, reason TEXT NOT NULL, old_ifindex INTEGER, new_ifindex INTEGER,
              loss TEXT NOT NULL CHECK (loss = 'none' OR loss = 'unknown' OR loss = 'discarded'),
              discarded_rx_bytes INTEGER, discarded_tx_bytes INTEGER, detail TEXT NOT NULL, basis TEXT NOT NULL DEFAULT 'x');
            CREATE INDEX event_time ON event(time);
            INSERT INTO interface(id, name, class, signal, kind, first_seen, last_seen) VALUES (1, 'tun0', 'tunnel', 'kind tun', 'tun', 1, 1);
            INSERT INTO event(id, time, interface_id, boot_id, reason, loss, detail) VALUES (7, 1800000000, 1, 'b', 'reboot', 'unknown', 'rebooted');
            PRAGMA user_version = 2;
            """)
        store.close()
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        #expect(try reader.events().map(\.loss) == [.unknown])
        reader.close()
        let upgraded = try CounterStore(directory: directory.path)
        #expect(try upgraded.database.query("SELECT id, loss FROM event") { "\($0.integer(0)) \($0.text(1))" } == ["7 unknown"])
        try upgraded.database.execute("INSERT INTO event(time, interface_id, boot_id, reason, loss, unseen_seconds, detail) VALUES (1, 1, 'b', 'reboot', 'unseen', 3, 'x')")
        #expect(try upgraded.events().map(\.loss) == [.unknown, .unseen(seconds: 3)])
    }

    /// A step above the store's version runs in its own transaction with its
    /// version; one at or below it does not run again.
    @Test func aStepRunsOnceWithItsVersion() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        let steps = [
            CounterStore.Migration(version: 2, sql: "CREATE TABLE never (x INTEGER)"),
            CounterStore.Migration(version: 3, sql: "CREATE TABLE added (x INTEGER)"),
        ]
        try store.migrate(from: 2, through: steps)
        #expect(try store.database.query("PRAGMA user_version") { $0.integer(0) } == [3])
        let tables = try store.database.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) }
        #expect(tables.contains("added") && !tables.contains("never"))
    }

    /// A step that fails rolls back whole: the store stays at the version before it.
    @Test func aFailingStepLeavesTheVersionBefore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        let steps = [CounterStore.Migration(version: 4, sql: "CREATE TABLE half (x INTEGER); SELECT * FROM no_such_table")]
        #expect(throws: StoreError.self) { try store.migrate(from: 3, through: steps) }
        #expect(try store.database.query("PRAGMA user_version") { $0.integer(0) } == [3])
        #expect(try store.database.query("SELECT count(*) FROM sqlite_schema WHERE name = 'half'") { $0.integer(0) } == [0])
    }

    /// A store of a newer schema than this ifmeter knows is refused untouched.
    @Test func aNewerSchemaIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        try store.database.execute("PRAGMA user_version = 4")
        store.close()
        #expect {
            _ = try CounterStore(directory: directory.path)
        } throws: { error in
            guard case .newerSchema(_, found: 4, supported: 3) = error as? StoreError else { return false }
            return true
        }
    }
}
