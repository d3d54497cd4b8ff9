import Glibc

/// One commit the daemon made durable in the journal instead of the store:
/// what `CounterStore.commit` would have written at `time`.
package struct JournalRecord: Sendable {
    package var time: Int64
    package var batch: CommitBatch

    package init(time: Int64, batch: CommitBatch) {
        self.time = time
        self.batch = batch
    }
}

/// Whose records a journal file holds: which store they belong to, the
/// generation the store records when it has applied them, and the boot and
/// namespace of the daemon that wrote them.
package struct JournalHeader: Sendable, Equatable {
    package var storeID: UInt64
    package var generation: UInt64
    package var bootID: String
    package var namespace: NamespaceCookie

    package init(storeID: UInt64, generation: UInt64, bootID: String, namespace: NamespaceCookie) {
        self.storeID = storeID
        self.generation = generation
        self.bootID = bootID
        self.namespace = namespace
    }
}

/// What a journal file holds, read back.
package struct JournalContents: Sendable {
    package var header: JournalHeader
    package var records: [JournalRecord]
    /// How the reading ended.
    package var ending: JournalEnding
}

/// How the reading of a journal file ended.
package enum JournalEnding: Sendable, Equatable {
    /// Every byte was read as records.
    case whole
    /// The last record is not whole: the daemon was killed while writing
    /// it, or a power cut left its blocks unwritten. Not damage.
    case cutShort(String)
    /// A record before the end is not whole, or a record's length is
    /// damaged (it points past the end over a record still whole): the
    /// file was damaged.
    case damaged(String)
}

/// A journal file that cannot be read or written as one.
package struct JournalError: Error, Sendable, CustomStringConvertible {
    package var path: String
    package var detail: String
    package init(path: String, detail: String) {
        self.path = path
        self.detail = detail
    }

    init(path: String, _ error: any Error) {
        switch error {
        case let error as SystemError: self.init(path: path, detail: error.reason)
        case let error as FileSystem.NotARegularFile: self.init(path: path, detail: "\(error)".dropPrefix(path + ": "))
        default: self.init(path: path, detail: "\(error)")
        }
    }

    package var description: String { "\(path): \(detail)" }
}

extension String {
    fileprivate func dropPrefix(_ prefix: String) -> String { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self }
}

/// The commit journal: between store commits each life change is one checksummed record
/// appended here; the next commit applies them with its own in one transaction. Not synced:
/// it survives a kill, not a power cut (docs/DURABILITY.md).
package final class CommitJournal {
    /// The first bytes of every journal file.
    static let magic: [UInt8] = Array("ifmeter journal\n".utf8)
    static let formatVersion: UInt32 = 1
    /// Everyone's, like the readers' view it completes.
    package static let fileMode: mode_t = 0o644

    package let path: String
    package private(set) var header: JournalHeader
    /// The records of this generation: what the next store commit applies.
    package private(set) var records: [JournalRecord] = []
    private let file: AppendFile

    /// The largest file read as a journal: the daemon commits once its
    /// journal passes `LifeChangeRoute.journalBound`, so nothing it wrote is larger.
    static let sizeLimit = 16 << 20

    /// Opens the journal, creating it when absent, with what it held. Never locked: everyone may read
    /// it, and a lock anyone can take is one anyone can hold against the daemon. The daemon's own lock
    /// (`ifmeterd.lock`, 0600) makes it the only writer.
    package static func claim(_ path: String) throws(JournalError) -> (file: AppendFile, previous: [UInt8]) {
        do {
            guard let (fd, size) = try FileSystem.openRegularFile(path, flags: O_RDWR | O_CREAT, mode: fileMode, limit: sizeLimit) else {
                throw SystemError("open", path: path, errno: ENOENT)
            }
            // Its mode is the journal's once a generation starts in it: not
            // before, when it may be some other file left untouched.
            let file = AppendFile(path: path, descriptor: fd)
            return (file, try FileSystem.readPrefix(fd, size: size, path: path))
        } catch {
            throw JournalError(path: path, error)
        }
    }

    /// Starts a new journal for `header` in `file`, replacing what it held.
    package init(file: AppendFile, header: JournalHeader) throws(JournalError) {
        path = file.path
        self.header = header
        self.file = file
        try startGeneration(header.generation)
    }

    /// Starts a journal at `path` that holds nothing to apply
    /// (tests; the daemon applies what `claim` returned first).
    package convenience init(path: String, header: JournalHeader) throws(JournalError) {
        try self.init(file: try Self.claim(path).file, header: header)
    }

    /// The file's size in bytes: the daemon commits to the store once it
    /// holds more than a bound, so the journal (and memory) stay small
    /// whatever the churn.
    package var size: Int { file.size }

    /// Appends one record; once this returns, a crash no longer loses it.
    package func append(_ record: JournalRecord) throws(JournalError) {
        var payload = ByteWriter()
        payload.i64(record.time)
        payload.batch(record.batch)
        do {
            try file.append(Self.frame(payload.bytes))
        } catch {
            throw JournalError(path: path, error)
        }
        // Kept as a read of the file would give it back: a presence change
        // without every link present, which the meter holds already and a
        // record under link churn would otherwise copy each time.
        var kept = record
        kept.batch.presence = record.batch.presence?.change
        records.append(kept)
    }

    /// The records' dates after the wall clock stepped by `seconds`, for the next commit to apply;
    /// the file keeps those written (a restart before that commit applies them as they were).
    package func redate(by seconds: Int64) {
        for index in records.indices {
            records[index].time += seconds
            records[index].batch.pending.redate(by: seconds)
        }
    }

    /// Empties the journal for the records that follow a store commit.
    package func startGeneration(_ generation: UInt64) throws(JournalError) {
        FileSystem.restrictMode(path, to: Self.fileMode)
        header.generation = generation
        records.removeAll()
        var writer = ByteWriter()
        writer.bytes(Self.magic)
        writer.u32(Self.formatVersion)
        var fields = ByteWriter()
        fields.u64(header.storeID)
        fields.u64(header.generation)
        fields.string(header.bootID)
        fields.u64(header.namespace)
        writer.bytes(Self.frame(fields.bytes))
        do {
            try file.replaceContents(with: writer.bytes)
        } catch {
            throw JournalError(path: path, error)
        }
    }

    /// A record as stored: its length, its CRC-32, then its bytes.
    private static func frame(_ payload: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.count(payload.count)
        writer.u32(CRC32.checksum(payload[...]))
        writer.bytes(payload)
        return writer.bytes
    }

    // MARK: Reading

    /// What the journal at `path` holds, for a reader; nil when there is
    /// none (no file, or an empty one: a reset cut short).
    package static func read(_ path: String) throws(JournalError) -> JournalContents? {
        let bytes: [UInt8]
        do {
            guard let (fd, size) = try FileSystem.openRegularFile(path, flags: O_RDONLY, limit: sizeLimit) else { return nil }
            defer { close(fd) }
            bytes = try FileSystem.readPrefix(fd, size: size, path: path)
        } catch {
            throw JournalError(path: path, error)
        }
        guard !bytes.isEmpty else { return nil }
        return try parse(bytes, path: path)
    }

    /// Parses a whole journal file. A header that is not one refuses the
    /// file; a record that is not whole ends the reading there.
    static func parse(_ bytes: [UInt8], path: String) throws(JournalError) -> JournalContents {
        guard bytes.starts(with: magic) else { throw JournalError(path: path, detail: "not an ifmeter journal") }
        var reader = ByteReader(bytes, from: magic.count)
        let header: JournalHeader
        do {
            let version = try reader.u32()
            guard version == formatVersion else {
                throw JournalError(path: path, detail: "journal format \(version) is not one this ifmeter reads (\(formatVersion))")
            }
            guard case .whole(let start, let end) = frame(in: bytes, at: reader.offset) else {
                throw JournalError(path: path, detail: "journal header damaged")
            }
            var fields = ByteReader(bytes, from: start, to: end)
            header = JournalHeader(storeID: try fields.u64(), generation: try fields.u64(), bootID: try fields.string(), namespace: try fields.u64())
            reader = ByteReader(bytes, from: end)
        } catch let error as JournalError {
            throw error
        } catch {
            throw JournalError(path: path, detail: "journal header damaged (\(error))")
        }
        var records: [JournalRecord] = []
        var offset = reader.offset
        while offset < bytes.count {
            // A power cut can leave a file's last blocks allocated but never
            // written: zeros where records were going, not damage.
            if bytes[offset...].allSatisfy({ $0 == 0 }) {
                return JournalContents(
                    header: header, records: records, ending: .cutShort("the file ends in zeros after record \(records.count)"))
            }
            let stopped: String
            switch frame(in: bytes, at: offset) {
            case .whole(let start, let end):
                var fields = ByteReader(bytes, from: start, to: end)
                do {
                    let record = JournalRecord(time: try fields.time(), batch: try fields.batch())
                    guard fields.isAtEnd else { throw ByteReader.Malformed(description: "\(fields.remaining) bytes left over") }
                    records.append(record)
                    offset = end
                    continue
                } catch {
                    stopped = "record \(records.count + 1) is malformed (\(error))"
                }
            case .cutShort:
                return JournalContents(
                    header: header, records: records, ending: .cutShort("record \(records.count + 1) was cut short"))
            case .badLength:
                stopped = "record \(records.count + 1)'s length is damaged"
            case .badChecksum(let end):
                stopped = "record \(records.count + 1) fails its checksum"
                // The last record, whole in length but not in content: a
                // write cut short by a power cut, not damage.
                if end == bytes.count {
                    return JournalContents(header: header, records: records, ending: .cutShort(stopped))
                }
            }
            return JournalContents(header: header, records: records, ending: .damaged(stopped))
        }
        return JournalContents(header: header, records: records, ending: .whole)
    }

    private enum Frame {
        case whole(start: Int, end: Int)
        case cutShort
        case badChecksum(end: Int)
        /// A length past the end of the file over bytes that hold a whole
        /// record under its checksum: the length is damaged, not cut.
        case badLength
    }

    /// The least a record's bytes hold: its time and the five counts of an
    /// empty batch.
    private static let smallestRecord = 8 + 5 * 4

    private static func frame(in bytes: [UInt8], at offset: Int) -> Frame {
        var reader = ByteReader(bytes, from: offset)
        guard let length = try? reader.u32(), let checksum = try? reader.u32() else { return .cutShort }
        let start = reader.offset
        guard Int(length) <= bytes.count - start else {
            // A crash cuts the last record short; a flipped length bit points past the end too, but
            // then the record is still whole and records after it may be.
            guard let whole = CRC32.prefixLength(of: bytes[start...], matching: checksum, minimum: smallestRecord) else { return .cutShort }
            // A chance match on a torn record's bytes (one in 2^32 a byte)
            // would not also read as a record.
            var fields = ByteReader(bytes, from: start, to: start + whole)
            let isRecord = (try? fields.time()) != nil && (try? fields.batch()) != nil && fields.isAtEnd
            return isRecord ? .badLength : .cutShort
        }
        let end = start + Int(length)
        return CRC32.checksum(bytes[start..<end]) == checksum ? .whole(start: start, end: end) : .badChecksum(end: end)
    }
}
