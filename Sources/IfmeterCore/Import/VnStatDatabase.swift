import CSQLite
import Glibc

/// Why a vnStat database was not imported, in one line naming the file; nothing is written.
package struct VnStatImportError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package var exitCode: ExitCode

    init(_ path: String, _ problem: String, _ exitCode: ExitCode = .dataError) {
        description = "\(path): \(problem); nothing imported"
        self.exitCode = exitCode
    }
}

/// What vnStat's configuration says of its dates (`/etc/vnstat.conf`).
package struct VnStatSettings: Sendable, Hashable {
    /// Five-minute and hour dates in UTC rather than local time.
    package var useUTC = false
    /// The day months begin on; other than 1, month rows are not calendar months.
    package var monthRotate = 1
    package var monthRotateAffectsYears = false

    package init() {}

    /// `Key value` lines; a missing file is vnStat's defaults.
    package static func read(_ path: String) throws(VnStatImportError) -> VnStatSettings {
        var settings = VnStatSettings()
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readBytes(path, atMost: 1 << 20) } catch { throw VnStatImportError(path, "\(error)", .noInput) }
        for line in String(decoding: bytes ?? [], as: UTF8.self).split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, let first = words.first, !first.hasPrefix("#"), !first.hasPrefix(";") else { continue }
            let value = String(words[1].filter { $0 != "\"" })
            switch first {
            case "UseUTC": settings.useUTC = value == "1"
            case "MonthRotate": settings.monthRotate = Int(value) ?? 1
            case "MonthRotateAffectsYears": settings.monthRotateAffectsYears = value == "1"
            default: break
            }
        }
        return settings
    }
}

/// A vnStat 2.x database (schema `dbversion` 1), read whole into memory without following a link or
/// waiting on a FIFO; its tables checked before a row is read.
package enum VnStatDatabase {
    static let sizeLimit = 1 << 30
    static let tables: [(name: String, granularity: Granularity?)] = [
        ("fiveminute", .fiveMinutes), ("hour", .hour), ("day", .day), ("month", .month), ("year", .year), ("top", nil),
    ]

    package static func read(_ path: String, settings: VnStatSettings) throws(VnStatImportError) -> [VnStatInterface] {
        if FileSystem.hasData(path + "-wal") {
            throw VnStatImportError(path, "vnStat's write-ahead log beside it holds data not in the file yet; stop vnstatd (systemctl stop vnstat) and try again", .unavailable)
        }
        let bytes: [UInt8]
        do {
            guard let (fd, size) = try FileSystem.openRegularFile(path, flags: O_RDONLY, limit: sizeLimit) else {
                throw VnStatImportError(path, "no such file", .noInput)
            }
            defer { close(fd) }
            bytes = try FileSystem.readPrefix(fd, size: size, path: path)
        } catch let error as VnStatImportError {
            throw error
        } catch {
            throw VnStatImportError(path, "\(error)", .noInput)
        }
        let database: SQLiteDatabase
        do { database = try SQLiteDatabase(deserializing: bytes, path: path) } catch { throw VnStatImportError(path, "not a vnStat database (\(error))") }
        defer { database.close() }
        do {
            return try read(database, path: path, settings: settings)
        } catch let error as VnStatImportError {
            throw error
        } catch StoreError.sqlite(let error) where error.code & 0xff == SQLITE_NOTADB {
            throw VnStatImportError(path, "not a vnStat database (\(error.message))")
        } catch StoreError.sqlite(let error) {
            throw VnStatImportError(path, "damaged (\(error.message))")
        } catch {
            throw VnStatImportError(path, "damaged (\(error))")
        }
    }

    private static func read(_ database: SQLiteDatabase, path: String, settings: VnStatSettings) throws -> [VnStatInterface] {
        let objects = try database.query("SELECT type, name FROM sqlite_schema") { ($0.text(0), $0.text(1)) }
        guard objects.contains(where: { $0 == ("table", "info") }), objects.contains(where: { $0 == ("table", "interface") }) else {
            throw VnStatImportError(path, "not a vnStat database (no info and interface tables)")
        }
        if let foreign = objects.first(where: { $0.0 != "table" && $0.0 != "index" }) {
            throw VnStatImportError(path, "holds a \(foreign.0) '\(foreign.1.escaping(EscapeTable.oneLine))' that vnStat never creates")
        }
        let check = try database.query("PRAGMA quick_check") { $0.text(0) }
        guard check == ["ok"] else { throw VnStatImportError(path, "damaged (quick_check: \(String(check.first?.prefix(80) ?? "")))") }
        let version = try database.query("SELECT value FROM info WHERE name = 'dbversion'") { $0.text(0) }.first
        guard let version, let number = Int(version) else { throw VnStatImportError(path, "not a vnStat database (no dbversion in info)") }
        guard number == 1 else { throw VnStatImportError(path, "vnStat database version \(number), newer than the 1 this ifmeter reads") }
        for (table, _) in tables {
            let columns = Set(try database.query("SELECT name FROM pragma_table_info(?)", [.text(table)]) { $0.text(0) })
            guard ["interface", "date", "rx", "tx"].allSatisfy(columns.contains) else {
                throw VnStatImportError(path, "damaged: table \(table) lacks vnStat's columns")
            }
        }
        let interfaces = try database.query("SELECT id, name, rxtotal, txtotal FROM interface ORDER BY name") { row in
            (id: row.integer(0), name: row.text(1), rx: row.integer(2), tx: row.integer(3))
        }
        return try interfaces.map { interface in
            guard interface.rx >= 0, interface.tx >= 0 else { throw VnStatImportError(path, "damaged: \(interface.name)'s totals are negative") }
            guard (1...64).contains(interface.name.utf8.count) else {
                throw VnStatImportError(path, "damaged: \"\(String(interface.name.prefix(40)).escaping(EscapeTable.oneLine))\" is not an interface name")
            }
            var history = VnStatInterface(name: InterfaceName.fromUser(interface.name), rxTotal: UInt64(interface.rx), txTotal: UInt64(interface.tx), rows: [:])
            for (table, granularity) in tables {
                let rows = try database.query("SELECT date, rx, tx FROM \(table) WHERE interface = ? ORDER BY date", [.integer(interface.id)]) { row in
                    (date: row.text(0), rx: row.integer(1), tx: row.integer(2))
                }
                let imported = try rows.map { row -> ImportedRow in
                    guard row.rx >= 0, row.tx >= 0 else { throw VnStatImportError(path, "damaged: a \(table) row of \(interface.name) is negative") }
                    // Calendar rows keep their label (a vnStat day is the same day here); instants are UTC under UseUTC.
                    let calendar = granularity != .fiveMinutes && granularity != .hour
                    guard let start = time(row.date, utc: settings.useUTC && !calendar) else {
                        throw VnStatImportError(path, "damaged: \(table) date \"\(String(row.date.prefix(40)).escaping(EscapeTable.oneLine))\" of \(interface.name)")
                    }
                    return ImportedRow(granularity, start: start, rxBytes: UInt64(row.rx), txBytes: UInt64(row.tx))
                }
                if let granularity { history.rows[granularity] = imported } else { history.top = imported }
            }
            return history
        }
    }

    /// `YYYY-MM-DD` or `YYYY-MM-DD HH:MM[:SS]` as Unix time, local or UTC; nil when it is not one.
    static func time(_ text: String, utc: Bool) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" }).map { Int32($0) }
        guard [3, 5, 6].contains(parts.count), parts.allSatisfy({ $0 != nil }) else { return nil }
        let numbers = parts.map { $0! } + [0, 0, 0]
        guard (1970...9999).contains(numbers[0]), (1...12).contains(numbers[1]), (1...31).contains(numbers[2]),
              (0...23).contains(numbers[3]), (0...59).contains(numbers[4]), (0...59).contains(numbers[5]) else { return nil }
        var fields = tm()
        (fields.tm_year, fields.tm_mon, fields.tm_mday) = (numbers[0] - 1900, numbers[1] - 1, numbers[2])
        (fields.tm_hour, fields.tm_min, fields.tm_sec, fields.tm_isdst) = (numbers[3], numbers[4], numbers[5], -1)
        let value = Int64(utc ? timegm(&fields) : mktime(&fields))
        return CounterStore.timeRange.contains(value) ? value : nil
    }
}
