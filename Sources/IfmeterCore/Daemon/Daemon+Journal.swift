/// Where life changes between store commits are made durable (`CommitJournal`).
enum JournalState {
    case open(CommitJournal)
    /// It could not be opened or written: life changes commit the store, and the next commit retries.
    case unavailable

    var open: CommitJournal? {
        if case .open(let journal) = self { journal } else { nil }
    }
}

extension Daemon {
    /// Opens the journal, applies what the store lacks (a daemon stopped before its commit), starts the next generation.
    func openJournal() throws(StoreError) -> JournalState {
        let claimed: (file: AppendFile, previous: [UInt8])
        do {
            claimed = try CommitJournal.claim(journalPath)
        } catch {
            journalWrites.failed("\(error); committing life changes to the store directly")
            return .unavailable
        }
        if !claimed.previous.isEmpty { try applyJournal(claimed.previous) }
        let header = JournalHeader(
            storeID: try store.journalIdentity(), generation: try store.appliedJournalGeneration() + 1, bootID: bootID, namespace: namespace)
        do {
            return .open(try CommitJournal(file: claimed.file, header: header))
        } catch {
            journalWrites.failed("\(error); committing life changes to the store directly")
            return .unavailable
        }
    }

    /// What cannot be applied (not a journal, another store's, values the store refuses) is said and replaced.
    private func applyJournal(_ bytes: [UInt8]) throws(StoreError) {
        let contents: JournalContents
        do {
            contents = try CommitJournal.parse(bytes, path: journalPath)
        } catch {
            Log.warning("\(error); not applied, starting a new journal")
            return
        }
        switch try store.apply(contents, retention: configuration.retention, intervals: (configuration.sampleInterval, configuration.commitInterval)) {
        case .foreign:
            Log.warning("\(journalPath): the journal of another store (not \(store.path)); not applied, starting a new journal")
            return
        case .refused(let detail):
            Log.warning("\(journalPath): not applied, it would leave \(store.path) out of range (\(detail)); starting a new journal")
            return
        case .applied(let count):
            Log.notice("\(journalPath): applied \(count) journaled commit\(count == 1 ? "" : "s") to \(store.path) (the daemon had stopped before committing them)")
        case .nothing:
            break
        }
        switch contents.ending {
        case .whole:
            break
        case .cutShort(let why):
            Log.notice("\(journalPath): \(why) (the daemon was stopped while writing it); the records before it were applied")
        case .damaged(let why):
            Log.warning("\(journalPath): \(why): applied the \(counted(contents.records.count, "record")) before it; the rest is lost")
        }
    }

    /// One append to the journal makes a life change durable between commits; a failed append commits.
    func journalLifeChanges(at now: Instant) {
        guard let journal = journal.open else { return commit(at: now) }
        let batch = meter.nextCommit
        do {
            try journal.append(JournalRecord(time: now.wall, batch: batch))
            meter.committed(batch)
            journalWrites.succeeded("\(journal.path): journal written again")
        } catch {
            journalWrites.failed("\(error); committing life changes to the store instead")
            commit(at: now)
        }
    }

    /// After a commit the journal starts over; one that failed is opened again.
    func startNextJournalGeneration() {
        switch journal {
        case .open(let open):
            do {
                try open.startGeneration(open.header.generation + 1)
            } catch {
                journalWrites.failed("\(error); committing life changes to the store instead")
                // Its records are in the store: nothing may be appended after them.
                journal = .unavailable
            }
        case .unavailable:
            if let reopened = try? openJournal() { journal = reopened }
        }
    }
}
