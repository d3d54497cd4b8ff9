extension CounterStore {
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

}
