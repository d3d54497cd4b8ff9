/// For readers: the store as the daemon's journal completes it. When the
/// journal holds the generation after the one the store applied, its records
/// go into a private copy of the store in memory, which is then what is
/// read; the files are never written, and the store read from is untouched.
package struct JournalOverlay {
    /// What reading the journal found.
    package struct Inclusion: Equatable, Sendable {
        /// The records applied (0: the store alone is complete).
        package var applied = 0
        /// Why the journal could not be read, when it could not.
        package var unreadable: String?
        /// Where reading stopped at damage: the records after it are not shown.
        package var damaged: String?
    }

    /// What to read: the copy with the journal applied, or the store itself.
    package let store: CounterStore
    package let inclusion: Inclusion

    package init(over file: CounterStore, journalAt path: String) throws(StoreError) {
        (store, inclusion) = try Self.complete(file, journalAt: path)
    }

    /// The copy is taken before the journal is read again: a daemon that
    /// commits in between moves the journal past the copy's next generation,
    /// and the copy is taken again, so a record is never counted twice.
    private static func complete(_ file: CounterStore, journalAt path: String) throws(StoreError) -> (CounterStore, Inclusion) {
        for _ in 0..<3 {
            let preview: JournalContents?
            do {
                preview = try CommitJournal.read(path)
            } catch {
                return (file, Inclusion(unreadable: error.description))
            }
            guard let preview, preview.header.storeID == (try file.meta("store_id")).flatMap({ UInt64($0) }) else { return (file, Inclusion()) }
            // This store's journal, read up to damage: said, whatever the records before it.
            let damaged: String? = if case .damaged(let why) = preview.ending { "\(path): \(why)" } else { nil }
            guard !preview.records.isEmpty else { return (file, Inclusion(damaged: damaged)) }
            let copy = try CounterStore(memoryCopyOf: file)
            let applied = try copy.appliedJournalGeneration()
            guard let contents = try? CommitJournal.read(path), contents.header.storeID == preview.header.storeID,
                  contents.header.generation > applied else {
                return (file, Inclusion())
            }
            guard contents.header.generation == applied + 1 else { continue }
            try copy.writeTransaction { () throws(StoreError) in
                // Each record is a commit: rates run from the last one.
                let last = contents.records.map(\.time).max() ?? 0
                try copy.writeMeta([("journal_generation", String(contents.header.generation)), ("last_commit", String(last))])
                try copy.write(contents.records, bootID: contents.header.bootID, namespace: contents.header.namespace)
            }
            return (copy, Inclusion(applied: contents.records.count, damaged: damaged))
        }
        return (file, Inclusion())
    }
}
