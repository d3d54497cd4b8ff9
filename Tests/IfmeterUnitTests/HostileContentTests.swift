import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// What the daemon's user writes into the store must not run, block or grow in the process that reads
/// it as root: each hostile store is refused in one line, exit 65, or its hostile part never runs.
@Suite struct HostileContentTests {
    let directory: URL
    var path: String { directory.appendingPathComponent(CounterStore.fileName).path }

    init() throws {
        directory = try TestEnvironment.temporaryDirectory("hostile")
        try CounterStore(directory: directory.path).close()
    }

    @Test(arguments: [
        ("CREATE TRIGGER spin AFTER INSERT ON meta BEGIN SELECT 1; END", "a trigger 'spin'"),
        ("CREATE VIEW totals AS SELECT * FROM interface", "a view 'totals'"),
        ("CREATE TABLE extra (x)", "a table 'extra'"),
        ("CREATE INDEX extra_index ON meta(value)", "an index 'extra_index'"),
    ])
    func anObjectIfmeterNeverCreatesIsRefused(_ statement: String, _ named: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try mustRun("/usr/bin/sqlite3", [path, statement])
        for readOnly in [true, false] {
            #expect {
                try CounterStore(directory: directory.path, readOnly: readOnly)
            } throws: { error in
                let store = error as? StoreError
                let text = store?.description ?? ""
                return store?.exitCode == .dataError && text.contains(named)
                    && !text.contains("\n")
            }
        }
    }

    /// A value longer than any ifmeter writes is refused where SQLite meets it, not read into memory.
    @Test func aHugeValueIsRefusedNotRead() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try mustRun("/usr/bin/sqlite3", [path, "INSERT INTO meta VALUES ('padding', printf('%.*c', 4000000, 'x'))"])
        let store = try CounterStore(directory: directory.path, readOnly: true)
        #expect(throws: StoreError.self) { _ = try store.meta("padding") }
    }
}

/// SQLite's own opens, below every check ifmeter makes by path: a name swapped after the check for a
/// FIFO or a link can neither block the reader nor send SQLite's files anywhere else.
@Suite struct SafeOpenTests {
    let directory: URL
    init() throws { directory = try TestEnvironment.temporaryDirectory("open") }

    @Test func aFIFOIsRefusedAtOnce() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ifmeter.db").path
        #expect(mkfifo(path, 0o600) == 0)
        let started = SystemClock.monotonic()
        #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path, readOnly: true, create: false).query("PRAGMA user_version") { $0.integer(0) } }
        #expect(SystemClock.monotonic() - started < 5)
    }

    @Test func aLinkAtTheFileIsRefusedAndNothingIsCreatedWhereItLeads() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let elsewhere = try TestEnvironment.temporaryDirectory("elsewhere")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let target = elsewhere.appendingPathComponent("private.db").path
        try CounterStore(directory: elsewhere.path).close()
        try FileManager.default.moveItem(atPath: elsewhere.appendingPathComponent(CounterStore.fileName).path, toPath: target)
        let path = directory.appendingPathComponent("ifmeter.db").path
        #expect(symlink(target, path) == 0)
        #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path, readOnly: true, create: false).query("PRAGMA user_version") { $0.integer(0) } }
        #expect(!FileSystem.exists(target + "-wal") && !FileSystem.exists(target + "-shm"))
    }
}
