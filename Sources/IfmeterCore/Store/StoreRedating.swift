extension CounterStore {
    /// Rows a wrong clock dated after `now` (a boot whose clock said 2031, then NTP) hold traffic
    /// that happened before now: it moves into now's rows, so no bucket stays in the future.
    /// Returns whether any row was in the future. Run only by a clock to be trusted.
    @discardableResult
    package func redateFuture(at now: Int64) throws(StoreError) -> Bool {
        let coarse = Granularity.allCases.filter { $0 != .fiveMinutes }
        let slot = TimeBuckets.start(of: .fiveMinutes, containing: now)
        var future = false
        for granularity in Granularity.allCases where !future {
            let rows = try database.query(
                "SELECT 1 FROM bucket WHERE granularity = ? AND start > ? LIMIT 1",
                [.text(granularity.rawValue), .integer(TimeBuckets.start(of: granularity, containing: now))]) { $0.integer(0) }
            future = !rows.isEmpty
        }
        guard future else { return false }
        try writeTransaction { () throws(StoreError) in
            // Every five-minute row folded first, the fold mark then brought back to now's slot:
            // what was folded into rows or totals dated later must not be folded again.
            let latest = try database.query("SELECT max(start) FROM bucket WHERE granularity = '5min'") { $0.isNull(0) ? nil : $0.integer(0) }.first ?? nil
            try fold(through: max(foldedThrough, (latest ?? slot) + 300, slot), intoTotals: true)
            for granularity in coarse {
                let current = TimeBuckets.start(of: granularity, containing: now)
                try move(granularity, from: current, to: current, countedBy: now)
            }
            // The current slot's row too: it is folded now, and the slot stays open for what comes.
            try move(.fiveMinutes, from: slot - 1, to: slot - 300, countedBy: now)
            try writeMeta([("folded_through", String(slot))])
            foldedThrough = slot
        }
        return true
    }

    /// Adds each interface's rows of `granularity` starting after `from` into its row at `target`.
    private func move(_ granularity: Granularity, from: Int64, to target: Int64, countedBy now: Int64) throws(StoreError) {
        let columns = Self.counterColumns
        try database.run("""
            INSERT INTO bucket(interface_id, granularity, start, \(columns), incomplete, last_counted)
              SELECT interface_id, ?1, ?3, \(columns.list { "sum(\($0))" }), max(incomplete), min(max(last_counted), ?4)
              FROM bucket WHERE granularity = ?1 AND start > ?2 GROUP BY interface_id
            ON CONFLICT(granularity, start, interface_id) DO UPDATE SET \(columns.list { "\($0) = \($0) + excluded.\($0)" }),
              incomplete = coalesce(incomplete, excluded.incomplete),
              last_counted = max(coalesce(last_counted, excluded.last_counted), coalesce(excluded.last_counted, last_counted))
            """, [.text(granularity.rawValue), .integer(from), .integer(target), .integer(now)])
        try database.run("DELETE FROM bucket WHERE granularity = ? AND start > ? AND start != ?",
                         [.text(granularity.rawValue), .integer(from), .integer(target)])
    }
}
