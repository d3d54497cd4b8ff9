import CSQLite
import Glibc

/// Why the store could not be used, with the sysexits code to leave with.
package enum StoreError: Error, Sendable, CustomStringConvertible {
    case missing(path: String)
    case newerSchema(path: String, found: Int64, supported: Int64)
    case notAStore(path: String)
    /// A store of an older version whose tables are not those that version
    /// had (edited by hand): its upgrade cannot run. `version`: the one the
    /// file is left at.
    case unexpectedSchema(path: String, version: Int64, detail: String)
    case sqlite(SQLiteError)
    /// A value no ifmeter writes (a negative counter, a time out of range,
    /// totals too close to overflow for the daemon to go on counting).
    case invalidValue(path: String, detail: String)
    /// The store is readable by its owner and group only (README 'Security').
    case permissionDenied(path: String, group: String)
    /// In the group by the account database, not yet in this session.
    case groupNotYetInForce(path: String, group: String)
    /// The store file is a symbolic link, which no writer follows.
    case symbolicLink(path: String)
    /// A FIFO, directory, device or socket at the store's path (or at its
    /// `-wal` or `-shm`), which SQLite would wait on or fail oddly on.
    case notAFile(path: String, kind: FileSystem.NonFile)

    package var description: String {
        switch self {
        case .missing(let path): "\(path): no store yet"
        case .newerSchema(let path, let found, let supported):
            "\(path): store schema version \(found) is newer than this ifmeter supports (\(supported)); upgrade ifmeter, the store was left untouched"
        case .notAStore(let path): "\(path): not an ifmeter store (left untouched; move it aside to start a new one)"
        case .notAFile(let path, let kind): "\(path): \(kind), not an ifmeter store (left untouched; move it aside to start a new one)"
        case .unexpectedSchema(let path, let version, let detail):
            "\(path): the store's tables are not those of ifmeter's schema version \(version) (\(detail)); left as it is, see README 'Recovery'"
        case .permissionDenied(let path, "?"):
            "\(path): permission denied: this user may not reach the store's directory; see README 'Security'"
        case .permissionDenied(let path, "root"):
            // A store root made (make run as root): no group to join.
            "\(path): permission denied: the store is readable only by root, who made it; run ifmeter as root, see README 'Security'"
        case .permissionDenied(let path, let group):
            "\(path): permission denied: the store is readable only by its owner and group \(group) (no other user may hold it open); ask to be added to group \(group), see README 'Security'"
        case .groupNotYetInForce(let path, let group):
            "\(path): permission denied: this user is in group \(group), but this session is not yet (a group applies from the next login): log in again, or run 'newgrp \(group)'"
        case .invalidValue(let path, let detail): "\(path): value out of range (\(detail)); left untouched, see README 'Recovery'"
        case .symbolicLink(let path):
            "\(path): a symbolic link, never written through; to keep the store elsewhere, point the state directory (--state-dir, StateDirectory=) there"
        case .sqlite(let error) where error.isCorrupt:
            "\(error.path): store is corrupt or not a database (\(error.message)); left untouched, see README 'Recovery'"
        case .sqlite(let error): error.description
        }
    }

    package var exitCode: ExitCode {
        switch self {
        case .missing: .noInput
        case .permissionDenied, .groupNotYetInForce: .noPermission
        case .symbolicLink: .cannotCreate
        case .newerSchema, .notAStore, .notAFile, .unexpectedSchema, .invalidValue: .dataError
        case .sqlite(let error):
            if error.isCorrupt { .dataError } else if error.isReadOnly || error.isCannotOpen || error.isFull { .cannotCreate } else { .ioError }
        }
    }
}

/// The embedded SQLite store: per interface its lives, the last counters of
/// each open life, all-time totals, time buckets and the reset log. Every
/// row carries its estimate label. A commit writes deltas and the baselines
/// they came from in one transaction, so a crash can never count twice.
package final class CounterStore {
    package static let fileName = "ifmeter.db"
    /// Every file a daemon keeps in its state directory but the journal:
    /// no output (metrics, a graph) may be renamed over one of them.
    package static let stateFileNames = [fileName, fileName + "-wal", fileName + "-shm", "ifmeterd.lock", "ifmeterd.pid"]
    /// `stateFileNames` in `directory`.
    package static func stateFiles(in directory: String) -> [String] { stateFileNames.map { directory + "/" + $0 } }
    /// Owner and group only. Any process that can open the store can hold
    /// a read transaction, and one held open keeps the WAL from ever being
    /// checkpointed back: it grows for as long as the daemon commits
    /// (README 'Security'). Readers are the owner and the group's members.
    package static let fileMode: mode_t = 0o640
    package static let schemaVersion: Int64 = 1
    /// The label stored on every row.
    package static let basis = "estimate: kernel interface counters"

    package let path: String
    private(set) var database: SQLiteDatabase
    private var interfaceIDs: [String: Int64] = [:]
    /// What this connection knows of two sets of rows that a commit under
    /// link churn would otherwise probe for with statements that change
    /// nothing: the open lives (an ended life's row is inserted, not looked
    /// for first, when it was never committed open) and the record of
    /// links present (a link that comes and goes between two commits has
    /// no row to delete). Read at the first write that needs them and kept
    /// as this connection writes; only a writer writes those rows (the
    /// daemon, alone on its store: `forget` leaves both alone). Measured
    /// under the bench's churn (callgrind, `ifmeter-bench meter-churn`):
    /// two of a tunnel life's four statements, 11 % of a commit's
    /// instructions.
    private var openLives: [LifeScope: Set<Int32>]?
    private var presentLinks: [Int32: String]?

    /// Throws unless `directory` holds a store file this user may read. A
    /// store it may not read is a permission problem, not "no store yet":
    /// a directory it may not enter hides the file from `access(F_OK)` too.
    package static func requireStore(in directory: String) throws(StoreError) {
        let path = directory + "/" + fileName
        if FileSystem.isReadDenied(path) {
            let group = FileSystem.groupName(of: path)
            if FileSystem.groupJoinedButNotInSession(of: path) { throw .groupNotYetInForce(path: path, group: group) }
            throw .permissionDenied(path: path, group: group)
        }
        if !FileSystem.exists(path) { throw .missing(path: path) }
    }

    /// Opens `directory/ifmeter.db`. The daemon creates it when absent; a
    /// reader (`readOnly`) never creates or changes anything. A file that is
    /// not an ifmeter store, or has a newer schema, is refused untouched.
    package init(directory: String, readOnly: Bool = false) throws(StoreError) {
        path = directory + "/" + Self.fileName
        if readOnly { try Self.requireStore(in: directory) }
        // Never written through a symbolic link: the store would be
        // created wherever it points, at whatever mode. (Not SQLite's
        // NOFOLLOW, which also refuses a state directory reached through
        // one, as /var/lib/ifmeter moved to a larger disk is.) A reader
        // follows one, as it always did. One at -wal or -shm, which SQLite
        // opens with O_NOFOLLOW, is named here: SQLite's own failure names
        // the store ("unable to open database file").
        if !readOnly, let link = [path, path + "-wal", path + "-shm"].first(where: FileSystem.isSymbolicLink) {
            throw .symbolicLink(path: link)
        }
        // Here, once, for the daemon and every command: SQLite would open a
        // FIFO and block in its first read, waiting for a writer forever,
        // and fail on a directory with an I/O error that names nothing.
        // Checked with stat, which opens nothing.
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
            // A reader cannot create the WAL index (-shm) that a stopped
            // daemon removed when it may not write the directory, or when
            // the disk is full. With no -shm there is no writer and no WAL
            // to read: reading the file as immutable is then exact. (The
            // full disk's failure leaves the -shm SQLite began, so there it
            // is the daemon's lock and an empty WAL that say so.)
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

    /// One step of a future schema upgrade: the SQL that takes a store of
    /// `version - 1` to `version`, run in one transaction with the version.
    package struct Migration: Sendable {
        package var version: Int64
        package var sql: String

        package init(version: Int64, sql: String) {
            self.version = version
            self.sql = sql
        }
    }

    /// The steps from schema 1 on; none yet (schema 1 is the first release's).
    package static let migrations: [Migration] = []

    /// Runs each step above `version`, each in its own transaction: a crash
    /// between them leaves a store of the version between, upgraded at the
    /// next start.
    package func migrate(from version: Int64, through steps: [Migration]) throws(StoreError) {
        for step in steps where step.version > version {
            try database.transaction { () throws(StoreError) in
                try database.execute(step.sql)
                try database.execute("PRAGMA user_version = \(step.version)")
            }
        }
    }

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

    /// For readers: SQL sums text or a blob as 0, and reading one gives 0,
    /// a figure that looks real; such a store is refused (the writer's
    /// `checkValues` refuses it too). One scan of each table a reader
    /// sums: measured, 29 ms for 100,000 bucket rows (8 MiB); a year of ten
    /// interfaces at the default retention is a tenth of that. Not the life
    /// table: no reader reads its counted_* columns, and under churn it
    /// holds a million rows.
    private func checkCountsAreWhole() throws(StoreError) {
        try refuseRows(countColumns.filter { $0.table != "life" }.map { table, columns in
            ValueRule(table: table, condition: columns.map { "typeof(\($0)) != 'integer'" }.joined(separator: " OR ")) {
                "\($0) \($1) rows hold a count that is not a whole number"
            }
        })
    }

    /// Refuses, untouched, a store holding values no ifmeter wrote, in one
    /// scan of each table: counters so large (or negative, or not
    /// integers) that counting on would overflow, and the times and
    /// ifindexes readers refuse where they meet them (exit 65), on which a
    /// daemon would go on committing to a store no command can show.
    private func checkValues() throws(StoreError) {
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
    private func checkHeadroom() throws(StoreError) {
        // The totals the next fold writes: each part in range may still sum
        // past it. The rows' sum is floating (it cannot overflow), exact
        // below 2^53, and compared with the room left, an exact integer
        // (the interface row is in range, checked above); beyond 2^53 the
        // fold's own exact check (`addToTotals`) still refuses the commit.
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

    /// WAL: readers never block the daemon and commits append rather than
    /// rewrite. synchronous=NORMAL: a power cut may lose the last commit,
    /// never half of one, and a lost commit is recomputed from the kernel.
    private func configureWriter() throws(StoreError) {
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = NORMAL")
        // After a reader held the WAL from being reset (it grows meanwhile),
        // the next reset truncates it back to the auto-checkpoint size: a
        // header and 1000 frames, each a page and its 24-byte header (the
        // store's page size: older stores keep the 4 KiB they began with).
        let pageSize = try database.query("PRAGMA page_size") { $0.integer(0) }.first ?? Int64(Self.pageSize)
        try database.execute("PRAGMA journal_size_limit = \(32 + 1000 * (pageSize + 24))")
        // A commit touches a few pages; SQLite's default 2 MiB page cache
        // filled up under link churn and stayed resident in the daemon.
        try database.execute("PRAGMA cache_size = -256")
        try database.execute("PRAGMA foreign_keys = ON")
    }

    /// SQLite's page for new stores. A commit writes whole pages, and a
    /// life that begins and ends touches a row or two in each of about ten
    /// tables and indexes: 1 KiB pages write a quarter of what 4 KiB did.
    static let pageSize = 1024

    static let counterColumns = Columns("rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_dropped, tx_dropped")

    /// A column list, spelt once for SQL and split for per-column checks.
    /// Split once, when made: queries build their text from it each time
    /// they run, and splitting the string anew for each cost 50,000
    /// instructions a call (callgrind, an idle daemon on 50 tuns: 14 % of
    /// its instructions in its first 320 s, most of them reading the
    /// interfaces' totals at start).
    struct Columns: CustomStringConvertible {
        let description: String
        let components: [String]
        init(_ text: String) {
            description = text
            components = text.split(separator: ",").map { $0.trimmingWhitespace() }
        }

        /// Each column written `form(column)`: `list { "b.\($0)" }` is "b.rx_bytes, b.tx_bytes, ...".
        func list(separator: String = ", ", _ form: (String) -> String) -> String { components.map(form).joined(separator: separator) }
    }

    /// The four counters of `boot_total`.
    static let byteAndPacketColumns = Columns("rx_bytes, tx_bytes, rx_packets, tx_packets")

    static let schema = """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE interface (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            class TEXT NOT NULL,
            signal TEXT NOT NULL,
            kind TEXT NOT NULL,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
            rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
            rx_errors INTEGER NOT NULL DEFAULT 0, tx_errors INTEGER NOT NULL DEFAULT 0,
            rx_dropped INTEGER NOT NULL DEFAULT 0, tx_dropped INTEGER NOT NULL DEFAULT 0,
            basis TEXT NOT NULL DEFAULT '\(basis)',
            incomplete TEXT
        );
        CREATE TABLE life (
            id INTEGER PRIMARY KEY,
            interface_id INTEGER NOT NULL REFERENCES interface(id),
            boot_id TEXT NOT NULL,
            ifindex INTEGER NOT NULL,
            name TEXT NOT NULL,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            since_boot REAL NOT NULL,
            netns INTEGER NOT NULL DEFAULT 0,
            ended INTEGER,
            end_reason TEXT,
            rx_bytes INTEGER NOT NULL, tx_bytes INTEGER NOT NULL,
            rx_packets INTEGER NOT NULL, tx_packets INTEGER NOT NULL,
            rx_errors INTEGER NOT NULL, tx_errors INTEGER NOT NULL,
            rx_dropped INTEGER NOT NULL, tx_dropped INTEGER NOT NULL,
            counted_rx_bytes INTEGER NOT NULL DEFAULT 0, counted_tx_bytes INTEGER NOT NULL DEFAULT 0,
            counted_rx_packets INTEGER NOT NULL DEFAULT 0, counted_tx_packets INTEGER NOT NULL DEFAULT 0
        );
        CREATE UNIQUE INDEX life_open ON life(boot_id, netns, ifindex) WHERE ended IS NULL;
        CREATE TABLE present_link (ifindex INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE boot_total (
            boot_id TEXT NOT NULL,
            interface_id INTEGER NOT NULL REFERENCES interface(id),
            rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
            rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
            basis TEXT NOT NULL DEFAULT '\(basis)',
            PRIMARY KEY (boot_id, interface_id)
        ) WITHOUT ROWID;
        \(bucketTable)
        \(eventTable)
        CREATE INDEX event_time ON event(time);
        \(resetCountTable)
        """

    /// The event table: the resets and ends of lives, and what each lost.
    static let eventTable = """
        CREATE TABLE event (
            id INTEGER PRIMARY KEY,
            time INTEGER NOT NULL,
            interface_id INTEGER NOT NULL REFERENCES interface(id),
            boot_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            old_ifindex INTEGER,
            new_ifindex INTEGER,
            loss TEXT NOT NULL CHECK (\(oneOf("loss", ["none", "unknown", "discarded"]))),
            discarded_rx_bytes INTEGER,
            discarded_tx_bytes INTEGER,
            detail TEXT NOT NULL,
            basis TEXT NOT NULL DEFAULT '\(basis)'
        );
        """

    /// How many resets of each reason an interface had whose rows are gone:
    /// events past `DailyDays=`, removals past `FiveMinuteHours=` (version
    /// 7). The prune adds them here as it deletes them, so that
    /// `ifmeter_resets_total` never goes down at a restart (Prometheus would
    /// read that as a counter reset and count it all again). No foreign
    /// key, as `bucket`: retirement and `forget` delete a name's rows first.
    static let resetCountTable = """
        CREATE TABLE reset_count (
            interface_id INTEGER NOT NULL,
            reason TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (interface_id, reason)
        ) WITHOUT ROWID;
        """

    /// A CHECK that `column` holds one of `values`, as comparisons joined by
    /// OR. SQLite (3.40, Debian 12's) evaluates `column IN ('a', 'b', 'c')`
    /// in a CHECK by building a temporary b-tree of the list for every row
    /// written: measured, 3.7 µs an insert against 0.8 with comparisons
    /// and 1.0 with no CHECK at all, and under link churn a tunnel life's
    /// event row cost three times its life row (callgrind, `ifmeter-bench
    /// meter-churn`). Store schema 6.
    static func oneOf(_ column: String, _ values: [String]) -> String {
        values.map { "\(column) = '\($0)'" }.joined(separator: " OR ")
    }

    /// The bucket table: reports and the prune read one granularity over a
    /// span of time, which is the key's order (version 3). Since version 5
    /// a row carries all eight counters, and a five-minute row when a
    /// commit last counted in it: until the hourly fold, it is the only
    /// place its share of the all-time totals is (`fold`).
    ///
    /// No foreign key on interface_id: with one, deleting an interface row
    /// (retirement, `forget`) scans the whole table for each row deleted,
    /// since interface_id no longer leads a key (measured on a store of 90k
    /// names: 21 s to retire 1,439 names, inside a commit the watchdog
    /// times). Both delete the name's buckets first, in one scan; an index
    /// on interface_id would instead add a page to every commit that
    /// begins a bucket.
    static let bucketTable = """
        CREATE TABLE bucket (
            interface_id INTEGER NOT NULL,
            granularity TEXT NOT NULL CHECK (\(oneOf("granularity", ["5min", "hour", "day", "month", "year"]))),
            start INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
            rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
            basis TEXT NOT NULL DEFAULT '\(basis)',
            incomplete TEXT,
            rx_errors INTEGER NOT NULL DEFAULT 0, tx_errors INTEGER NOT NULL DEFAULT 0,
            rx_dropped INTEGER NOT NULL DEFAULT 0, tx_dropped INTEGER NOT NULL DEFAULT 0,
            last_counted INTEGER,
            PRIMARY KEY (granularity, start, interface_id)
        ) WITHOUT ROWID;
        """

    /// Checkpoints and closes; nothing may use the store afterwards.
    package func close() { database.close() }

    // MARK: Reading back state for the daemon

    /// What the daemon needs before its first sample.
    package func loadState() throws(StoreError) -> StoredState {
        let lastBoot = try meta("boot_id")
        let lastNamespace = try meta("netns").flatMap { UInt64($0) } ?? 0
        let lives = try database.query("""
            SELECT boot_id, ifindex, name, since_boot, first_seen, last_seen, netns, \(Self.counterColumns) FROM life WHERE ended IS NULL
            """) { (row) throws(StoreError) in
            StoredLife(bootID: row.text(0), namespace: UInt64(bitPattern: row.integer(6)), life: TrackedLife(
                ifindex: Int32(truncatingIfNeeded: row.integer(1)), name: row.text(2), counters: Self.kernelCounters(row, from: 7),
                sinceBoot: try seconds(row, 3), firstSeen: try time(row, 4), lastSeen: try time(row, 5)))
        }
        let names = try database.query("SELECT name FROM interface") { $0.text(0) }
        var present: IfindexTable<String>?
        if try meta("presence") != nil {
            present = IfindexTable(firstOf: try presentLinkRows())
        }
        var endedIndexes: Set<Int32> = []
        if let lastBoot {
            let rows = try database.query(
                "SELECT DISTINCT ifindex FROM life WHERE ended IS NOT NULL AND boot_id = ? AND netns = ?",
                [.text(lastBoot), Self.value(lastNamespace)]) { Int32(truncatingIfNeeded: $0.integer(0)) }
            endedIndexes = Set(rows)
        }
        return StoredState(
            lastBootID: lastBoot, lastNamespace: lastNamespace, openLives: lives, knownNames: Set(names), presentLinks: present,
            endedIndexes: endedIndexes)
    }

    // MARK: Committing

    /// Writes everything pending and the baselines of the open lives given
    /// in one transaction, then prunes buckets past their retention, and
    /// ended lives and events past the longest of the fine-grained ones.
    /// `openLives` must hold every life whose counters moved since its row
    /// was written (a life left out keeps the row it has).
    ///
    /// `presence`, when given, updates the record of every link present
    /// (watched or not), which tells the next start whether a link appeared
    /// while the daemon was stopped; nil leaves the record as it is.
    package func commit(
        _ pending: PendingWrites, openLives: some Collection<TrackedLife>, bootID: String, namespace: NamespaceCookie = 0,
        presence: PresenceUpdate? = nil, at now: Int64, retention: Retention, intervals: (sample: Double, commit: Double)
    ) throws(StoreError) {
        let batch = CommitBatch(pending: pending, changedLives: Array(openLives), presence: presence)
        try commit([JournalRecord(time: now, batch: batch)], bootID: bootID, namespace: namespace, retention: retention, intervals: intervals)
    }

    /// Writes `records` in order, in one transaction, each exactly as its
    /// own commit would have. With `journalGeneration`, the transaction also
    /// records that the journal of that generation is applied
    /// (`CommitJournal`), so it is never applied again.
    /// `eventSocketDrops`: the link event socket and the drop count the
    /// daemon saw there (`EventSocketDrops`), as of this commit, for a
    /// process that takes the socket over.
    package func commit(
        _ records: [JournalRecord], bootID: String, namespace: NamespaceCookie, journalGeneration: UInt64? = nil,
        eventSocketDrops: String? = nil, retention: Retention,
        intervals: (sample: Double, commit: Double)
    ) throws(StoreError) {
        guard !records.isEmpty else { return }
        try writeTransaction { () throws(StoreError) in
            try write(
                records, bootID: bootID, namespace: namespace, journalGeneration: journalGeneration,
                eventSocketDrops: eventSocketDrops, retention: retention, intervals: intervals)
        }
    }

    private func write(
        _ records: [JournalRecord], bootID: String, namespace: NamespaceCookie, journalGeneration: UInt64?,
        eventSocketDrops: String? = nil, retention: Retention, intervals: (sample: Double, commit: Double)
    ) throws(StoreError) {
        guard let last = records.last else { return }
        // The daemon's heartbeat for readers: when it last committed, and how often it means to.
        var entries: [(key: String, value: String)] = [
            ("boot_id", bootID), ("netns", String(namespace)), ("last_commit", String(last.time)),
            ("sample_interval", String(intervals.sample)), ("commit_interval", String(intervals.commit)), ("timezone", zone),
        ]
        if let journalGeneration { entries.append(("journal_generation", String(journalGeneration))) }
        if let eventSocketDrops { entries.append(("event_socket_drops", eventSocketDrops)) }
        try writeMeta(entries)
        try write(records, bootID: bootID, namespace: namespace, pruning: retention)
    }

    /// The rows of `records`, each as its own commit (and its prune, with
    /// `pruning`) would have left them. Their deltas are summed and written
    /// once per interface and slot, before any prune that would change
    /// something: buckets, boot totals and all-time totals are sums, so the
    /// rows are the same, and a journal of tunnel lives (mostly the same
    /// few names) costs one row update per name rather than one per life.
    /// The records between two prunes are written as one `CommitSegment`,
    /// which leaves out the writes a later record of it overwrites.
    private func write(_ records: [JournalRecord], bootID: String, namespace: NamespaceCookie, pruning retention: Retention? = nil) throws(StoreError) {
        var deltas: [PendingWrites.Slot: LinkCounters] = [:]
        var lastCounted: [String: Int64] = [:]
        var start = records.startIndex
        while start < records.endIndex {
            // The records up to the first after which a prune is due: a
            // prune reads what the records before it wrote, so none of its
            // rows may be left for a later record to write.
            var end = start
            while end < records.endIndex - 1 && !(retention.map { pruneIsDue($0, at: records[end].time) } ?? false) { end += 1 }
            let segment = CommitSegment(records[start...end], bootID: bootID, namespace: namespace)
            for (offset, record) in segment.records.enumerated() {
                try write(segment, record: offset, bootID: bootID, namespace: namespace)
                for (slot, counters) in record.batch.pending.deltas {
                    // A name new to the store is first seen in its own record.
                    _ = try interfaceID(slot.name, info: nil, at: record.time)
                    deltas[slot, default: .zero] += counters
                    lastCounted[slot.name] = max(lastCounted[slot.name] ?? record.time, record.time)
                }
            }
            try writeLastSeen(segment)
            // A prune (retirement among it) sees what a commit per record
            // would have shown it: every delta of the records so far.
            if let retention, pruneIsDue(retention, at: records[end].time) {
                try writeDeltas(deltas, lastCounted: lastCounted, bootID: bootID)
                deltas.removeAll()
                lastCounted.removeAll()
                try prune(retention, at: records[end].time)
            }
            start = end + 1
        }
        try writeDeltas(deltas, lastCounted: lastCounted, bootID: bootID)
    }

    /// One commit's rows but its deltas (`write(_:bootID:namespace:)`),
    /// less those a later record of its segment overwrites.
    private func write(_ segment: CommitSegment, record offset: Int, bootID: String, namespace: NamespaceCookie) throws(StoreError) {
        let record = segment.records[offset]
        let pending = record.batch.pending
        for (name, info) in pending.interfaces where !segment.repeatsInterface(name, of: offset) {
            _ = try interfaceID(name, info: info, at: record.time)
        }
        for (time, event) in pending.events { try writeEvent(event, at: time, bootID: bootID) }
        for (ended, time) in pending.endedLives {
            try writeLife(ended.life, bootID: ended.bootID, namespace: ended.namespace, ended: (time, ended.end.rawValue))
        }
        for (index, life) in record.batch.changedLives.enumerated() {
            // Its insert may be the first write of its name's row (last_seen
            // then): only a name this connection has written can wait.
            guard !segment.overwritesLife(index, of: offset) || interfaceIDs[life.name] == nil else { continue }
            try writeLife(life, bootID: bootID, namespace: namespace, ended: nil)
        }
        if let presence = record.batch.presence { try writePresence(presence, keeping: { segment.keepsPresence(of: $0, from: offset) }) }
    }

    /// The last_seen of names whose repeated interface record was left out
    /// (`CommitSegment.repeatsInterface`): their later records' time.
    private func writeLastSeen(_ segment: CommitSegment) throws(StoreError) {
        for (name, time) in segment.lastSeenOfRepeatedInterfaces {
            try database.run("UPDATE interface SET last_seen = ? WHERE id = ?", [.integer(time), .integer(try interfaceID(name, info: nil, at: time))])
        }
    }

    /// A write transaction; after a rollback, what this connection cached
    /// of the rows it wrote is forgotten.
    private func writeTransaction(_ body: () throws(StoreError) -> Void) throws(StoreError) {
        let committedFold = foldedThrough
        do {
            try database.transaction(body)
        } catch {
            forgetWhatWasWritten()
            foldedThrough = committedFold
            throw error
        }
    }

    /// What this connection cached of the rows it wrote, for a database that
    /// no longer holds them (a rollback, a fresh in-memory copy).
    private func forgetWhatWasWritten() {
        interfaceIDs.removeAll()
        openLives = nil
        presentLinks = nil
        writtenMeta.removeAll()
        lastBucketPrune = nil
        lastDetailPrune = nil
    }

    // MARK: The journal

    /// The store's identity, which the header of its journal names, so a
    /// journal is only ever applied to the store it was written for. The
    /// first writer that needs it draws it.
    package func journalIdentity() throws(StoreError) -> UInt64 {
        if let stored = try meta("store_id").flatMap({ UInt64($0) }) { return stored }
        let drawn = UInt64.random(in: 1 ... .max)
        try database.run("INSERT INTO meta(key, value) VALUES ('store_id', ?) ON CONFLICT(key) DO NOTHING", [.text(String(drawn))])
        return try meta("store_id").flatMap({ UInt64($0) }) ?? drawn
    }

    /// Where the daemon journals (its runtime directory or the state
    /// directory), so that a reader finds it.
    package func recordJournalPath(_ path: String) throws(StoreError) {
        guard try meta("journal_path") != path else { return }
        try writeTransaction { () throws(StoreError) in try writeMeta([("journal_path", path)]) }
    }

    /// The link event socket the daemon read and the drop count it saw
    /// there as of its last commit (`EventSocketDrops`), if recorded.
    package func eventSocketDrops() throws(StoreError) -> String? { try meta("event_socket_drops") }

    /// Where the daemon journals: where it last recorded, else beside the store.
    package func journalPath() throws(StoreError) -> String {
        try meta("journal_path") ?? FileSystem.directoryName(path) + "/" + Configuration.journalName
    }

    /// The last journal generation this store applied (0: none).
    package func appliedJournalGeneration() throws(StoreError) -> UInt64 {
        try meta("journal_generation").flatMap { UInt64($0) } ?? 0
    }

    /// What applying a journal found.
    package enum JournalApplication: Equatable, Sendable {
        /// No journal, or nothing in it the store lacks.
        case nothing
        /// A journal of another store (its identity differs).
        case foreign
        /// These many records applied.
        case applied(Int)
        /// Not applied: the store would hold values out of range after it.
        case refused(String)
    }

    /// Applies what `contents` holds that the store does not: the records of
    /// a generation after the one it last applied (the daemon stopped before
    /// its next commit). `apply` and the daemon's own commits are the same
    /// transaction, so the result is the store that commit would have left.
    package func apply(_ contents: JournalContents, retention: Retention, intervals: (sample: Double, commit: Double)) throws(StoreError) -> JournalApplication {
        guard contents.header.storeID == (try journalIdentity()) else { return .foreign }
        guard contents.header.generation > (try appliedJournalGeneration()), !contents.records.isEmpty else { return .nothing }
        do {
            try writeTransaction { () throws(StoreError) in
                try write(
                    contents.records, bootID: contents.header.bootID, namespace: contents.header.namespace,
                    journalGeneration: contents.header.generation, retention: retention, intervals: intervals)
                // A journal is a file others could have written: the store
                // it leaves must be one the daemon goes on counting into.
                try checkValues()
                try checkHeadroom()
            }
        } catch .invalidValue(_, let detail) {
            return .refused(detail)
        }
        return .applied(contents.records.count)
    }

    /// What `includeJournal` found.
    package struct JournalInclusion: Equatable, Sendable {
        /// The records applied (0: the store alone is complete).
        package var applied = 0
        /// Why the journal could not be read, when it could not.
        package var unreadable: String?
        /// Where reading it stopped at damage, when it did: the records
        /// after that are not shown (the daemon keeps the file aside).
        package var damaged: String?
    }

    /// For readers: the store as the daemon's journal completes it. When
    /// the journal holds the records of the generation after the one the
    /// store applied, they are applied to a private copy in memory, which
    /// every query then reads; the files are never written.
    ///
    /// The copy is taken before the journal is read: a daemon that commits
    /// in between moves the journal past the copy's next generation, and
    /// the copy is taken again, so a record is never counted twice.
    @discardableResult
    package func includeJournal(at path: String) throws(StoreError) -> JournalInclusion {
        let original = database
        func restoreOriginal() { database = original }
        for _ in 0..<3 {
            let preview: JournalContents?
            do {
                preview = try CommitJournal.read(path)
            } catch {
                return JournalInclusion(unreadable: error.description)
            }
            guard let preview, preview.header.storeID == (try meta("store_id")).flatMap({ UInt64($0) }) else { return JournalInclusion() }
            // This store's journal, read up to damage: said, whatever the records before it.
            let damaged: String? = if case .damaged(let why) = preview.ending { "\(path): \(why)" } else { nil }
            guard !preview.records.isEmpty else { return JournalInclusion(damaged: damaged) }
            do {
                database = try SQLiteDatabase(memoryCopyOf: original)
            } catch {
                throw .sqlite(error)
            }
            // What an earlier copy wrote is not in this one.
            forgetWhatWasWritten()
            // The copy's, which a fold since the open moved.
            try loadFoldedThrough()
            let applied = try appliedJournalGeneration()
            guard let contents = try? CommitJournal.read(path), contents.header.storeID == preview.header.storeID,
                  contents.header.generation > applied else {
                restoreOriginal()
                return JournalInclusion()
            }
            guard contents.header.generation == applied + 1 else {
                restoreOriginal()
                continue
            }
            try writeTransaction { () throws(StoreError) in
                // Each record is a commit: rates run from the last one.
                let last = contents.records.map(\.time).max() ?? 0
                try writeMeta([("journal_generation", String(contents.header.generation)), ("last_commit", String(last))])
                try write(contents.records, bootID: contents.header.bootID, namespace: contents.header.namespace)
            }
            return JournalInclusion(applied: contents.records.count, damaged: damaged)
        }
        restoreOriginal()
        return JournalInclusion()
    }

    /// The zone the buckets are cut in: glibc reads it once, at the first
    /// local time, and keeps it for the life of the process; so does this.
    private lazy var zone = LocalZone.current()

    /// The meta rows this connection wrote, so a commit rewrites only the
    /// ones whose value changed (mostly `last_commit`).
    private var writtenMeta: [String: String] = [:]

    private func writeMeta(_ entries: [(key: String, value: String)]) throws(StoreError) {
        for (key, value) in entries where writtenMeta[key] != value {
            try database.run(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.text(key), .text(value)])
            writtenMeta[key] = value
        }
    }

    /// Only what changed: a link that comes and goes beside many others
    /// rewrites one row, not the whole record. `keeping`: whether the row
    /// of an ifindex is still this record's to write (a later record of the
    /// same commit may write it instead; `CommitSegment`).
    private func writePresence(_ presence: PresenceUpdate, keeping: (Int32?) -> Bool) throws(StoreError) {
        if presence.replacesAll && keeping(nil) {
            try database.run("DELETE FROM present_link")
            try database.run("INSERT INTO meta(key, value) VALUES ('presence', 'recorded') ON CONFLICT(key) DO NOTHING")
            presentLinks = [:]
        }
        if presentLinks == nil {
            var rows: [Int32: String] = [:]
            for (ifindex, name) in try presentLinkRows() { rows[ifindex] = name }
            presentLinks = rows
        }
        for ifindex in presence.removed where keeping(ifindex) && presentLinks?[ifindex] != nil {
            try database.run("DELETE FROM present_link WHERE ifindex = ?", [.integer(Int64(ifindex))])
            presentLinks?[ifindex] = nil
        }
        for (ifindex, name) in presence.added where keeping(ifindex) && presentLinks?[ifindex] != name {
            try database.run(
                "INSERT INTO present_link(ifindex, name) VALUES (?, ?) ON CONFLICT(ifindex) DO UPDATE SET name = excluded.name",
                [.integer(Int64(ifindex)), .text(name)])
            presentLinks?[ifindex] = name
        }
    }

    /// The record of links present, as stored: the daemon's start and
    /// `writePresence` read it.
    private func presentLinkRows() throws(StoreError) -> [(Int32, String)] {
        try database.query("SELECT ifindex, name FROM present_link") { (Int32(truncatingIfNeeded: $0.integer(0)), $0.text(1)) }
    }

    private func interfaceID(_ name: String, info: InterfaceInfo?, at now: Int64) throws(StoreError) -> Int64 {
        if let info {
            let id = try database.query("""
                INSERT INTO interface(name, class, signal, kind, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET class = excluded.class, signal = excluded.signal, kind = excluded.kind, last_seen = excluded.last_seen
                RETURNING id
                """, [.text(name), .text(info.interfaceClass.rawValue), .text(info.signal), .text(info.kind), .integer(now), .integer(now)]) { $0.integer(0) }.first!
            interfaceIDs[name] = id
            return id
        }
        if let cached = interfaceIDs[name] { return cached }
        let id = try database.query("""
            INSERT INTO interface(name, class, signal, kind, first_seen, last_seen) VALUES (?, 'other', 'unknown', '', ?, ?)
            ON CONFLICT(name) DO UPDATE SET last_seen = excluded.last_seen RETURNING id
            """, [.text(name), .integer(now), .integer(now)]) { $0.integer(0) }.first!
        interfaceIDs[name] = id
        return id
    }

    /// `lastCounted`: per name, the time of the last commit that counted it
    /// (its last_seen; a name missing there is dated by its slot).
    private func writeDeltas(_ deltas: [PendingWrites.Slot: LinkCounters], lastCounted: [String: Int64], bootID: String) throws(StoreError) {
        var totals: [String: (counters: LinkCounters, time: Int64)] = [:]
        var folded: [String: (counters: LinkCounters, time: Int64)] = [:]
        for (slot, counters) in deltas {
            let now = lastCounted[slot.name] ?? slot.start
            totals[slot.name, default: (.zero, now)].counters += counters
            let id = try interfaceID(slot.name, info: nil, at: now)
            if slot.start >= foldedThrough {
                // The all-time totals take it at the next fold.
                try add(counters, countedAt: now, toBucket: .fiveMinutes, startingAt: slot.start, of: id)
                continue
            }
            // A slot already folded (the clock stepped back, or a journal
            // from before the fold) goes into every granularity and the
            // all-time totals at once.
            for granularity in Granularity.allCases {
                try add(counters, countedAt: now, toBucket: granularity, startingAt: TimeBuckets.start(of: granularity, containing: slot.start), of: id)
            }
            folded[slot.name, default: (.zero, now)].counters += counters
        }
        for (name, (counters, now)) in folded {
            try addToTotals(counters, countedAt: now, of: try interfaceID(name, info: nil, at: now))
        }
        for (name, (counters, now)) in totals {
            // What this boot counted, so "since boot" always agrees with the
            // all-time totals, whatever the lives and names did meanwhile.
            try database.run("""
                INSERT INTO boot_total(boot_id, interface_id, rx_bytes, tx_bytes, rx_packets, tx_packets) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(boot_id, interface_id) DO UPDATE SET
                  rx_bytes = rx_bytes + excluded.rx_bytes, tx_bytes = tx_bytes + excluded.tx_bytes,
                  rx_packets = rx_packets + excluded.rx_packets, tx_packets = tx_packets + excluded.tx_packets
                """, [.text(bootID), .integer(try interfaceID(name, info: nil, at: now))]
                + [counters.rxBytes, counters.txBytes, counters.rxPackets, counters.txPackets].map(Self.value))
        }
    }

    /// Adds to an interface's all-time totals, and moves its last_seen up
    /// to `time`: a name counted under a life begun with another name (a
    /// rename) has no open life of its own, and retirement must see that it
    /// is still counted. A sum past the headroom is refused (`add`).
    private func addToTotals(_ counters: LinkCounters, countedAt time: Int64?, of id: Int64) throws(StoreError) {
        var fits = counters.fields.allSatisfy { $0 <= UInt64(Self.counterLimit) }
        if fits {
            // No row: a bucket row whose interface row is gone (a hand
            // edit), whose bytes have no totals to go to.
            fits = try database.query(Self.addToTotals, counters.fields.map(Self.value) + [time.map { .integer($0) } ?? .null, .integer(id)]) { $0.integer(0) }
                .allSatisfy { $0 == 1 }
        }
        guard fits else {
            throw .invalidValue(path: path, detail: "the all-time totals of interface row \(id) would pass 2^62; nothing was written")
        }
    }

    private static let addToTotals = """
        UPDATE interface SET \(counterColumns.list { "\($0) = \($0) + ?" }), last_seen = max(last_seen, coalesce(?, last_seen))
        WHERE id = ?
        RETURNING \(withinHeadroom(counterColumns))
        """

    /// A RETURNING expression: 1 when every column is an integer the writer can go on adding to.
    private static func withinHeadroom(_ columns: Columns) -> String {
        columns.list(separator: " AND ") { "typeof(\($0)) = 'integer' AND \($0) <= \(counterLimit)" }
    }

    private func writeEvent(_ event: ResetEvent, at time: Int64, bootID: String) throws(StoreError) {
        let id = try interfaceID(event.name, info: nil, at: time)
        var discarded: [SQLiteValue] = [.null, .null]
        if case .discarded(let rx, let tx) = event.loss { discarded = [Self.value(rx), Self.value(tx)] }
        try database.run("""
            INSERT INTO event(time, interface_id, boot_id, reason, old_ifindex, new_ifindex, loss, discarded_rx_bytes, discarded_tx_bytes, detail)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.integer(time), .integer(id), .text(bootID), .text(event.reason.rawValue),
                  event.oldIfindex.map { .integer(Int64($0)) } ?? .null, event.newIfindex.map { .integer(Int64($0)) } ?? .null,
                  .text(event.loss.name)] + discarded + [.text(event.detail)])
        guard event.loss != .none else { return }
        // The totals and the buckets of that moment may miss traffic: say why on the rows.
        let why = "\(event.reason.rawValue) at \(time): \(event.detail)"
        try database.run("UPDATE interface SET incomplete = ? WHERE id = ?", [.text(why), .integer(id)])
        for granularity in Granularity.allCases {
            try database.run("""
                INSERT INTO bucket(interface_id, granularity, start, incomplete) VALUES (?, ?, ?, ?)
                ON CONFLICT(granularity, start, interface_id) DO UPDATE SET incomplete = excluded.incomplete
                """, [.integer(id), .text(granularity.rawValue), .integer(TimeBuckets.start(of: granularity, containing: time)), .text(why)])
        }
    }

    /// Updates the open row of a life (boot id, namespace, ifindex), or
    /// inserts it when it was never committed open (a life shorter than the
    /// commit interval).
    private func writeLife(_ life: TrackedLife, bootID: String, namespace: NamespaceCookie, ended: (time: Int64, reason: String)?) throws(StoreError) {
        let counters = life.counters.fields.map(Self.value)
        let end: [SQLiteValue] = ended.map { [.integer($0.time), .text($0.reason)] } ?? [.null, .null]
        let identity: [SQLiteValue] = [.text(bootID), Self.value(namespace), .integer(Int64(life.ifindex))]
        let scope = LifeScope(bootID: bootID, namespace: namespace)
        if try openLifeRows()[scope]?.contains(life.ifindex) == true {
            let updated = try database.run(
                ended == nil ? Self.updateOpenLife : Self.updateEndedLife,
                [.text(life.name), .integer(life.lastSeen), .real(life.sinceBoot)] + (ended == nil ? [] : end) + counters + identity)
            if ended != nil { openLives?[scope]?.remove(life.ifindex) }
            if updated > 0 { return }
        }
        try database.run(Self.insertLife, [.integer(try interfaceID(life.name, info: nil, at: life.lastSeen))] + identity + [.text(life.name),
                  .integer(life.firstSeen), .integer(life.lastSeen), .real(life.sinceBoot)] + end + counters)
        if ended == nil { openLives?[scope, default: []].insert(life.ifindex) }
    }

    /// Where a life's row is unique while it is open, with its ifindex.
    private struct LifeScope: Hashable {
        var bootID: String
        var namespace: NamespaceCookie
    }

    /// The ifindexes of the open life rows, read at the first life this
    /// connection writes and kept as it writes them (`openLives`).
    private func openLifeRows() throws(StoreError) -> [LifeScope: Set<Int32>] {
        if let openLives { return openLives }
        var rows: [LifeScope: Set<Int32>] = [:]
        for (scope, ifindex) in try database.query("SELECT boot_id, netns, ifindex FROM life WHERE ended IS NULL", row: { row in
            (LifeScope(bootID: row.text(0), namespace: UInt64(bitPattern: row.integer(1))), Int32(truncatingIfNeeded: row.integer(2)))
        }) {
            rows[scope, default: []].insert(ifindex)
        }
        openLives = rows
        return rows
    }

    // Spelt once: a commit under link churn writes thousands of lives, and
    // each statement is found by its text.
    private static func updateLife(ending: Bool) -> String {
        // An open life's row is updated without naming `ended`: setting it,
        // even to NULL again, rewrites the row's entry in the partial index
        // life_open, one more page in every commit.
        """
        UPDATE life SET name = ?, last_seen = ?, since_boot = ?, \(ending ? "ended = ?, end_reason = ?," : "")
          rx_bytes = ?, tx_bytes = ?, rx_packets = ?, tx_packets = ?, rx_errors = ?, tx_errors = ?, rx_dropped = ?, tx_dropped = ?
        WHERE boot_id = ? AND netns = ? AND ifindex = ? AND ended IS NULL
        """
    }
    private static let updateOpenLife = updateLife(ending: false)
    private static let updateEndedLife = updateLife(ending: true)
    private static let insertLife = """
        INSERT INTO life(interface_id, boot_id, netns, ifindex, name, first_seen, last_seen, since_boot, ended, end_reason, \(counterColumns))
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    private func prune(_ retention: Retention, at now: Int64) throws(StoreError) {
        let limits: [(Granularity, Int)] = [
            (.fiveMinutes, retention.fiveMinuteHours * 12), (.hour, retention.hourlyDays * 24), (.day, retention.dailyDays),
            (.month, retention.monthlyMonths), (.year, retention.yearlyYears),
        ]
        // Before any bucket goes: a five-minute row leaves its retention
        // long after its hour is folded, and a coarse row made by a late
        // fold must meet its own retention.
        try fold(at: now)
        // Every bucket boundary, in any zone, is a five-minute boundary: a
        // bucket can only fall out of its retention when a new slot begins.
        if bucketPruneIsDue(retention, at: now) {
            for (granularity, count) in limits where count > 0 {
                try database.run("DELETE FROM bucket WHERE granularity = ? AND start < ?",
                                 [.text(granularity.rawValue), .integer(TimeBuckets.start(of: granularity, count, before: now))])
            }
            lastBucketPrune = (TimeBuckets.start(of: .fiveMinutes, containing: now), retention)
        }
        // Ended lives and reset events would otherwise grow with every link
        // that ever came and went (a VPN a minute is 500,000 lives a year).
        // Ended lives are read by no report (their counts are in the totals
        // and buckets): they go with the five-minute buckets they explain.
        // The reset log goes with the daily buckets. A retention of 0
        // (forever) keeps them forever. At most once an hour: the life table
        // has no index on `ended`.
        guard detailPruneIsDue(at: now) else { return }
        lastDetailPrune = now
        // Before ended lives go: how long each name has been gone.
        try notePresenceFromLives()
        // Each reset counted on before its row goes (`resetCountTable`).
        if retention.fiveMinuteHours > 0 {
            let cutoff = now - Int64(retention.fiveMinuteHours) * 3600
            try database.run("DELETE FROM life WHERE ended IS NOT NULL AND ended < ?", [.integer(cutoff)])
        }
        if retention.dailyDays > 0 {
            let cutoff = now - Int64(retention.dailyDays) * 86400
            try addToResetCounts("SELECT interface_id, reason, count(*) FROM event WHERE time < ?1 GROUP BY interface_id, reason", cutoff)
            try database.run("DELETE FROM event WHERE time < ?", [.integer(cutoff)])
        }
        // Names themselves (Retirement.swift), once their events are gone.
        try pruneNamesAndBoots(retention, at: now)
    }

    /// Adds the (interface id, reason, count) rows of `query` to `reset_count`.
    private func addToResetCounts(_ query: String, _ cutoff: Int64) throws(StoreError) {
        try database.run("""
            INSERT INTO reset_count(interface_id, reason, count) \(query)
            ON CONFLICT(interface_id, reason) DO UPDATE SET count = count + excluded.count
            """, [.integer(cutoff)])
    }

    private var lastDetailPrune: Int64?
    private var lastBucketPrune: (slot: Int64, retention: Retention)?

    private func bucketPruneIsDue(_ retention: Retention, at now: Int64) -> Bool {
        lastBucketPrune?.slot != TimeBuckets.start(of: .fiveMinutes, containing: now) || lastBucketPrune?.retention != retention
    }

    private func detailPruneIsDue(at now: Int64) -> Bool {
        guard let last = lastDetailPrune, now >= last else { return true }
        return now - last >= 3600
    }

    /// Whether `prune` would change anything at `now`.
    private func pruneIsDue(_ retention: Retention, at now: Int64) -> Bool {
        foldIsDue(at: now) || bucketPruneIsDue(retention, at: now) || detailPruneIsDue(at: now)
    }

    /// Adds to a bucket row. A sum past the writer's headroom (a store
    /// edited by hand, summed by a fold) is refused, rolling the commit
    /// back: written, it would turn negative or into a float, a store every
    /// reader then refuses.
    private func add(
        _ counters: LinkCounters, countedAt time: Int64?, toBucket granularity: Granularity, startingAt start: Int64, of id: Int64
    ) throws(StoreError) {
        // Only a five-minute row's time is read (it dates the totals it
        // holds until the fold); on coarse rows it would only grow the store.
        let counted: SQLiteValue = granularity == .fiveMinutes ? time.map { .integer($0) } ?? .null : .null
        var fits = counters.fields.allSatisfy { $0 <= UInt64(Self.counterLimit) }
        if fits {
            fits = try database.query(
                Self.addToBucket, [.integer(id), .text(granularity.rawValue), .integer(start)] + counters.fields.map(Self.value) + [counted]
            ) { $0.integer(0) } == [1]
        }
        guard fits else {
            throw .invalidValue(path: path, detail: "the \(granularity.rawValue) bucket at \(start) of interface row \(id) would pass 2^62; nothing was written")
        }
    }

    private static let addToBucket = """
        INSERT INTO bucket(interface_id, granularity, start, \(counterColumns), last_counted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(granularity, start, interface_id) DO UPDATE SET
          \(counterColumns.list { "\($0) = \($0) + excluded.\($0)" }),
          last_counted = coalesce(max(last_counted, excluded.last_counted), last_counted, excluded.last_counted)
        RETURNING \(withinHeadroom(counterColumns))
        """

    // MARK: Folding

    // A commit writes each interface's five-minute row only; once an hour
    // the rows of the hours now past are added into the hour, day, month
    // and year rows and into the all-time totals (`interface`), and
    // `folded_through` (meta) moves past them in the same transaction.
    // Readers add the rows not folded yet (`buckets`, `interfaces`).
    // Measured (50 tuns, 5 carrying traffic): every commit wrote its rows
    // in all five granularities, 19 of its 27 WAL pages, because the day,
    // month and year rows of all 50 interfaces share a start and the 5 fall
    // on different pages of it; folded, a commit writes one or two. The
    // totals were 5 of the 11 pages left: the 5 interface rows lay on
    // different pages (ids follow the order names were first seen), where
    // their five-minute rows of one slot are neighbours. Folded too
    // (version 5), a commit writes 7.

    /// Five-minute rows that start before this are in the coarser rows too.
    private var foldedThrough: Int64 = 0

    /// Checked like every other number a writer builds on (a reader
    /// writes too, to its in-memory copy: `include(journalAt:)`).
    private func loadFoldedThrough() throws(StoreError) {
        let value = try meta("folded_through")
        guard let through = value.flatMap({ Int64($0) }), Self.timeRange.contains(through) else {
            throw .invalidValue(path: path, detail: "meta folded_through is \(value.map { "'\($0.escaping(EscapeTable.oneLine))'" } ?? "missing"), not a time")
        }
        foldedThrough = through
    }

    /// Where a fold at `now` stops: the start of its hour (on a five-minute
    /// boundary, as every slot is).
    private func foldPoint(at now: Int64) -> Int64 {
        TimeBuckets.start(of: .fiveMinutes, containing: TimeBuckets.start(of: .hour, containing: now))
    }

    private func foldIsDue(at now: Int64) -> Bool { foldPoint(at: now) > foldedThrough }

    private func fold(at now: Int64) throws(StoreError) {
        let through = foldPoint(at: now)
        guard through > foldedThrough else { return }
        try fold(through: through, intoTotals: true)
    }

    /// Folds the five-minute rows in [foldedThrough, through) into the
    /// coarse rows and, `intoTotals`, into the all-time totals.
    private func fold(through: Int64, intoTotals: Bool) throws(StoreError) {
        let rows = try database.query("""
            SELECT interface_id, start, last_counted, \(Self.counterColumns) FROM bucket
            WHERE granularity = '5min' AND start >= ? AND start < ?
            """, [.integer(foldedThrough), .integer(through)]) { (row) throws(StoreError) in
            (id: row.integer(0), start: try time(row, 1), counted: try row.isNull(2) ? nil : time(row, 2), counters: try counters(row, from: 3))
        }
        struct Key: Hashable { var granularity: Granularity, start: Int64, id: Int64 }
        var sums: [Key: LinkCounters] = [:]
        var totals: [Int64: CountedSum] = [:]
        for row in rows {
            for granularity in Granularity.allCases where granularity != .fiveMinutes {
                sums[Key(granularity: granularity, start: TimeBuckets.start(of: granularity, containing: row.start), id: row.id), default: .zero] += row.counters
            }
            // A row with no time counted nothing (a reset event's mark): it
            // leaves last_seen where it is, as readers show it until now.
            totals[row.id, default: CountedSum()].add(row.counters, countedAt: row.counted)
        }
        for (key, counters) in sums { try add(counters, countedAt: nil, toBucket: key.granularity, startingAt: key.start, of: key.id) }
        if intoTotals {
            for (id, total) in totals { try addToTotals(total.counters, countedAt: total.counted, of: id) }
        }
        try writeMeta([("folded_through", String(through))])
        foldedThrough = through
    }

    /// Rows summed, and the latest time a commit counted in any of them.
    private struct CountedSum {
        var counters = LinkCounters.zero
        var counted: Int64?

        mutating func add(_ more: LinkCounters, countedAt time: Int64?) {
            counters += more
            if let time { counted = max(counted ?? time, time) }
        }
    }

    /// Drops the cached row ids: after rows are retired, a name seen again
    /// must get a new row, never the id it had.
    func forgetInterfaceIDs() { interfaceIDs.removeAll() }

    /// Removes an interface and every row that refers to it, in one
    /// transaction (`ifmeter forget`, with no daemon running). Returns
    /// whether the name is still counted: a link present at the last commit
    /// keeps its open life (the kernel counters the next start compares
    /// with, or the traffic in between is lost) and so a row of its own,
    /// with every total back at zero.
    @discardableResult
    package func forget(_ shownName: String) throws(StoreError) -> Bool {
        var stillCounted = false
        guard let name = try storedName(shownAs: shownName) else { return false }
        try database.transaction { () throws(StoreError) in
            guard let id = try database.query("SELECT id FROM interface WHERE name = ?", [.text(name)], row: { $0.integer(0) }).first else { return }
            // A life begun under this name and renamed since is the renamed
            // link's: it moves to that name's row (made like this one if no
            // commit made it yet) and goes on. Not from an aggregate: its
            // lives (ended, kept by FiveMinuteHours=) are the retired names',
            // which would come back as rows.
            if !InterfaceName.isRetired(name) {
                try database.run("""
                    INSERT INTO interface(name, class, signal, kind, first_seen, last_seen)
                      SELECT DISTINCT l.name, i.class, i.signal, i.kind, i.last_seen, i.last_seen
                      FROM life l JOIN interface i ON i.id = l.interface_id WHERE l.interface_id = ? AND l.name != i.name
                    ON CONFLICT(name) DO NOTHING
                    """, [.integer(id)])
                try database.run("""
                    UPDATE life SET interface_id = (SELECT n.id FROM interface n WHERE n.name = life.name)
                    WHERE interface_id = ? AND name != ?
                    """, [.integer(id), .text(name)])
            }
            for table in ["bucket", "event", "boot_total", "reset_count"] {
                try database.run("DELETE FROM \(table) WHERE interface_id = ?", [.integer(id)])
            }
            try database.run("DELETE FROM life WHERE interface_id = ? AND ended IS NOT NULL", [.integer(id)])
            // Or renamed to this name: its life is the old name's row, and goes on.
            stillCounted = try database.query(
                "SELECT count(*) FROM life WHERE interface_id = ? OR (name = ? AND ended IS NULL)", [.integer(id), .text(name)], row: { $0.integer(0) }
            ).first ?? 0 > 0
            if stillCounted {
                try database.run("""
                    UPDATE interface SET \(Self.counterColumns.list { "\($0) = 0" }), incomplete = NULL, first_seen = last_seen WHERE id = ?
                    """, [.integer(id)])
            } else {
                try database.run("DELETE FROM interface WHERE id = ?", [.integer(id)])
            }
        }
        interfaceIDs[name] = nil
        return stillCounted
    }

    /// The name a row holds that readers show as `name` (`interfaceName`):
    /// the same, but for a row no daemon wrote, which they show encoded.
    private func storedName(shownAs name: String) throws(StoreError) -> String? {
        if !(try database.query("SELECT 1 FROM interface WHERE name = ?", [.text(name)]) { $0.integer(0) }).isEmpty { return name }
        return try database.query("SELECT name FROM interface") { $0.text(0) }.first { InterfaceName.fromUser($0) == name }
    }

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
