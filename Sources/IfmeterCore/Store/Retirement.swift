/// Keeps the store bounded whatever the churn of names: a name gone for longer than
/// the daily retention is folded into one `retired <class>` row per class, so every
/// per-class total stays the same to the byte while the name's own rows go.
extension CounterStore {
    /// Every step runs inside the commit's transaction, from the hourly
    /// detail prune (`prune`): a failure rolls back the commit with it.
    func pruneNamesAndBoots(_ retention: Retention, at now: Int64) throws(StoreError) {
        try pruneOtherBoots(retention)
        try retireGoneInterfaces(retention, at: now)
    }

    /// Moves each interface's `last_seen` up to its lives' latest moment before ended
    /// lives are pruned, so retirement measures how long a name has really been gone.
    func notePresenceFromLives() throws(StoreError) {
        try database.run("""
            UPDATE interface SET last_seen = seen.time
            FROM (SELECT interface_id, max(max(last_seen, coalesce(ended, 0))) AS time FROM life GROUP BY interface_id) AS seen
            WHERE seen.interface_id = interface.id AND typeof(seen.time) = 'integer' AND seen.time <= ?
              AND typeof(interface.last_seen) = 'integer' AND seen.time > interface.last_seen
            """, [.integer(Self.timeRange.upperBound)])
    }

    /// Drops the `boot_total` rows of past boots with the daily retention: no report reads
    /// them, and every byte in them is also in the totals and buckets (`DailyDays=0` keeps them).
    func pruneOtherBoots(_ retention: Retention) throws(StoreError) {
        guard retention.dailyDays > 0 else { return }
        // The boot the commit in progress writes (its first statement sets it).
        try database.run("""
            DELETE FROM boot_total WHERE boot_id != (SELECT value FROM meta WHERE key = 'boot_id')
            """)
    }

    /// Folds every interface gone for longer than `retention.retirementAge` (no open life,
    /// nothing counted and no reset event within it) into its class's `retired <class>` row;
    /// returns how many names went. Rows a reader would refuse are left as they are.
    @discardableResult
    func retireGoneInterfaces(_ retention: Retention, at now: Int64) throws(StoreError) -> Int {
        guard let age = retention.retirementAge, now > age else { return 0 }
        let cutoff = now - age
        let classes = InterfaceClass.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS retiring (id INTEGER PRIMARY KEY, class TEXT NOT NULL)")
        try database.run("DELETE FROM temp.retiring")
        // A name with a bare space is an aggregate already (no kernel name has one).
        try database.run("""
            INSERT INTO temp.retiring(id, class)
              SELECT id, class FROM interface
              WHERE typeof(last_seen) = 'integer' AND last_seen BETWEEN 0 AND ? AND typeof(first_seen) = 'integer' AND first_seen BETWEEN 0 AND last_seen
                AND class IN (\(classes)) AND instr(name, ' ') = 0
                AND id NOT IN (SELECT interface_id FROM life WHERE ended IS NULL)
                AND name NOT IN (SELECT name FROM life WHERE ended IS NULL)
                AND id NOT IN (SELECT interface_id FROM event)
                AND id NOT IN (SELECT interface_id FROM bucket WHERE granularity = '5min' AND start >= ?)
            """, [.integer(cutoff - 1), .integer(cutoff)])
        guard try database.query("SELECT count(*) FROM temp.retiring", row: { $0.integer(0) }).first ?? 0 > 0 else { return 0 }

        // A retiring name's `interface` row holds all its totals: the fold ran first (`prune`).
        let eight = Self.counterColumns
        let four = Self.byteAndPacketColumns
        let aggregate = "a.name = 'retired ' || r.class"

        // The writer's headroom (`checkHeadroom`) holds for the aggregate too: a class whose
        // sums would pass 2^62 is not retired.
        let overflowing = [("bucket", eight), ("boot_total", four)].map { table, columns in
            """
            SELECT r.class FROM temp.retiring r JOIN \(table) b ON b.interface_id = r.id GROUP BY r.class
            HAVING max(\(columns.list { "total(b.\($0))" })) + coalesce((SELECT max(\(columns.list { "max(ab.\($0))" }))
              FROM \(table) ab JOIN interface a ON a.id = ab.interface_id WHERE \(aggregate)), 0) > ?1
            """
        }
        try database.run("""
            DELETE FROM temp.retiring WHERE class IN (
              SELECT r.class FROM temp.retiring r JOIN interface i ON i.id = r.id GROUP BY r.class
              HAVING max(\(eight.list { "total(i.\($0))" })) + coalesce((SELECT max(\(eight.list { "a.\($0)" })) FROM interface a WHERE \(aggregate)), 0) > ?1
              UNION \(overflowing.joined(separator: " UNION ")))
            """, [.integer(Self.counterLimit)])

        // The aggregates: `signal` counts the names folded in.
        try database.run("""
            INSERT INTO interface(name, class, signal, kind, first_seen, last_seen)
              SELECT 'retired ' || r.class, r.class, '0 names retired', 'retired', min(i.first_seen), max(i.last_seen)
              FROM temp.retiring r JOIN interface i ON i.id = r.id WHERE true GROUP BY r.class
            ON CONFLICT(name) DO NOTHING
            """)
        // A row of that name but another class (written by hand) cannot take
        // them without moving bytes between classes: those stay.
        try database.run("""
            DELETE FROM temp.retiring WHERE NOT EXISTS
              (SELECT 1 FROM interface a WHERE a.name = 'retired ' || temp.retiring.class AND a.class = temp.retiring.class)
            """)
        try database.run("""
            UPDATE interface AS a SET \(eight.list { "\($0) = a.\($0) + s.\($0)" }),
              first_seen = min(a.first_seen, s.first_seen), last_seen = max(a.last_seen, s.last_seen),
              signal = (CAST(a.signal AS INTEGER) + s.names) || ' names retired',
              incomplete = coalesce(s.incomplete, a.incomplete)
            FROM (SELECT r.class, \(eight.list { "sum(i.\($0)) AS \($0)" }), count(*) AS names,
                    min(i.first_seen) AS first_seen, max(i.last_seen) AS last_seen,
                    max(CASE WHEN i.incomplete IS NOT NULL THEN i.name || ': ' || i.incomplete END) AS incomplete
                  FROM temp.retiring r JOIN interface i ON i.id = r.id GROUP BY r.class) AS s
            WHERE a.name = 'retired ' || s.class
            """)
        // Buckets and this boot's counts, summed into the aggregate's; an
        // `incomplete` note keeps the name it was written for.
        try database.run("""
            INSERT INTO bucket(interface_id, granularity, start, \(eight), last_counted, incomplete)
              SELECT a.id, b.granularity, b.start, \(eight.list { "sum(b.\($0))" }), max(b.last_counted),
                max(CASE WHEN b.incomplete IS NOT NULL THEN i.name || ': ' || b.incomplete END)
              FROM temp.retiring r JOIN interface i ON i.id = r.id JOIN bucket b ON b.interface_id = r.id JOIN interface a ON \(aggregate)
              WHERE true GROUP BY a.id, b.granularity, b.start
            ON CONFLICT(granularity, start, interface_id) DO UPDATE SET
              \(eight.list { "\($0) = \($0) + excluded.\($0)" }),
              last_counted = coalesce(max(last_counted, excluded.last_counted), last_counted, excluded.last_counted),
              incomplete = coalesce(incomplete, excluded.incomplete)
            """)
        try database.run("""
            INSERT INTO boot_total(boot_id, interface_id, \(four))
              SELECT b.boot_id, a.id, \(four.list { "sum(b.\($0))" })
              FROM temp.retiring r JOIN boot_total b ON b.interface_id = r.id JOIN interface a ON \(aggregate)
              WHERE true GROUP BY b.boot_id, a.id
            ON CONFLICT(boot_id, interface_id) DO UPDATE SET \(four.list { "\($0) = \($0) + excluded.\($0)" })
            """)
        // Ended lives kept by FiveMinuteHours= keep their own name column.
        try database.run("""
            UPDATE life SET interface_id = (SELECT a.id FROM temp.retiring r JOIN interface a ON \(aggregate) WHERE r.id = life.interface_id)
            WHERE interface_id IN (SELECT id FROM temp.retiring)
            """)
        // Its resets counted past the log are its own series' (no aggregate has one).
        for table in ["bucket", "boot_total", "reset_count"] {
            try database.run("DELETE FROM \(table) WHERE interface_id IN (SELECT id FROM temp.retiring)")
        }
        let retired = try database.run("DELETE FROM interface WHERE id IN (SELECT id FROM temp.retiring)")
        // A name seen again must get a new row, not the id it had.
        forgetInterfaceIDs()
        return retired
    }
}
