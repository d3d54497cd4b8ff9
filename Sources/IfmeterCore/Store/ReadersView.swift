import Glibc

/// What readers read while the daemon runs: a copy of the store as of its last commit, which the
/// daemon publishes in its runtime directory (mode 0644) and replaces by rename. A reader opens it,
/// reads it whole into memory and closes it, so no reader holds anything the writer needs: the
/// live store, its WAL and its index stay the daemon's own (0600).
package enum ReadersView {
    package static let fileName = "ifmeter-view.db"
    /// The largest view published or read: with the journal's bound, what the daemon keeps in its
    /// runtime directory is at most twice this (a view and its replacement) plus 256 KiB.
    package static let sizeLimit = 32 << 20

    /// Writes the store's last commit as the view in `directory`, or removes the view when the
    /// store has outgrown `sizeLimit` (readers then need the right to read the store).
    package static func publish(_ store: CounterStore, in directory: String) throws(StoreError) {
        let path = directory + "/" + fileName
        var bytes = try store.serialized()
        // Marked rollback-journal, not WAL: a reader (sqlite3 too) then needs no -shm beside it.
        if bytes.count >= 20 { (bytes[18], bytes[19]) = (1, 1) }
        guard bytes.count <= sizeLimit else {
            try withdraw(in: directory)
            throw .readersView(path: path, detail: "the store has \(bytes.count) bytes, more than the \(sizeLimit) a view may hold; not published")
        }
        do {
            try FileSystem.writeAtomically(bytes, to: path, mode: 0o644, synced: false)
        } catch {
            throw .readersView(path: path, detail: "\(error)")
        }
    }

    /// The view in `directory` as a store in memory, nil when there is none. Read without
    /// following a link or waiting on a FIFO, bounded by `sizeLimit`, checked as any store is.
    package static func open(in directory: String) throws(StoreError) -> CounterStore? {
        let path = directory + "/" + fileName
        let bytes: [UInt8]
        do {
            guard let (fd, size) = try FileSystem.openRegularFile(path, flags: O_RDONLY, limit: sizeLimit) else { return nil }
            defer { close(fd) }
            bytes = try FileSystem.readPrefix(fd, size: size, path: path)
        } catch let error as SystemError where error.errno == EACCES || error.errno == ENOTDIR {
            // A directory this user may not enter holds no view for it: the store decides.
            return nil
        } catch {
            throw .readersView(path: path, detail: "\(error)")
        }
        return try CounterStore(view: bytes, path: path)
    }

    /// Removes the view in `directory`: a store changed while no daemon ran (`forget`) would
    /// otherwise be read as it was.
    package static func withdraw(in directory: String) throws(StoreError) {
        let path = directory + "/" + fileName
        if unlink(path) != 0 && errno != ENOENT {
            throw .readersView(path: path, detail: "\(SystemError("remove", path: path, errno: errno)); remove it by hand")
        }
    }
}
