import CSQLite
import Glibc

/// The embedded SQLite store: lives, baselines, totals, buckets and the reset log, each row
/// estimate-labelled. A commit writes deltas and their baselines in one transaction, so a
/// crash can never count twice.
package final class CounterStore {
    package static let fileName = "ifmeter.db"
    /// Every file a daemon keeps in its state directory but the journal:
    /// no output (metrics, a graph) may be renamed over one of them.
    package static let stateFileNames = [fileName, fileName + "-wal", fileName + "-shm", "ifmeterd.lock", "ifmeterd.pid", "ifmeterd.live"]
    /// `stateFileNames` in `directory`.
    package static func stateFiles(in directory: String) -> [String] { stateFileNames.map { directory + "/" + $0 } }
    /// The daemon's alone: a process that can open the store can hold a read transaction or a lock
    /// the writer needs. Everyone reads the daemon's view instead (`ReadersView`, docs/SECURITY.md).
    package static let fileMode: mode_t = 0o600
    /// The label stored on every row.
    package static let basis = "estimate: kernel interface counters"

    package let path: String
    private(set) var database: SQLiteDatabase
    var interfaceIDs: [String: Int64] = [:]
    /// What this connection knows of the open lives and the presence record, so a commit under
    /// churn need not probe for rows it would not change; only a writer writes them (bench/TRIES.md).
    var openLives: [LifeScope: Set<Int32>]?
    var presentLinks: [Int32: String]?

    /// The zone the buckets are cut in: glibc reads it once, at the first
    /// local time, and keeps it for the life of the process; so does this.
    lazy var zone = LocalZone.current()

    /// The meta rows this connection wrote, so a commit rewrites only the
    /// ones whose value changed (mostly `last_commit`).
    var writtenMeta: [String: String] = [:]

    var lastDetailPrune: Int64?
    var lastBucketPrune: (slot: Int64, retention: Retention)?

    /// Meta rows a daemon keeps current at each commit: the configuration it counts with.
    package var countingWith: [(key: String, value: String)] = []
    /// Set by the daemon for its final commit at a stop (`CleanStop`); every other commit clears it.
    package var cleanStop: CleanStop?

    /// Five-minute rows that start before this are in the coarser rows too.
    var foldedThrough: Int64 = 0


    /// Throws unless `directory` holds a store file this user may read. A
    /// store it may not read is a permission problem, not "no store yet":
    /// a directory it may not enter hides the file from `access(F_OK)` too.
    package static func requireStore(in directory: String) throws(StoreError) {
        let path = directory + "/" + fileName
        if FileSystem.isReadDenied(path) {
            throw .permissionDenied(path: path, ownedByRoot: FileSystem.isOwnedByRoot(path))
        }
        if !FileSystem.exists(path) { throw .missing(path: path) }
    }

    /// Opens `directory/ifmeter.db`. The daemon creates it when absent; a
    /// reader (`readOnly`) never creates or changes anything. A file that is
    /// not an ifmeter store, or has a newer schema, is refused untouched.
    package init(directory: String, readOnly: Bool = false) throws(StoreError) {
        path = directory + "/" + Self.fileName
        if readOnly { try Self.requireStore(in: directory) }
        // No one goes through a symbolic link at the store, -wal or -shm (SQLite would create
        // files beside wherever it points); one is named here. The directory may be one.
        if let link = [path, path + "-wal", path + "-shm"].first(where: FileSystem.isSymbolicLink) {
            throw .symbolicLink(path: link)
        }
        // SQLite would block forever on a FIFO's first read and fail on a directory with an error
        // that names nothing: checked with stat, which opens nothing.
        for file in [path, path + "-wal", path + "-shm"] {
            if let kind = FileSystem.nonFileKind(file, followingSymbolicLinks: true) { throw .notAFile(path: file, kind: kind) }
        }
        let exists = FileSystem.exists(path)
        if !readOnly {
            // Created at its final mode, so no other user can open it even
            // for the moment before a chmod; SQLite gives -wal and -shm the
            // mode of the database file.
            if !exists { try? FileSystem.createEmptyFile(path, mode: Self.fileMode) }
            for file in [path, path + "-wal", path + "-shm"] { FileSystem.restrictMode(file, to: Self.fileMode) }
        }
        do {
            database = try SQLiteDatabase(path: path, readOnly: readOnly, create: !readOnly)
        } catch {
            throw .sqlite(error)
        }
        do {
            try prepareSchema(readOnly: readOnly, isNew: !exists)
        } catch .sqlite(let error) where readOnly && (error.isCannotOpen || error.isReadOnly || error.isOutOfRoomForWALIndex && !Self.isWritten(directory)) {
            // A reader that cannot create the WAL index (a directory it may not write, a full disk)
            // reads the file as immutable: with no -shm there is no writer and no WAL to read.
            do {
                database = try SQLiteDatabase(path: path, readOnly: true, create: false, immutable: true)
            } catch {
                throw .sqlite(error)
            }
            try prepareSchema(readOnly: true, isNew: false)
        } catch .sqlite(let error) where readOnly && error.isOutOfRoomForWALIndex {
            throw .sqlite(SQLiteError(
                code: error.code, message: "the file system is full: reading the last commits (in -wal) needs room for the WAL index (-shm)",
                path: path, operation: "open"))
        }
        database.accept()
    }

    /// A private copy of `file` in memory, for `JournalOverlay` to write.
    init(memoryCopyOf file: CounterStore) throws(StoreError) {
        path = file.path
        do {
            database = try SQLiteDatabase(memoryCopyOf: file.database)
        } catch {
            throw .sqlite(error)
        }
        try loadFoldedThrough()
    }

    /// The store in `bytes`, a file's image (`ReadersView`), in memory: checked as a reader checks a file.
    init(view bytes: [UInt8], path: String) throws(StoreError) {
        self.path = path
        do {
            database = try SQLiteDatabase(deserializing: bytes, path: path)
        } catch {
            throw .sqlite(error)
        }
        try prepareSchema(readOnly: true, isNew: false)
    }

    /// The store as one file's bytes, as of its last commit.
    func serialized() throws(StoreError) -> [UInt8] {
        do { return try database.serialized() } catch { throw .sqlite(error) }
    }

    /// Whether a daemon may be writing the store in `directory`, or left
    /// commits in its WAL that only a WAL index can read.
    private static func isWritten(_ directory: String) -> Bool {
        FileSystem.isLockedByAnotherProcess(directory + "/ifmeterd.lock") || FileSystem.hasData(directory + "/" + fileName + "-wal")
    }

    private func prepareSchema(readOnly: Bool, isNew: Bool) throws(StoreError) {
        // Reading user_version is the first read of the file: a non-SQLite
        // file fails here with SQLITE_NOTADB.
        let version = try database.query("PRAGMA user_version") { $0.integer(0) }.first ?? 0
        if version > Self.schemaVersion {
            throw StoreError.newerSchema(path: path, found: version, supported: Self.schemaVersion)
        }
        if (1...Self.schemaVersion).contains(version) {
            // A table dropped by hand: refused here, in one line, rather
            // than by the first statement that needs it.
            let tables = Set(try database.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) })
            let needed = ["meta", "interface", "life", "bucket", "event", "present_link", "boot_total", "reset_count"]
            if let missing = needed.first(where: { !tables.contains($0) }) {
                throw .unexpectedSchema(path: path, version: version, detail: "no table \(missing)")
            }
            // A trigger, view or virtual table is code someone else put there: never run, refused.
            let objects = try database.query("SELECT type, name FROM sqlite_schema") { SchemaObject(type: $0.text(0), name: $0.text(1)) }
            if let foreign = objects.first(where: { !Self.ownObjects.contains($0) }) {
                throw .unexpectedSchema(path: path, version: version, detail: "\(foreign.type == "index" ? "an" : "a") \(foreign.type) '\(foreign.name.escaping(EscapeTable.oneLine))' that ifmeter never creates")
            }
            if !readOnly {
                // A writer never builds on a damaged file: quick_check reads
                // every page (milliseconds for a year of data) and a store
                // that fails it is refused untouched.
                let check = try database.query("PRAGMA quick_check") { $0.text(0) }
                guard check == ["ok"] else {
                    let findings = check.joined(separator: "\n").split(separator: "\n").filter { !$0.hasPrefix("***") }
                    throw .sqlite(SQLiteError(
                        code: SQLITE_CORRUPT, message: "quick_check: \(findings.prefix(3).joined(separator: "; "))", path: path, operation: "open"))
                }
                try checkValues()
                try checkHeadroom()
                try configureWriter()
                do {
                    try migrate(from: version, through: Self.migrations)
                } catch .sqlite(let error) where error.isSQLError {
                    // The step that failed rolled back; an earlier one may have committed.
                    let current = (try? database.query("PRAGMA user_version") { $0.integer(0) })?.first ?? version
                    throw .unexpectedSchema(path: path, version: current, detail: error.message)
                }
            } else {
                try checkCountsAreWhole()
            }
            try loadFoldedThrough()
            return
        }
        let tables = try database.query("SELECT count(*) FROM sqlite_schema") { $0.integer(0) }.first ?? 0
        guard tables == 0 else { throw StoreError.notAStore(path: path) }
        if readOnly { throw StoreError.missing(path: path) }
        // Before anything is written: a commit appends every page it
        // touched to the WAL, and most touch one row of several tables.
        try database.execute("PRAGMA page_size = \(Self.pageSize)")
        try configureWriter()
        try database.transaction { () throws(StoreError) in
            try database.execute(Self.schema)
            try database.execute("PRAGMA user_version = \(Self.schemaVersion)")
            try database.run(
                "INSERT INTO meta(key, value) VALUES ('basis', ?), ('created', strftime('%s','now')), ('folded_through', '0')", [.text(Self.basis)])
        }
        foldedThrough = 0
    }


    struct SchemaObject: Hashable {
        var type: String
        var name: String
    }

    /// Every table and index ifmeter's schema makes, as SQLite names them.
    static let ownObjects: Set<SchemaObject> = {
        do {
            let scratch = try SQLiteDatabase(path: ":memory:", readOnly: false, create: true)
            try scratch.execute(schema)
            return Set(try scratch.query("SELECT type, name FROM sqlite_schema") { SchemaObject(type: $0.text(0), name: $0.text(1)) })
        } catch {
            // ifmeter's own schema in memory: failing is a fault in this build, not in any store.
            fatalError("ifmeter's schema does not build in memory: \(error)")
        }
    }()

    /// The largest counter a writer builds on: 2^62 bytes (4 EiB) leaves the
    /// daemon room to add any delta without overflowing SQLite's signed 64
    /// bits (where `+` silently turns into floating point) or its own sums.
    static let counterLimit: Int64 = 1 << 62

    /// The columns that hold counts ifmeter summed, by table.
    private var countColumns: [(table: String, columns: [String])] {
        [
            ("interface", Self.counterColumns.components),
            // A life's own counters are the kernel's (any 64-bit value); what ifmeter counted in it is a sum.
            ("life", ["counted_rx_bytes", "counted_tx_bytes", "counted_rx_packets", "counted_tx_packets"]),
            ("bucket", Self.counterColumns.components),
            ("boot_total", Self.byteAndPacketColumns.components),
            ("reset_count", ["count"]),
        ]
    }

    /// For readers: SQL sums text or a blob as 0, a figure that looks real; such a store is
    /// refused, in one scan of each table a reader sums (not `life`, which no reader sums).
    private func checkCountsAreWhole() throws(StoreError) {
        try refuseRows(countColumns.filter { $0.table != "life" }.map { table, columns in
            ValueRule(table: table, condition: columns.map { "typeof(\($0)) != 'integer'" }.joined(separator: " OR ")) {
                "\($0) \($1) rows hold a count that is not a whole number"
            }
        })
    }

    /// Refuses, untouched, a store holding values no ifmeter writes: counters that would overflow,
    /// and the times and ifindexes readers refuse, on which a daemon would go on committing.
    func checkValues() throws(StoreError) {
        let counters = { (count: Int64, table: String) in
            "\(count) \(table) rows hold counters outside 0...2^62 or not whole numbers, too large to go on counting without overflow"
        }
        let times = { (count: Int64, table: String) in "\(count) \(table) rows hold a time outside 1970 to the year 36000 or not a whole number" }
        let ifindexes = { (count: Int64, table: String) in "\(count) \(table) rows hold an ifindex outside 0...2^31-1" }
        var rules = countColumns.map { ValueRule(table: $0.table, columns: $0.columns, outside: 0...Self.counterLimit, detail: counters) }
        rules += [
            ValueRule(table: "interface", columns: ["first_seen", "last_seen"], outside: Self.timeRange, detail: times),
            ValueRule(table: "life", columns: ["first_seen", "last_seen", "ended"], outside: Self.timeRange, detail: times),
            ValueRule(table: "event", columns: ["time"], outside: Self.timeRange, detail: times),
            ValueRule(table: "bucket", columns: ["start", "last_counted"], outside: Self.timeRange, detail: times),
            ValueRule(table: "life", columns: ["ifindex"], outside: Self.ifindexRange, detail: ifindexes),
            ValueRule(table: "event", columns: ["old_ifindex", "new_ifindex"], outside: Self.ifindexRange, detail: ifindexes),
            ValueRule(table: "life", condition: "typeof(since_boot) NOT IN ('integer', 'real') OR abs(since_boot) >= 1e12") {
                "\($0) \($1) rows hold a time since boot that is not a number below 10^12"
            },
        ]
        rules.append(ValueRule(table: "present_link", columns: ["ifindex"], outside: Self.ifindexRange, detail: ifindexes))
        try refuseRows(rules)
    }

    /// Refuses the store when some row breaks a rule, in one scan of each
    /// table the rules name (in their order); the first rule broken, in
    /// the first such table, is what the error says.
    private func refuseRows(_ rules: [ValueRule]) throws(StoreError) {
        var tables: [String] = []
        for rule in rules where !tables.contains(rule.table) { tables.append(rule.table) }
        for table in tables {
            let own = rules.filter { $0.table == table }
            let counts = try database.query("SELECT \(own.map { "coalesce(sum(\($0.condition)), 0)" }.joined(separator: ", ")) FROM \(table)") { row in
                own.indices.map { row.integer(Int32($0)) }
            }.first ?? []
            if let index = counts.firstIndex(where: { $0 > 0 }) { throw StoreError.invalidValue(path: path, detail: own[index].detail(counts[index], table)) }
        }
    }

    /// A kind of value no ifmeter writes in a table, as an SQL condition on
    /// a row, and how to say how many rows hold one.
    private struct ValueRule {
        let table: String
        let condition: String
        let detail: (Int64, String) -> String

        init(table: String, condition: String, detail: @escaping (Int64, String) -> String) {
            self.table = table
            self.condition = condition
            self.detail = detail
        }

        /// Some column holds other than an integer in `range` (NULL passes:
        /// the schema says where it may stand).
        init(table: String, columns: [String], outside range: ClosedRange<Int64>, detail: @escaping (Int64, String) -> String) {
            let each = columns.map { "(\($0) IS NOT NULL AND (typeof(\($0)) != 'integer' OR \($0) NOT BETWEEN \(range.lowerBound) AND \(range.upperBound)))" }
            self.init(table: table, condition: each.joined(separator: " OR "), detail: detail)
        }
    }

    /// Refuses, untouched, a store whose totals the next fold would carry
    /// past 2^62, though each part is in range (`checkValues`).
    func checkHeadroom() throws(StoreError) {
        // Each part in range may still sum past 2^62. The floating sum cannot overflow and is exact
        // below 2^53; beyond it the fold's own exact check (`addToTotals`) refuses the commit.
        let columns = Self.counterColumns
        let passing = try database.query("""
            SELECT count(*) FROM interface i JOIN (
              SELECT interface_id, \(columns.list { "total(\($0)) AS \($0)" }) FROM bucket
              WHERE granularity = '5min' AND start >= (\(Self.foldedThroughQuery)) GROUP BY interface_id) AS u ON u.interface_id = i.id
            WHERE \(columns.list(separator: " OR ") { "u.\($0) > \(Self.counterLimit) - i.\($0)" })
            """) { $0.integer(0) }.first ?? 0
        if passing > 0 {
            throw StoreError.invalidValue(
                path: path, detail: "\(passing) interfaces' totals and five-minute rows not folded yet sum past 2^62, too large to go on counting without overflow")
        }
    }

    /// WAL: readers never block the daemon and commits append rather than rewrite. synchronous=FULL:
    /// a commit is on disk when it returns, as a power cut starts a new boot whose kernel counters
    /// cannot give back what an unsynced commit held (bench/TRIES.md: its cost).
    private func configureWriter() throws(StoreError) {
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL")
        // After a reader held the WAL from being reset, the next reset truncates it back to the
        // auto-checkpoint size: a header and 1000 frames of a page and 24 bytes each.
        let pageSize = try database.query("PRAGMA page_size") { $0.integer(0) }.first ?? Int64(Self.pageSize)
        try database.execute("PRAGMA journal_size_limit = \(32 + 1000 * (pageSize + 24))")
        // A commit touches a few pages; SQLite's default 2 MiB page cache
        // filled up under link churn and stayed resident in the daemon.
        try database.execute("PRAGMA cache_size = -256")
        try database.execute("PRAGMA foreign_keys = ON")
    }

    /// Checkpoints and closes; nothing may use the store afterwards.
    package func close() { database.close() }

    // MARK: Helpers

    /// Counters are unsigned 64-bit; SQLite integers are signed. The bit
    /// pattern round-trips; a writer refuses stores whose counters come
    /// near 2^62 (`checkHeadroom`), and readers refuse negative ones.
    static func value(_ number: UInt64) -> SQLiteValue { .integer(Int64(bitPattern: number)) }

    /// A life's baseline: the kernel's own counters, any 64-bit value
    /// (bit pattern in SQLite's signed integer). The accounting judges them.
    static func kernelCounters(_ row: SQLiteRow, from column: Int32) -> LinkCounters {
        LinkCounters(fields: (0..<8).map { UInt64(bitPattern: row.integer(column + Int32($0))) })
    }

    /// Totals ifmeter summed (interface rows): 0...Int64.max.
    func counters(_ row: SQLiteRow, from column: Int32) throws(StoreError) -> LinkCounters {
        var fields: [UInt64] = []
        for offset in Int32(0)..<8 { fields.append(try counter(row, column + offset)) }
        return LinkCounters(fields: fields)
    }
}
