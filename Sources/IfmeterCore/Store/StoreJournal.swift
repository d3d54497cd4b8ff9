extension CounterStore {

    /// The store's identity, which the header of its journal names, so a
    /// journal is only ever applied to the store it was written for. The
    /// first writer that needs it draws it.
    package func journalIdentity() throws(StoreError) -> UInt64 {
        if let stored = try meta("store_id").flatMap({ UInt64($0) }) { return stored }
        let drawn = UInt64.random(in: 1 ... .max)
        try database.run("INSERT INTO meta(key, value) VALUES ('store_id', ?) ON CONFLICT(key) DO NOTHING", [.text(String(drawn))])
        return try meta("store_id").flatMap({ UInt64($0) }) ?? drawn
    }

    /// The link event socket the daemon read and the drop count it saw
    /// there as of its last commit (`EventSocketDrops`), if recorded.
    package func eventSocketDrops() throws(StoreError) -> String? { try meta("event_socket_drops") }

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

}
