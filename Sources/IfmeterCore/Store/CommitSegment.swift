/// Records a store commit writes together, and which of their writes a later record
/// overwrites, so only the last is written: the rows the commit leaves are the same
/// (CommitJournalTests compares them with a commit per record).
struct CommitSegment {
    /// Offsets from zero, whatever the slice they came from.
    let records: [JournalRecord]

    /// Per record (offset in `records`), the names whose interface record
    /// repeats the one an earlier record of the segment wrote.
    private var repeatedInterfaces: [Set<String>]
    /// The time of the last record to name each of those, when that record
    /// was a repeat: the row's last_seen is moved there once.
    private(set) var lastSeenOfRepeatedInterfaces: [String: Int64] = [:]
    /// Per record, the indexes (in its `changedLives`) of open lives whose
    /// row a later write of the same life replaces.
    private var overwrittenLives: [Set<Int>]
    /// The last record to write each ifindex's presence row, and the last
    /// to replace the whole record.
    private var lastPresence: [Int32: Int] = [:]
    private var lastReplacement: Int?

    init(_ records: ArraySlice<JournalRecord>, bootID: String, namespace: NamespaceCookie) {
        self.records = Array(records)
        repeatedInterfaces = Array(repeating: [], count: records.count)
        overwrittenLives = Array(repeating: [], count: records.count)

        var written: [String: InterfaceInfo] = [:]
        for (offset, record) in records.enumerated() {
            for (name, info) in record.batch.pending.interfaces {
                if written[name] == info {
                    repeatedInterfaces[offset].insert(name)
                    lastSeenOfRepeatedInterfaces[name] = record.time
                } else {
                    written[name] = info
                    lastSeenOfRepeatedInterfaces[name] = nil
                }
            }
            if let presence = record.batch.presence {
                if presence.replacesAll { lastReplacement = offset }
                for ifindex in presence.removed { lastPresence[ifindex] = offset }
                for ifindex in presence.added.keys { lastPresence[ifindex] = offset }
            }
        }

        // Backwards: an open row's write is left out when the next write to the same row is
        // of the same life under the same name; an ended life's write is always made.
        struct RowKey: Hashable { var bootID: String; var namespace: NamespaceCookie; var ifindex: Int32 }
        struct Writer: Equatable { var name: String; var firstSeen: Int64 }
        var next: [RowKey: Writer] = [:]
        for offset in self.records.indices.reversed() {
            let batch = self.records[offset].batch
            for (index, life) in batch.changedLives.enumerated().reversed() {
                let key = RowKey(bootID: bootID, namespace: namespace, ifindex: life.ifindex)
                let writer = Writer(name: life.name, firstSeen: life.firstSeen)
                if next[key] == writer { overwrittenLives[offset].insert(index) }
                next[key] = writer
            }
            for (ended, _) in batch.pending.endedLives.reversed() {
                let key = RowKey(bootID: ended.bootID, namespace: ended.namespace, ifindex: ended.life.ifindex)
                next[key] = Writer(name: ended.life.name, firstSeen: ended.life.firstSeen)
            }
        }
    }

    /// Whether record `offset` names `name` as an earlier record of the segment did.
    func repeatsInterface(_ name: String, of offset: Int) -> Bool { repeatedInterfaces[offset].contains(name) }

    /// Whether the open life at `index` of record `offset`'s changed lives is written again later.
    func overwritesLife(_ index: Int, of offset: Int) -> Bool { overwrittenLives[offset].contains(index) }

    /// Whether record `offset` is the last to write the presence row of
    /// `ifindex` (nil: the whole record, which it replaces).
    func keepsPresence(of ifindex: Int32?, from offset: Int) -> Bool {
        if let lastReplacement, lastReplacement > offset { return false }
        guard let ifindex else { return true }
        return lastPresence[ifindex] == offset
    }
}
