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
    /// The store is its owner's alone and no readers' view is published (README 'Security').
    case permissionDenied(path: String, ownedByRoot: Bool)
    /// The store file is a symbolic link, which no writer follows.
    case symbolicLink(path: String)
    /// A FIFO, directory, device or socket at the store's path (or at its
    /// `-wal` or `-shm`), which SQLite would wait on or fail oddly on.
    case notAFile(path: String, kind: FileSystem.NonFile)
    /// The readers' view could not be read or published (`ReadersView`).
    case readersView(path: String, detail: String)

    package var description: String {
        switch self {
        case .missing(let path): "\(path): no store yet"
        case .newerSchema(let path, let found, let supported):
            "\(path): store schema version \(found) is newer than this ifmeter supports (\(supported)); upgrade ifmeter, the store was left untouched"
        case .notAStore(let path): "\(path): not an ifmeter store (left untouched; move it aside to start a new one)"
        case .notAFile(let path, let kind): "\(path): \(kind), not an ifmeter store (left untouched; move it aside to start a new one)"
        case .unexpectedSchema(let path, let version, let detail):
            "\(path): the store's tables are not those of ifmeter's schema version \(version) (\(detail)); left as it is, see docs/STORE.md 'Recovery'"
        case .permissionDenied(let path, true):
            // A store root made (make run as root).
            "\(path): permission denied: the store is readable only by root, who made it; run ifmeter as root, see docs/SECURITY.md"
        case .permissionDenied(let path, false):
            "\(path): permission denied: the store is its owner's alone, and no view of it is published for other users (ifmeterd publishes one while it runs: systemctl start ifmeterd); see docs/SECURITY.md"
        case .invalidValue(let path, let detail): "\(path): value out of range (\(detail)); left untouched, see docs/STORE.md 'Recovery'"
        case .symbolicLink(let path):
            "\(path): a symbolic link, never written through; to keep the store elsewhere, point the state directory (--state-dir, StateDirectory=) there"
        case .sqlite(let error) where error.isCorrupt:
            "\(error.path): store is corrupt or not a database (\(error.message)); left untouched, see docs/STORE.md 'Recovery'"
        case .readersView(let path, let detail): detail.hasPrefix(path) ? detail : "\(path): \(detail)"
        case .sqlite(let error): error.description
        }
    }

    package var exitCode: ExitCode {
        switch self {
        case .missing: .noInput
        case .permissionDenied: .noPermission
        case .symbolicLink: .cannotCreate
        case .newerSchema, .notAStore, .notAFile, .unexpectedSchema, .invalidValue, .readersView: .dataError
        case .sqlite(let error):
            if error.isCorrupt { .dataError } else if error.isReadOnly || error.isCannotOpen || error.isFull { .cannotCreate } else { .ioError }
        }
    }
}
