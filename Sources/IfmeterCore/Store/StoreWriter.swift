extension CounterStore {
    // MARK: Committing

    /// Writes everything pending and the baselines of `openLives` (every life whose counters
    /// moved) in one transaction, then prunes. `presence` updates the record of links present,
    /// which tells the next start whether a link appeared while the daemon was stopped.
    package func commit(
        _ pending: PendingWrites, openLives: some Collection<TrackedLife>, bootID: String, namespace: NamespaceCookie = 0,
        presence: PresenceUpdate? = nil, at now: Int64, retention: Retention?, intervals: (sample: Double, commit: Double)
    ) throws(StoreError) {
        let batch = CommitBatch(pending: pending, changedLives: Array(openLives), presence: presence)
        try commit([JournalRecord(time: now, batch: batch)], bootID: bootID, namespace: namespace, retention: retention, intervals: intervals)
    }

    /// Writes `records` in one transaction, each as its own commit would have; with
    /// `journalGeneration` it records that journal as applied, so it is never applied again.
    /// `retention` nil: no prune (the clock is not to be trusted with deleting history).
    package func commit(
        _ records: [JournalRecord], bootID: String, namespace: NamespaceCookie, journalGeneration: UInt64? = nil,
        eventSocketDrops: String? = nil, retention: Retention?,
        intervals: (sample: Double, commit: Double)
    ) throws(StoreError) {
        guard !records.isEmpty else { return }
        try writeTransaction { () throws(StoreError) in
            try write(
                records, bootID: bootID, namespace: namespace, journalGeneration: journalGeneration,
                eventSocketDrops: eventSocketDrops, retention: retention, intervals: intervals)
        }
    }

    func write(
        _ records: [JournalRecord], bootID: String, namespace: NamespaceCookie, journalGeneration: UInt64?,
        eventSocketDrops: String? = nil, retention: Retention?, intervals: (sample: Double, commit: Double)
    ) throws(StoreError) {
        guard let last = records.last else { return }
        // The daemon's heartbeat for readers: when it last committed, and how often it means to.
        var entries: [(key: String, value: String)] = [
            ("boot_id", bootID), ("netns", String(namespace)), ("last_commit", String(last.time)),
            ("sample_interval", String(intervals.sample)), ("commit_interval", String(intervals.commit)), ("timezone", zone),
        ]
        entries += countingWith
        // Only the stop's own commit says so: any later commit makes the last one a running daemon's.
        entries.append(("clean_stop", cleanStop?.text ?? ""))
        if let journalGeneration { entries.append(("journal_generation", String(journalGeneration))) }
        if let eventSocketDrops { entries.append(("event_socket_drops", eventSocketDrops)) }
        try writeMeta(entries)
        try write(records, bootID: bootID, namespace: namespace, pruning: retention)
    }

    /// The rows of `records`, each as its own commit would have left them: deltas are sums, so
    /// they are written once per interface and slot before any prune that would change something,
    /// and a `CommitSegment` leaves out the writes a later record overwrites.
    func write(_ records: [JournalRecord], bootID: String, namespace: NamespaceCookie, pruning retention: Retention? = nil) throws(StoreError) {
        var deltas: [PendingWrites.Slot: LinkCounters] = [:]
        var lastCounted: [String: Int64] = [:]
        var start = records.startIndex
        while start < records.endIndex {
            // The records up to the first after which a prune is due: a
            // prune reads what the records before it wrote, so none of its
            // rows may be left for a later record to write.
            var end = start
            while end < records.endIndex - 1 && !(retention.map { pruneIsDue($0, at: records[end].time) } ?? false) { end += 1 }
            let segment = CommitSegment(records[start...end], bootID: bootID, namespace: namespace)
            for (offset, record) in segment.records.enumerated() {
                try write(segment, record: offset, bootID: bootID, namespace: namespace)
                for (slot, counters) in record.batch.pending.deltas {
                    // A name new to the store is first seen in its own record.
                    _ = try interfaceID(slot.name, info: nil, at: record.time)
                    deltas[slot, default: .zero] += counters
                    lastCounted[slot.name] = max(lastCounted[slot.name] ?? record.time, record.time)
                }
            }
            try writeLastSeen(segment)
            // A prune (retirement among it) sees what a commit per record
            // would have shown it: every delta of the records so far.
            if let retention, pruneIsDue(retention, at: records[end].time) {
                try writeDeltas(deltas, lastCounted: lastCounted, bootID: bootID)
                deltas.removeAll()
                lastCounted.removeAll()
                try prune(retention, at: records[end].time)
            }
            start = end + 1
        }
        try writeDeltas(deltas, lastCounted: lastCounted, bootID: bootID)
    }

    /// One commit's rows but its deltas (`write(_:bootID:namespace:)`),
    /// less those a later record of its segment overwrites.
    private func write(_ segment: CommitSegment, record offset: Int, bootID: String, namespace: NamespaceCookie) throws(StoreError) {
        let record = segment.records[offset]
        let pending = record.batch.pending
        for (name, info) in pending.interfaces where !segment.repeatsInterface(name, of: offset) {
            _ = try interfaceID(name, info: info, at: record.time)
        }
        for (time, event) in pending.events { try writeEvent(event, at: time, bootID: bootID) }
        for (ended, time) in pending.endedLives {
            try writeLife(ended.life, bootID: ended.bootID, namespace: ended.namespace, ended: (time, ended.end.rawValue))
        }
        for (index, life) in record.batch.changedLives.enumerated() {
            // Its insert may be the first write of its name's row (last_seen
            // then): only a name this connection has written can wait.
            guard !segment.overwritesLife(index, of: offset) || interfaceIDs[life.name] == nil else { continue }
            try writeLife(life, bootID: bootID, namespace: namespace, ended: nil)
        }
        if let presence = record.batch.presence { try writePresence(presence, keeping: { segment.keepsPresence(of: $0, from: offset) }) }
    }

    /// The last_seen of names whose repeated interface record was left out
    /// (`CommitSegment.repeatsInterface`): their later records' time.
    private func writeLastSeen(_ segment: CommitSegment) throws(StoreError) {
        for (name, time) in segment.lastSeenOfRepeatedInterfaces {
            try database.run("UPDATE interface SET last_seen = ? WHERE id = ?", [.integer(time), .integer(try interfaceID(name, info: nil, at: time))])
        }
    }

    /// A write transaction; after a rollback, what this connection cached
    /// of the rows it wrote is forgotten.
    func writeTransaction(_ body: () throws(StoreError) -> Void) throws(StoreError) {
        let committedFold = foldedThrough
        do {
            try database.transaction(body)
        } catch {
            forgetWhatWasWritten()
            foldedThrough = committedFold
            throw error
        }
    }

    /// What this connection cached of the rows it wrote, for a database that
    /// no longer holds them (after a rollback).
    func forgetWhatWasWritten() {
        interfaceIDs.removeAll()
        openLives = nil
        presentLinks = nil
        writtenMeta.removeAll()
        lastBucketPrune = nil
        lastDetailPrune = nil
    }


    func writeMeta(_ entries: [(key: String, value: String)]) throws(StoreError) {
        for (key, value) in entries where writtenMeta[key] != value {
            try database.run(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.text(key), .text(value)])
            writtenMeta[key] = value
        }
    }

    /// Only what changed. `keeping`: whether the row of an ifindex is still this record's to
    /// write (`CommitSegment`).
    private func writePresence(_ presence: PresenceUpdate, keeping: (Int32?) -> Bool) throws(StoreError) {
        if presence.replacesAll && keeping(nil) {
            try database.run("DELETE FROM present_link")
            try database.run("INSERT INTO meta(key, value) VALUES ('presence', 'recorded') ON CONFLICT(key) DO NOTHING")
            presentLinks = [:]
        }
        if presentLinks == nil {
            var rows: [Int32: String] = [:]
            for (ifindex, name) in try presentLinkRows() { rows[ifindex] = name }
            presentLinks = rows
        }
        for ifindex in presence.removed where keeping(ifindex) && presentLinks?[ifindex] != nil {
            try database.run("DELETE FROM present_link WHERE ifindex = ?", [.integer(Int64(ifindex))])
            presentLinks?[ifindex] = nil
        }
        for (ifindex, name) in presence.added where keeping(ifindex) && presentLinks?[ifindex] != name {
            try database.run(
                "INSERT INTO present_link(ifindex, name) VALUES (?, ?) ON CONFLICT(ifindex) DO UPDATE SET name = excluded.name",
                [.integer(Int64(ifindex)), .text(name)])
            presentLinks?[ifindex] = name
        }
    }

    /// The record of links present, as stored: the daemon's start and
    /// `writePresence` read it.
    func presentLinkRows() throws(StoreError) -> [(Int32, String)] {
        try database.query("SELECT ifindex, name FROM present_link") { (Int32(truncatingIfNeeded: $0.integer(0)), $0.text(1)) }
    }

    private func interfaceID(_ name: String, info: InterfaceInfo?, at now: Int64) throws(StoreError) -> Int64 {
        if let info {
            let id = try database.query("""
                INSERT INTO interface(name, class, signal, kind, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET class = excluded.class, signal = excluded.signal, kind = excluded.kind, last_seen = excluded.last_seen
                RETURNING id
                """, [.text(name), .text(info.interfaceClass.rawValue), .text(info.signal), .text(info.kind), .integer(now), .integer(now)]) { $0.integer(0) }.first!
            interfaceIDs[name] = id
            return id
        }
        if let cached = interfaceIDs[name] { return cached }
        let id = try database.query("""
            INSERT INTO interface(name, class, signal, kind, first_seen, last_seen) VALUES (?, 'other', 'unknown', '', ?, ?)
            ON CONFLICT(name) DO UPDATE SET last_seen = excluded.last_seen RETURNING id
            """, [.text(name), .integer(now), .integer(now)]) { $0.integer(0) }.first!
        interfaceIDs[name] = id
        return id
    }

    /// `lastCounted`: per name, the time of the last commit that counted it
    /// (its last_seen; a name missing there is dated by its slot).
    private func writeDeltas(_ deltas: [PendingWrites.Slot: LinkCounters], lastCounted: [String: Int64], bootID: String) throws(StoreError) {
        var totals: [String: (counters: LinkCounters, time: Int64)] = [:]
        var folded: [String: (counters: LinkCounters, time: Int64)] = [:]
        for (slot, counters) in deltas {
            let now = lastCounted[slot.name] ?? slot.start
            totals[slot.name, default: (.zero, now)].counters += counters
            let id = try interfaceID(slot.name, info: nil, at: now)
            if slot.start >= foldedThrough {
                // The all-time totals take it at the next fold.
                try add(counters, countedAt: now, toBucket: .fiveMinutes, startingAt: slot.start, of: id)
                continue
            }
            // A slot already folded (the clock stepped back, or a journal
            // from before the fold) goes into every granularity and the
            // all-time totals at once.
            for granularity in Granularity.allCases {
                try add(counters, countedAt: now, toBucket: granularity, startingAt: TimeBuckets.start(of: granularity, containing: slot.start), of: id)
            }
            folded[slot.name, default: (.zero, now)].counters += counters
        }
        for (name, (counters, now)) in folded {
            try addToTotals(counters, countedAt: now, of: try interfaceID(name, info: nil, at: now))
        }
        for (name, (counters, now)) in totals {
            // What this boot counted, so "since boot" always agrees with the
            // all-time totals, whatever the lives and names did meanwhile.
            try database.run("""
                INSERT INTO boot_total(boot_id, interface_id, rx_bytes, tx_bytes, rx_packets, tx_packets) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(boot_id, interface_id) DO UPDATE SET
                  rx_bytes = rx_bytes + excluded.rx_bytes, tx_bytes = tx_bytes + excluded.tx_bytes,
                  rx_packets = rx_packets + excluded.rx_packets, tx_packets = tx_packets + excluded.tx_packets
                """, [.text(bootID), .integer(try interfaceID(name, info: nil, at: now))]
                + [counters.rxBytes, counters.txBytes, counters.rxPackets, counters.txPackets].map(Self.value))
        }
    }

    /// Adds to an interface's all-time totals and moves its last_seen up to `time`, so that
    /// retirement sees a renamed life's name still counted. A sum past the headroom is refused.
    func addToTotals(_ counters: LinkCounters, countedAt time: Int64?, of id: Int64) throws(StoreError) {
        var fits = counters.fields.allSatisfy { $0 <= UInt64(Self.counterLimit) }
        if fits {
            // No row: a bucket row whose interface row is gone (a hand
            // edit), whose bytes have no totals to go to.
            fits = try database.query(Self.addToTotals, counters.fields.map(Self.value) + [time.map { .integer($0) } ?? .null, .integer(id)]) { $0.integer(0) }
                .allSatisfy { $0 == 1 }
        }
        guard fits else {
            throw .invalidValue(path: path, detail: "the all-time totals of interface row \(id) would pass 2^62; nothing was written")
        }
    }

    private static let addToTotals = """
        UPDATE interface SET \(counterColumns.list { "\($0) = \($0) + ?" }), last_seen = max(last_seen, coalesce(?, last_seen))
        WHERE id = ?
        RETURNING \(withinHeadroom(counterColumns))
        """

    /// A RETURNING expression: 1 when every column is an integer the writer can go on adding to.
    private static func withinHeadroom(_ columns: Columns) -> String {
        columns.list(separator: " AND ") { "typeof(\($0)) = 'integer' AND \($0) <= \(counterLimit)" }
    }

    private func writeEvent(_ event: ResetEvent, at time: Int64, bootID: String) throws(StoreError) {
        let id = try interfaceID(event.name, info: nil, at: time)
        var measures: [SQLiteValue] = [.null, .null, .null]
        if case .discarded(let rx, let tx) = event.loss { measures = [Self.value(rx), Self.value(tx), .null] }
        if case .unseen(let seconds) = event.loss { measures = [.null, .null, Self.value(seconds)] }
        try database.run("""
            INSERT INTO event(time, interface_id, boot_id, reason, old_ifindex, new_ifindex, loss, discarded_rx_bytes, discarded_tx_bytes, unseen_seconds, detail)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.integer(time), .integer(id), .text(bootID), .text(event.reason.rawValue),
                  event.oldIfindex.map { .integer(Int64($0)) } ?? .null, event.newIfindex.map { .integer(Int64($0)) } ?? .null,
                  .text(event.loss.name)] + measures + [.text(event.detail)])
        // A bounded, unwatched moment marks no row: the marker is for what cannot be known.
        switch event.loss {
        case .none, .unseen: return
        case .unknown, .discarded: break
        }
        // The totals and the buckets of that moment may miss traffic: say why on the rows.
        let why = "\(event.reason.rawValue) at \(TimeText.utc(time)): \(event.detail)"
        try database.run("UPDATE interface SET incomplete = ? WHERE id = ?", [.text(why), .integer(id)])
        for granularity in Granularity.allCases {
            try database.run("""
                INSERT INTO bucket(interface_id, granularity, start, incomplete) VALUES (?, ?, ?, ?)
                ON CONFLICT(granularity, start, interface_id) DO UPDATE SET incomplete = excluded.incomplete
                """, [.integer(id), .text(granularity.rawValue), .integer(TimeBuckets.start(of: granularity, containing: time)), .text(why)])
        }
    }

    /// Updates the open row of a life (boot id, namespace, ifindex), or
    /// inserts it when it was never committed open (a life shorter than the
    /// commit interval).
    private func writeLife(_ life: TrackedLife, bootID: String, namespace: NamespaceCookie, ended: (time: Int64, reason: String)?) throws(StoreError) {
        let counters = life.counters.fields.map(Self.value)
        let end: [SQLiteValue] = ended.map { [.integer($0.time), .text($0.reason)] } ?? [.null, .null]
        let identity: [SQLiteValue] = [.text(bootID), Self.value(namespace), .integer(Int64(life.ifindex))]
        let scope = LifeScope(bootID: bootID, namespace: namespace)
        if try openLifeRows()[scope]?.contains(life.ifindex) == true {
            let updated = try database.run(
                ended == nil ? Self.updateOpenLife : Self.updateEndedLife,
                [.text(life.name), .integer(life.lastSeen), .real(life.sinceBoot)] + (ended == nil ? [] : end) + counters + identity)
            if ended != nil { openLives?[scope]?.remove(life.ifindex) }
            if updated > 0 { return }
        }
        try database.run(Self.insertLife, [.integer(try interfaceID(life.name, info: nil, at: life.lastSeen))] + identity + [.text(life.name),
                  .integer(life.firstSeen), .integer(life.lastSeen), .real(life.sinceBoot)] + end + counters)
        if ended == nil { openLives?[scope, default: []].insert(life.ifindex) }
    }

    /// Where a life's row is unique while it is open, with its ifindex.
    struct LifeScope: Hashable {
        var bootID: String
        var namespace: NamespaceCookie
    }

    /// The ifindexes of the open life rows, read at the first life this
    /// connection writes and kept as it writes them (`openLives`).
    private func openLifeRows() throws(StoreError) -> [LifeScope: Set<Int32>] {
        if let openLives { return openLives }
        var rows: [LifeScope: Set<Int32>] = [:]
        for (scope, ifindex) in try database.query("SELECT boot_id, netns, ifindex FROM life WHERE ended IS NULL", row: { row in
            (LifeScope(bootID: row.text(0), namespace: UInt64(bitPattern: row.integer(1))), Int32(truncatingIfNeeded: row.integer(2)))
        }) {
            rows[scope, default: []].insert(ifindex)
        }
        openLives = rows
        return rows
    }

    // Spelt once: a commit under link churn writes thousands of lives, and
    // each statement is found by its text.
    private static func updateLife(ending: Bool) -> String {
        // An open life's row is updated without naming `ended`: setting it,
        // even to NULL again, rewrites the row's entry in the partial index
        // life_open, one more page in every commit.
        """
        UPDATE life SET name = ?, last_seen = ?, since_boot = ?, \(ending ? "ended = ?, end_reason = ?," : "")
          rx_bytes = ?, tx_bytes = ?, rx_packets = ?, tx_packets = ?, rx_errors = ?, tx_errors = ?, rx_dropped = ?, tx_dropped = ?
        WHERE boot_id = ? AND netns = ? AND ifindex = ? AND ended IS NULL
        """
    }
    private static let updateOpenLife = updateLife(ending: false)
    private static let updateEndedLife = updateLife(ending: true)
    private static let insertLife = """
        INSERT INTO life(interface_id, boot_id, netns, ifindex, name, first_seen, last_seen, since_boot, ended, end_reason, \(counterColumns))
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Adds to a bucket row; a sum past the writer's headroom rolls the commit back rather than
    /// write a value every reader refuses.
    func add(
        _ counters: LinkCounters, countedAt time: Int64?, toBucket granularity: Granularity, startingAt start: Int64, of id: Int64
    ) throws(StoreError) {
        // Only a five-minute row's time is read (it dates the totals it
        // holds until the fold); on coarse rows it would only grow the store.
        let counted: SQLiteValue = granularity == .fiveMinutes ? time.map { .integer($0) } ?? .null : .null
        var fits = counters.fields.allSatisfy { $0 <= UInt64(Self.counterLimit) }
        if fits {
            fits = try database.query(
                Self.addToBucket, [.integer(id), .text(granularity.rawValue), .integer(start)] + counters.fields.map(Self.value) + [counted]
            ) { $0.integer(0) } == [1]
        }
        guard fits else {
            throw .invalidValue(path: path, detail: "the \(granularity.rawValue) bucket at \(start) of interface row \(id) would pass 2^62; nothing was written")
        }
    }

    private static let addToBucket = """
        INSERT INTO bucket(interface_id, granularity, start, \(counterColumns), last_counted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(granularity, start, interface_id) DO UPDATE SET
          \(counterColumns.list { "\($0) = \($0) + excluded.\($0)" }),
          last_counted = coalesce(max(last_counted, excluded.last_counted), last_counted, excluded.last_counted)
        RETURNING \(withinHeadroom(counterColumns))
        """

}
