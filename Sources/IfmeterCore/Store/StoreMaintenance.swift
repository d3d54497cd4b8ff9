extension CounterStore {
    func prune(_ retention: Retention, at now: Int64) throws(StoreError) {
        let limits: [(Granularity, Int)] = [
            (.fiveMinutes, retention.fiveMinuteHours * 12), (.hour, retention.hourlyDays * 24), (.day, retention.dailyDays),
            (.month, retention.monthlyMonths), (.year, retention.yearlyYears),
        ]
        // Before any bucket goes: a five-minute row leaves its retention
        // long after its hour is folded, and a coarse row made by a late
        // fold must meet its own retention.
        try fold(at: now)
        // Every bucket boundary, in any zone, is a five-minute boundary: a
        // bucket can only fall out of its retention when a new slot begins.
        if bucketPruneIsDue(retention, at: now) {
            for (granularity, count) in limits where count > 0 {
                try database.run("DELETE FROM bucket WHERE granularity = ? AND start < ?",
                                 [.text(granularity.rawValue), .integer(TimeBuckets.start(of: granularity, count, before: now))])
            }
            lastBucketPrune = (TimeBuckets.start(of: .fiveMinutes, containing: now), retention)
        }
        // Ended lives go with the five-minute buckets they explain, the reset log with the
        // daily ones (0 keeps them); at most once an hour, as `life` has no index on `ended`.
        guard detailPruneIsDue(at: now) else { return }
        lastDetailPrune = now
        // Before ended lives go: how long each name has been gone.
        try notePresenceFromLives()
        // Each reset counted on before its row goes (`resetCountTable`).
        if retention.fiveMinuteHours > 0 {
            let cutoff = now - Int64(retention.fiveMinuteHours) * 3600
            try database.run("DELETE FROM life WHERE ended IS NOT NULL AND ended < ?", [.integer(cutoff)])
        }
        if retention.dailyDays > 0 {
            let cutoff = now - Int64(retention.dailyDays) * 86400
            try addToResetCounts("SELECT interface_id, reason, count(*) FROM event WHERE time < ?1 GROUP BY interface_id, reason", cutoff)
            try database.run("DELETE FROM event WHERE time < ?", [.integer(cutoff)])
        }
        // Names themselves (Retirement.swift), once their events are gone.
        try pruneNamesAndBoots(retention, at: now)
    }

    /// Adds the (interface id, reason, count) rows of `query` to `reset_count`.
    private func addToResetCounts(_ query: String, _ cutoff: Int64) throws(StoreError) {
        try database.run("""
            INSERT INTO reset_count(interface_id, reason, count) \(query)
            ON CONFLICT(interface_id, reason) DO UPDATE SET count = count + excluded.count
            """, [.integer(cutoff)])
    }


    private func bucketPruneIsDue(_ retention: Retention, at now: Int64) -> Bool {
        lastBucketPrune?.slot != TimeBuckets.start(of: .fiveMinutes, containing: now) || lastBucketPrune?.retention != retention
    }

    private func detailPruneIsDue(at now: Int64) -> Bool {
        guard let last = lastDetailPrune, now >= last else { return true }
        return now - last >= 3600
    }

    /// Whether `prune` would change anything at `now`.
    func pruneIsDue(_ retention: Retention, at now: Int64) -> Bool {
        foldIsDue(at: now) || bucketPruneIsDue(retention, at: now) || detailPruneIsDue(at: now)
    }

    // MARK: Folding

    // A commit writes each interface's five-minute row only; once an hour the rows of the
    // hours past are added into the coarser rows and the all-time totals, and
    // `folded_through` moves past them in the same transaction (bench/TRIES.md).


    /// Checked like every other number a writer builds on (a reader
    /// writes too, to its in-memory copy: `include(journalAt:)`).
    func loadFoldedThrough() throws(StoreError) {
        let value = try meta("folded_through")
        guard let through = value.flatMap({ Int64($0) }), Self.timeRange.contains(through) else {
            throw .invalidValue(path: path, detail: "meta folded_through is \(value.map { "'\($0.escaping(EscapeTable.oneLine))'" } ?? "missing"), not a time")
        }
        foldedThrough = through
    }

    /// Where a fold at `now` stops: the start of its hour (on a five-minute
    /// boundary, as every slot is).
    private func foldPoint(at now: Int64) -> Int64 {
        TimeBuckets.start(of: .fiveMinutes, containing: TimeBuckets.start(of: .hour, containing: now))
    }

    private func foldIsDue(at now: Int64) -> Bool { foldPoint(at: now) > foldedThrough }

    private func fold(at now: Int64) throws(StoreError) {
        let through = foldPoint(at: now)
        guard through > foldedThrough else { return }
        try fold(through: through, intoTotals: true)
    }

    /// Folds the five-minute rows in [foldedThrough, through) into the
    /// coarse rows and, `intoTotals`, into the all-time totals.
    func fold(through: Int64, intoTotals: Bool) throws(StoreError) {
        let rows = try database.query("""
            SELECT interface_id, start, last_counted, \(Self.counterColumns) FROM bucket
            WHERE granularity = '5min' AND start >= ? AND start < ?
            """, [.integer(foldedThrough), .integer(through)]) { (row) throws(StoreError) in
            (id: row.integer(0), start: try time(row, 1), counted: try row.isNull(2) ? nil : time(row, 2), counters: try counters(row, from: 3))
        }
        struct Key: Hashable { var granularity: Granularity, start: Int64, id: Int64 }
        var sums: [Key: LinkCounters] = [:]
        var totals: [Int64: CountedSum] = [:]
        for row in rows {
            for granularity in Granularity.allCases where granularity != .fiveMinutes {
                sums[Key(granularity: granularity, start: TimeBuckets.start(of: granularity, containing: row.start), id: row.id), default: .zero] += row.counters
            }
            // A row with no time counted nothing (a reset event's mark): it
            // leaves last_seen where it is, as readers show it until now.
            totals[row.id, default: CountedSum()].add(row.counters, countedAt: row.counted)
        }
        for (key, counters) in sums { try add(counters, countedAt: nil, toBucket: key.granularity, startingAt: key.start, of: key.id) }
        if intoTotals {
            for (id, total) in totals { try addToTotals(total.counters, countedAt: total.counted, of: id) }
        }
        try writeMeta([("folded_through", String(through))])
        foldedThrough = through
    }

    /// Rows summed, and the latest time a commit counted in any of them.
    private struct CountedSum {
        var counters = LinkCounters.zero
        var counted: Int64?

        mutating func add(_ more: LinkCounters, countedAt time: Int64?) {
            counters += more
            if let time { counted = max(counted ?? time, time) }
        }
    }

    /// Drops the cached row ids: after rows are retired, a name seen again
    /// must get a new row, never the id it had.
    func forgetInterfaceIDs() { interfaceIDs.removeAll() }

}
