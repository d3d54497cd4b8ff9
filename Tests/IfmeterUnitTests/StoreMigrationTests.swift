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
        #expect(CounterStore.schemaVersion == 2)
        #expect(CounterStore.migrations.map(\.version) == [2])
        #expect(try store.database.query("PRAGMA user_version") { $0.integer(0) } == [2])
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
        #expect(try upgraded.database.query("PRAGMA user_version") { $0.integer(0) } == [2])
        #expect(try upgraded.hasImportTables)
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
        let steps = [CounterStore.Migration(version: 3, sql: "CREATE TABLE half (x INTEGER); SELECT * FROM no_such_table")]
        #expect(throws: StoreError.self) { try store.migrate(from: 2, through: steps) }
        #expect(try store.database.query("PRAGMA user_version") { $0.integer(0) } == [2])
        #expect(try store.database.query("SELECT count(*) FROM sqlite_schema WHERE name = 'half'") { $0.integer(0) } == [0])
    }

    /// A store of a newer schema than this ifmeter knows is refused untouched.
    @Test func aNewerSchemaIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        try store.database.execute("PRAGMA user_version = 3")
        store.close()
        #expect {
            _ = try CounterStore(directory: directory.path)
        } throws: { error in
            guard case .newerSchema(_, found: 3, supported: 2) = error as? StoreError else { return false }
            return true
        }
    }
}
