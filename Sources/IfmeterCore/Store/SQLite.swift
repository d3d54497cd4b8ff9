// The one Swift file that wraps SQLite's C API. Above it: Swift values only, and
// every failure a StoreError carrying SQLite's own code and message.
import CSQLite
import Glibc

/// A failed SQLite call: the extended result code, sqlite3_errmsg's text,
/// the database path and what was being done. Match on `code`, never on text.
package struct SQLiteError: Error, Sendable, CustomStringConvertible {
    package let code: Int32
    package let message: String
    package let path: String
    package let operation: String

    /// The primary result code (the extended code's low byte).
    package var primaryCode: Int32 { code & 0xff }
    package var isFull: Bool { primaryCode == SQLITE_FULL }
    package var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    package var isReadOnly: Bool { primaryCode == SQLITE_READONLY }
    package var isCannotOpen: Bool { primaryCode == SQLITE_CANTOPEN }
    package var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    package var isIOError: Bool { primaryCode == SQLITE_IOERR }
    /// No room for the WAL index (`-shm`): a full file system.
    package var isOutOfRoomForWALIndex: Bool {
        isFull || [Self.shmOpen, Self.shmSize, Self.shmMap].contains(code)
    }

    // Extended codes sqlite3.h defines as expressions, which Swift does not import.
    static let shmOpen = SQLITE_IOERR | 18 << 8
    static let shmSize = SQLITE_IOERR | 19 << 8
    static let shmMap = SQLITE_IOERR | 21 << 8
    /// A statement the schema does not fit (no such table or column...).
    package var isSQLError: Bool { primaryCode == SQLITE_ERROR }

    package var description: String { "\(path): \(operation): \(message) (SQLite code \(code))" }
}

/// A value bound to or read from a statement.
package enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// A connection owning its `sqlite3*` and a cache of prepared statements,
/// finalized before the connection closes. Not thread-safe: one owner.
final class SQLiteDatabase {
    let path: String
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens with extended result codes and a busy timeout. `immutable`: no locks and no WAL
    /// index. Closing does not checkpoint until `accept()`: a `-wal` left by another database
    /// must not be written over this file before its owner has looked at it.
    init(path: String, readOnly: Bool, create: Bool, immutable: Bool = false) throws(SQLiteError) {
        self.path = path
        guard Self.safeOpen == SQLITE_OK else {
            throw SQLiteError(code: Self.safeOpen, message: "SQLite's unix file system layer cannot be given a safe open", path: path, operation: "open")
        }
        var connection: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        // SQLite follows a link at the file and puts -wal and -shm beside its target: the directory
        // is resolved here, and a link left in the name (the file itself) is refused.
        var name = path
        if path != ":memory:" {
            flags |= SQLITE_OPEN_NOFOLLOW
            name = (FileSystem.resolvedPath(FileSystem.directoryName(path)) ?? FileSystem.directoryName(path)) + "/" + FileSystem.baseName(path)
        }
        if immutable {
            flags |= SQLITE_OPEN_URI
            let escaped = name.map { "?#%".contains($0) ? "%" + String($0.asciiValue!, radix: 16) : String($0) }.joined()
            name = "file:\(escaped)?immutable=1"
        }
        let status = sqlite3_open_v2(name, &connection, flags, nil)
        guard let connection else {
            throw SQLiteError(code: status, message: String(cString: sqlite3_errstr(status)), path: path, operation: "open")
        }
        guard status == SQLITE_OK else {
            let error = SQLiteError(code: sqlite3_extended_errcode(connection), message: Self.message(connection), path: path, operation: "open")
            sqlite3_close_v2(connection)
            throw error
        }
        // SQLite opens a file it may not write read-only without a word;
        // a writer would then fail at its first commit instead of here.
        if !readOnly && sqlite3_db_readonly(connection, "main") == 1 {
            sqlite3_close_v2(connection)
            throw SQLiteError(code: SQLITE_READONLY, message: "this user cannot write it (its permissions, or a read-only file system)", path: path, operation: "open")
        }
        ifm_sqlite_checkpoint_on_close(connection, 0)
        handle = connection
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
        try harden()
    }

    /// The longest value ifmeter reads or writes: its longest are a name and a detail line.
    static let valueLengthLimit: Int32 = 1 << 20
    /// What SQLite may allocate in all: a store larger than this is no ifmeter store.
    static let heapLimit: Int64 = 512 << 20

    /// Installed once, before the first open: every file SQLite opens is a regular file reached
    /// without following a link or waiting on a FIFO (`ifm_sqlite_open_file`).
    private static let safeOpen: Int32 = ifm_sqlite_install_safe_open(heapLimit)

    /// A store is data: no trigger or view of it runs, its schema is not writable through SQL, and a
    /// value longer than `valueLengthLimit` is refused (SQLITE_TOOBIG) rather than read into memory.
    private func harden() throws(SQLiteError) {
        let status = ifm_sqlite_harden(handle, Self.valueLengthLimit)
        guard status == SQLITE_OK else {
            throw SQLiteError(code: status, message: String(cString: sqlite3_errstr(status)), path: path, operation: "configure")
        }
    }

    /// The file is what its owner expected: closing may checkpoint the WAL
    /// into it and remove `-wal` and `-shm`, as SQLite does by default.
    func accept() {
        ifm_sqlite_checkpoint_on_close(handle, 1)
    }

    /// A private copy of `source` in memory (`sqlite3_backup`), taken in
    /// one read transaction: a consistent snapshot, whatever a writer does
    /// meanwhile. Errors name the source's path.
    init(memoryCopyOf source: SQLiteDatabase) throws(SQLiteError) {
        path = source.path
        var connection: OpaquePointer?
        let status = sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let connection else {
            if let connection { sqlite3_close_v2(connection) }
            throw SQLiteError(code: status, message: String(cString: sqlite3_errstr(status)), path: source.path, operation: "open a copy in memory")
        }
        handle = connection
        sqlite3_extended_result_codes(handle, 1)
        guard let backup = sqlite3_backup_init(handle, "main", source.handle, "main") else {
            let error = error("copy into memory")
            sqlite3_close_v2(handle)
            throw error
        }
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE, finished == SQLITE_OK else {
            let error = SQLiteError(
                code: stepped == SQLITE_DONE ? finished : stepped, message: String(cString: sqlite3_errmsg(handle)), path: source.path,
                operation: "copy into memory")
            sqlite3_close_v2(handle)
            throw error
        }
        try harden()
        try? execute("PRAGMA foreign_keys = ON")
    }

    /// The database as the bytes of one file (`sqlite3_serialize`), read in one transaction.
    func serialized() throws(SQLiteError) -> [UInt8] {
        var size: sqlite3_int64 = 0
        guard let buffer = sqlite3_serialize(handle, "main", &size, 0) else { throw error("serialize") }
        defer { sqlite3_free(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }

    /// A database in memory holding `bytes` (`sqlite3_deserialize`), writable, hardened as every
    /// connection is. The header is marked rollback-journal first: memory has no WAL to read.
    init(deserializing bytes: [UInt8], path: String) throws(SQLiteError) {
        self.path = path
        var connection: OpaquePointer?
        let status = sqlite3_open_v2(":memory:", &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let connection else {
            if let connection { sqlite3_close_v2(connection) }
            throw SQLiteError(code: status, message: String(cString: sqlite3_errstr(status)), path: path, operation: "open a copy in memory")
        }
        handle = connection
        sqlite3_extended_result_codes(handle, 1)
        guard let buffer = sqlite3_malloc64(sqlite3_uint64(max(bytes.count, 1)))?.assumingMemoryBound(to: UInt8.self) else {
            sqlite3_close_v2(handle)
            throw SQLiteError(code: SQLITE_NOMEM, message: "out of memory", path: path, operation: "read")
        }
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: bytes.count) }
        if bytes.count >= 20 { (buffer[18], buffer[19]) = (1, 1) }
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        let loaded = sqlite3_deserialize(handle, "main", buffer, sqlite3_int64(bytes.count), sqlite3_int64(bytes.count), flags)
        guard loaded == SQLITE_OK else {
            let error = SQLiteError(code: loaded, message: String(cString: sqlite3_errstr(loaded)), path: path, operation: "read")
            sqlite3_close_v2(handle)
            throw error
        }
        try harden()
    }

    private var isOpen = true

    deinit { close() }

    /// Finalizes the statements and closes the connection; the last writer
    /// to close an accepted file checkpoints the WAL and removes `-wal` and
    /// `-shm`.
    func close() {
        guard isOpen else { return }
        isOpen = false
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The start of `sql` on one line, for an error message: statements
    /// span lines, and every error is said in one.
    static func summary(of sql: String) -> String {
        String(sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }).joined(separator: " ").prefix(60))
    }

    func error(_ operation: String, code: Int32? = nil) -> SQLiteError {
        SQLiteError(code: code ?? sqlite3_extended_errcode(handle), message: Self.message(handle), path: path, operation: operation)
    }

    /// sqlite3_errmsg's text, except where it hides a full file system:
    /// growing the WAL index (-shm) or writing a page there fails as "disk
    /// I/O error", and only the errno SQLite kept says why.
    private static func message(_ connection: OpaquePointer) -> String {
        let text = String(cString: sqlite3_errmsg(connection))
        let isIOError = sqlite3_extended_errcode(connection) & 0xff == SQLITE_IOERR
        return isIOError && sqlite3_system_errno(connection) == ENOSPC ? "no space left on the file system (\(text))" : text
    }

    /// Runs SQL text that returns no rows (`sqlite3_exec`).
    func execute(_ sql: String) throws(StoreError) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw .sqlite(error(Self.summary(of: sql), code: status)) }
    }

    /// A prepared statement for `sql`, compiled once and reused.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        var compiled: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
        guard status == SQLITE_OK, let compiled else { throw error("prepare \(Self.summary(of: sql))", code: status) }
        let statement = SQLiteStatement(handle: compiled, database: self)
        statements[sql] = statement
        return statement
    }

    /// Rows inserted, updated or deleted since the connection opened.
    var rowsChanged: Int { Int(sqlite3_total_changes64(handle)) }

    /// Runs a statement for its effect; returns the rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(StoreError) -> Int {
        do {
            let statement = try statement(sql)
            try statement.bind(values)
            defer { statement.reset() }
            while try statement.step() {}
            return Int(sqlite3_changes(handle))
        } catch {
            throw .sqlite(error)
        }
    }

    /// Runs a query and maps each row. The mapping may refuse a value it
    /// reads (a store no ifmeter wrote), so both failures are the store's.
    func query<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteRow) throws(StoreError) -> T) throws(StoreError) -> [T] {
        let statement: SQLiteStatement
        do {
            statement = try self.statement(sql)
            try statement.bind(values)
        } catch {
            throw .sqlite(error)
        }
        defer { statement.reset() }
        var rows: [T] = []
        while true {
            let hasRow: Bool
            do { hasRow = try statement.step() } catch { throw .sqlite(error) }
            guard hasRow else { return rows }
            rows.append(try row(SQLiteRow(statement: statement)))
        }
    }

    /// Runs `body` in one write transaction (BEGIN IMMEDIATE): all of it
    /// commits or none of it does.
    /// BEGIN and COMMIT are prepared once, like every statement of a commit.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A compiled statement (`sqlite3_stmt*`), finalized in deinit.
final class SQLiteStatement {
    fileprivate let handle: OpaquePointer
    private unowned let database: SQLiteDatabase

    fileprivate init(handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    /// SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(handle, index)
            case .integer(let number): status = sqlite3_bind_int64(handle, index, number)
            case .real(let number): status = sqlite3_bind_double(handle, index, number)
            case .text(let text): status = sqlite3_bind_text(handle, index, text, -1, Self.transient)
            }
            guard status == SQLITE_OK else { throw database.error("bind", code: status) }
        }
    }

    /// Advances; true while there is a row to read.
    func step() throws(SQLiteError) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.error("step \(SQLiteDatabase.summary(of: String(cString: sqlite3_sql(handle))))")
        }
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}

/// The current row of a stepping statement.
struct SQLiteRow {
    fileprivate let statement: SQLiteStatement

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement.handle, column) }
    /// The column's name as the query spells it, for error messages.
    func name(_ column: Int32) -> String { sqlite3_column_name(statement.handle, column).map { String(cString: $0) } ?? "column \(column)" }
    func real(_ column: Int32) -> Double { sqlite3_column_double(statement.handle, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement.handle, column) == SQLITE_NULL }
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement.handle, column) else { return "" }
        return String(cString: bytes)
    }
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
    func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }
}
