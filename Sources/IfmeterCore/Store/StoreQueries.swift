/// An interface's all-time totals as stored.
package struct StoredInterface: Sendable, Hashable {
    package var name: String
    package var interfaceClass: InterfaceClass
    package var signal: String
    package var kind: String
    package var firstSeen: Int64
    package var lastSeen: Int64
    package var totals: LinkCounters
    /// Why the totals may miss traffic; nil when nothing is known missing.
    package var incomplete: String?
}

/// One row of the reset log.
package struct StoredEvent: Sendable, Hashable {
    package var time: Int64
    package var name: String
    package var reason: ResetEvent.Reason
    package var oldIfindex: Int32?
    package var newIfindex: Int32?
    package var loss: ResetEvent.Loss
    package var detail: String
    /// Not in the store yet: what the stopped daemon will record at its
    /// next start, which `status` already shows (its totals follow it).
    package var pending = false
}

extension StoredEvent {
    /// `event` as the stopped daemon will record it at its next start.
    init(pending event: ResetEvent, at now: Int64) {
        self.init(
            time: now, name: event.name, reason: event.reason, oldIfindex: event.oldIfindex, newIfindex: event.newIfindex,
            loss: event.loss, detail: event.detail, pending: true)
    }
}

extension CounterStore {
    /// rx bytes, tx bytes, rx packets, tx packets from four columns (what
    /// buckets and per-life counts keep).
    func bytesAndPackets(_ row: SQLiteRow, from column: Int32) throws(StoreError) -> LinkCounters {
        LinkCounters(
            rxBytes: try counter(row, column), txBytes: try counter(row, column + 1),
            rxPackets: try counter(row, column + 2), txPackets: try counter(row, column + 3))
    }

    // Every number is checked where it leaves SQLite: out of range is refused (exit 65),
    // never clamped into figures that look real.

    /// A counter: the daemon only ever writes 0...Int64.max.
    func counter(_ row: SQLiteRow, _ column: Int32) throws(StoreError) -> UInt64 {
        let value = row.integer(column)
        guard value >= 0 else { throw invalid(row, column, "\(value) is negative") }
        return UInt64(value)
    }

    /// Unix seconds between 1970 and about the year 36000: arithmetic on
    /// them (bucket starts, ages, cycles) cannot overflow.
    static let timeRange: ClosedRange<Int64> = 0...(1 << 40)

    /// The kernel's ifindexes are positive 32-bit integers.
    static let ifindexRange: ClosedRange<Int64> = 0...Int64(Int32.max)

    func time(_ row: SQLiteRow, _ column: Int32) throws(StoreError) -> Int64 {
        let value = row.integer(column)
        guard Self.timeRange.contains(value) else { throw invalid(row, column, "\(value) is not a time") }
        return value
    }

    /// An ifindex, or none (NULL).
    func ifindex(_ row: SQLiteRow, _ column: Int32) throws(StoreError) -> Int32? {
        guard let value = row.optionalInteger(column) else { return nil }
        guard Self.ifindexRange.contains(value) else { throw invalid(row, column, "\(value) is not an ifindex") }
        return Int32(value)
    }

    /// Seconds on the boot clock (negative after a clock step): finite.
    func seconds(_ row: SQLiteRow, _ column: Int32) throws(StoreError) -> Double {
        let value = row.real(column)
        guard value.isFinite, value.magnitude < 1e12 else { throw invalid(row, column, "\(value) is not a time since boot") }
        return value
    }

    /// Free text as stored (signal, kind, detail, incomplete), shown inside
    /// a line: a line break an edited store put there is made visible, so it
    /// cannot start a line of its own on a screen or in the metrics file.
    func oneLine(_ text: String) -> String { text.escaping(EscapeTable.oneLine) }

    /// A value of one of the store's closed vocabularies (reason, loss, class).
    func member<T: RawRepresentable>(_ row: SQLiteRow, _ column: Int32, of type: T.Type) throws(StoreError) -> T where T.RawValue == String {
        let text = row.text(column)
        guard let value = T(rawValue: text) else {
            // Quoted on one line whatever the store holds (the terminal
            // filter makes the other controls visible).
            throw invalid(row, column, "\"\(String(text.prefix(40)).escaping(EscapeTable.oneLine))\" is not a known value")
        }
        return value
    }

    /// An interface name as stored (InterfaceName's encoding, or a retired class's row);
    /// anything else is shown encoded, so no byte of it reaches a terminal raw.
    func interfaceName(_ row: SQLiteRow, _ column: Int32) -> String {
        InterfaceName.fromUser(row.text(column))
    }

    private func invalid(_ row: SQLiteRow, _ column: Int32, _ problem: String) -> StoreError {
        .invalidValue(path: path, detail: "\(row.name(column)) \(problem)")
    }

    /// Every interface with its all-time totals, by name.
    package func interfaces() throws(StoreError) -> [StoredInterface] {
        try interfaces(named: nil)
    }

    /// One interface's row, if the store has it.
    package func interface(named name: String) throws(StoreError) -> StoredInterface? {
        try interfaces(named: name).first
    }

    /// An interface's totals: its row plus its five-minute rows not yet folded, in one
    /// statement, so that a fold committed meanwhile counts them once.
    private func interfaces(named name: String?) throws(StoreError) -> [StoredInterface] {
        let named = name == nil ? "" : "AND i.name = ?1"
        let unfolded = """
            UNION ALL
            SELECT i.name, NULL, NULL, NULL, NULL, b.last_counted, NULL, \(Self.counterColumns.list { "b.\($0)" }), 1
            FROM bucket b JOIN interface i ON i.id = b.interface_id
            WHERE b.granularity = '5min' AND b.start >= (\(Self.foldedThroughQuery)) \(named)
            """
        let rows = try database.query("""
            SELECT i.name, i.class, i.signal, i.kind, i.first_seen, i.last_seen, i.incomplete, \(Self.counterColumns.list { "i.\($0)" }), 0
            FROM interface i WHERE true \(named)
            \(unfolded)
            ORDER BY 1, 16
            """, name.map { [.text($0)] } ?? []) { (row) throws(StoreError) -> (name: String, stored: StoredInterface?, lastCounted: Int64?, counters: LinkCounters) in
            guard row.integer(15) == 0 else {
                return (interfaceName(row, 0), nil, row.isNull(5) ? nil : try time(row, 5), try counters(row, from: 7))
            }
            let stored = StoredInterface(
                name: interfaceName(row, 0), interfaceClass: try member(row, 1, of: InterfaceClass.self), signal: oneLine(row.text(2)), kind: oneLine(row.text(3)),
                firstSeen: try time(row, 4), lastSeen: try time(row, 5), totals: try counters(row, from: 7), incomplete: row.optionalText(6).map(oneLine))
            return (stored.name, stored, nil, .zero)
        }
        // Each interface's row comes first, then its unfolded rows.
        var merged: [StoredInterface] = []
        for row in rows {
            if let stored = row.stored {
                merged.append(stored)
            } else if let last = merged.indices.last, merged[last].name == row.name {
                merged[last].totals += row.counters
                if let counted = row.lastCounted { merged[last].lastSeen = max(merged[last].lastSeen, counted) }
            }
        }
        return merged
    }

    /// The reset log, oldest first.
    package func events() throws(StoreError) -> [StoredEvent] {
        try events(where: "")
    }

    private var hasUnseenLosses: Bool {
        get throws(StoreError) {
            try database.query("SELECT count(*) FROM pragma_table_info('event') WHERE name = 'unseen_seconds'") { $0.integer(0) }.first == 1
        }
    }

    /// Each interface's latest reset, without reading the whole log.
    package func lastEvents() throws(StoreError) -> [String: StoredEvent] {
        let latest = try events(where: "WHERE e.id IN (SELECT max(id) FROM event GROUP BY interface_id)")
        return Dictionary(latest.map { ($0.name, $0) }, uniquingKeysWith: { _, newer in newer })
    }

    private func events(where condition: String) throws(StoreError) -> [StoredEvent] {
        // A schema-2 store read as it is (no writer upgraded it) has no unseen losses.
        let unseen = try hasUnseenLosses ? "e.unseen_seconds" : "NULL"
        return try database.query("""
            SELECT e.time, i.name, e.reason, e.old_ifindex, e.new_ifindex, e.loss, e.detail, e.discarded_rx_bytes, e.discarded_tx_bytes, \(unseen)
            FROM event e JOIN interface i ON i.id = e.interface_id \(condition) ORDER BY e.id
            """) { (row) throws(StoreError) in
            let loss: ResetEvent.Loss = switch row.text(5) {
            case "none": .none
            case "discarded": .discarded(rxBytes: UInt64(bitPattern: row.integer(7)), txBytes: UInt64(bitPattern: row.integer(8)))
            case "unseen" where !row.isNull(9): .unseen(seconds: UInt64(max(0, row.integer(9))))
            default: .unknown
            }
            return StoredEvent(
                time: try time(row, 0), name: interfaceName(row, 1), reason: try member(row, 2, of: ResetEvent.Reason.self),
                oldIfindex: try ifindex(row, 3), newIfindex: try ifindex(row, 4),
                loss: loss, detail: oneLine(row.text(6)))
        }
    }

    /// The sum of one granularity's buckets per interface (a consistency check:
    /// every granularity must add up to the same totals while nothing is pruned).
    package func bucketTotals(_ granularity: Granularity) throws(StoreError) -> [String: LinkCounters] {
        let unfolded = granularity == .fiveMinutes ? "" : "OR (b.granularity = '5min' AND b.start >= (\(Self.foldedThroughQuery)))"
        return try sumsByName("""
            SELECT i.name, sum(b.rx_bytes), sum(b.tx_bytes), sum(b.rx_packets), sum(b.tx_packets)
            FROM bucket b JOIN interface i ON i.id = b.interface_id WHERE b.granularity = ? \(unfolded) GROUP BY i.name
            """, [.text(granularity.rawValue)])
    }

    /// Runs a `name, rx bytes, tx bytes, rx packets, tx packets` query.
    private func sumsByName(_ sql: String, _ values: [SQLiteValue]) throws(StoreError) -> [String: LinkCounters] {
        let rows = try database.query(sql, values) { (row) throws(StoreError) in (interfaceName(row, 0), try bytesAndPackets(row, from: 1)) }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }

    /// SQLite's own structural check ("ok" when sound).
    package func integrityCheck() throws(StoreError) -> String {
        return try database.query("PRAGMA integrity_check") { $0.text(0) }.joined(separator: "; ")
    }
}

/// One time bucket of one interface.
package struct StoredBucket: Sendable, Hashable {
    package var name: String
    /// A class the store holds (checked when read), or "mixed" once buckets
    /// of interfaces of several classes are merged for display.
    package var interfaceClass: String
    package var granularity: Granularity
    package var start: Int64
    package var counters: LinkCounters
    package var incomplete: String?
    /// Holds history another tool counted (`ifmeter import`).
    package var imported = false
}

extension CounterStore {
    /// For readers: every query from now on sees one commit (a read transaction held until
    /// close), taken before the kernel is read, so no baseline is newer than the counters.
    package func holdSnapshot() throws(StoreError) {
        try database.execute("BEGIN")
        // A deferred transaction's snapshot begins at its first read.
        _ = try database.query("SELECT count(*) FROM meta") { $0.integer(0) }
    }

    /// A value from the meta table (boot_id, last_commit, sample_interval, commit_interval).
    /// The daemon's heartbeat keys are checked like every other number:
    /// a value that is not one in range reads as absent (unknown).
    package func meta(_ key: String) throws(StoreError) -> String? {
        let value: String?
        value = try database.query("SELECT value FROM meta WHERE key = ?", [.text(key)]) { $0.text(0) }.first
        switch key {
        case "last_commit":
            return value.flatMap { Int64($0) }.flatMap { Self.timeRange.contains($0) ? value : nil }
        case "sample_interval", "commit_interval":
            return value.flatMap { Double($0) }.flatMap { $0.isFinite && $0 >= 0 && $0 <= 1e9 ? value : nil }
        case "config_file", "watched":
            // Shown in a line on a terminal: bounded, its controls made visible.
            return value.map { oneLine(String($0.prefix(4096))) }
        default:
            return value
        }
    }

    /// Buckets of one granularity with `from <= start < to`, oldest first: ifmeter's own and the
    /// imported, summed where both cover one period (the seam's), marked imported.
    package func buckets(_ granularity: Granularity, from: Int64 = .min, to: Int64 = .max) throws(StoreError) -> [StoredBucket] {
        let own = try countedBuckets(granularity, from: from, to: to)
        let imported = try importedBuckets(granularity, from: from, to: to)
        guard !imported.isEmpty else { return own }
        struct Key: Hashable { var start: Int64, name: String }
        var merged = Dictionary(own.map { (Key(start: $0.start, name: $0.name), $0) }, uniquingKeysWith: { first, _ in first })
        for bucket in imported {
            let key = Key(start: bucket.start, name: bucket.name)
            if var mine = merged[key] {
                mine.counters += bucket.counters
                mine.imported = true
                merged[key] = mine
            } else {
                merged[key] = bucket
            }
        }
        return merged.values.sorted { $0.start != $1.start ? $0.start < $1.start : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// ifmeter's own buckets, with the five-minute rows not yet folded into them, in one statement.
    private func countedBuckets(_ granularity: Granularity, from: Int64, to: Int64) throws(StoreError) -> [StoredBucket] {
        let unfolded = granularity == .fiveMinutes ? "" : """
            UNION ALL
            SELECT i.name, i.class, b.start, b.rx_bytes, b.tx_bytes, b.rx_packets, b.tx_packets, NULL, 1
            FROM bucket b JOIN interface i ON i.id = b.interface_id
            WHERE b.granularity = '5min' AND b.start >= (\(Self.foldedThroughQuery))
            """
        let rows = try database.query("""
            SELECT i.name, i.class, b.start, b.rx_bytes, b.tx_bytes, b.rx_packets, b.tx_packets, b.incomplete, 0
            FROM bucket b JOIN interface i ON i.id = b.interface_id
            WHERE b.granularity = ? AND b.start >= ? AND b.start < ?
            \(unfolded)
            ORDER BY 3, 1
            """, [.text(granularity.rawValue), .integer(from), .integer(to)]) { (row) throws(StoreError) in
            var bucket = StoredBucket(
                name: interfaceName(row, 0), interfaceClass: try member(row, 1, of: InterfaceClass.self).rawValue, granularity: granularity, start: try time(row, 2),
                counters: try bytesAndPackets(row, from: 3),
                incomplete: row.optionalText(7).map(oneLine))
            let isUnfolded = row.integer(8) == 1
            if isUnfolded { bucket.start = TimeBuckets.start(of: granularity, containing: bucket.start) }
            return (bucket: bucket, isUnfolded: isUnfolded)
        }
        guard rows.contains(where: \.isUnfolded) else { return rows.map(\.bucket) }
        struct Key: Hashable { var start: Int64, name: String }
        var merged: [Key: StoredBucket] = [:]
        for (bucket, isUnfolded) in rows where !isUnfolded || (bucket.start >= from && bucket.start < to) {
            merged[Key(start: bucket.start, name: bucket.name), default: StoredBucket(
                name: bucket.name, interfaceClass: bucket.interfaceClass, granularity: granularity, start: bucket.start, counters: .zero)]
                .counters += bucket.counters
            if let incomplete = bucket.incomplete { merged[Key(start: bucket.start, name: bucket.name)]?.incomplete = incomplete }
        }
        // The order SQL gives (BINARY: the names' UTF-8 bytes).
        return merged.values.sorted { $0.start != $1.start ? $0.start < $1.start : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The value below which five-minute rows are folded.
    static let foldedThroughQuery = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'folded_through'"

    /// What ifmeter counted per interface during one boot (bytes and packets),
    /// under the names the totals went to.
    package func counted(bootID: String) throws(StoreError) -> [String: LinkCounters] {
        try sumsByName("""
            SELECT i.name, b.rx_bytes, b.tx_bytes, b.rx_packets, b.tx_packets
            FROM boot_total b JOIN interface i ON i.id = b.interface_id WHERE b.boot_id = ?
            """, [.text(bootID)])
    }
}

extension CounterStore {
    /// One interface's resets, by reason.
    package func resetCounts(of name: String) throws(StoreError) -> [String: UInt64] {
        try resetCounts(named: name)[name] ?? [:]
    }

    /// Each interface's resets, by reason: those the log lists, and those
    /// the prune deleted (`reset_count`), so a count read
    /// at a start is never below the one the last process wrote.
    package func resetCounts() throws(StoreError) -> [String: [String: UInt64]] {
        try resetCounts(named: nil)
    }

    private func resetCounts(named name: String?) throws(StoreError) -> [String: [String: UInt64]] {
        let only = name == nil ? "" : "WHERE i.name = ?1"
        let rows = try database.query("""
            SELECT name, reason, sum(n) FROM (
              SELECT i.name AS name, c.reason AS reason, c.count AS n FROM reset_count c JOIN interface i ON i.id = c.interface_id \(only)
              UNION ALL
              SELECT i.name AS name, e.reason AS reason, count(*) AS n FROM event e JOIN interface i ON i.id = e.interface_id \(only)
                GROUP BY i.name, e.reason)
            GROUP BY name, reason
            """, name.map { [.text($0)] } ?? []) { (interfaceName($0, 0), $0.text(1), UInt64(clamping: $0.integer(2))) }
        return rows.reduce(into: [:]) { counts, row in counts[row.0, default: [:]][row.1] = row.2 }
    }
}

extension CounterStore {
    // MARK: Reading back state for the daemon

    /// What the daemon needs before its first sample.
    package func loadState() throws(StoreError) -> StoredState {
        let lastBoot = try meta("boot_id")
        let lastNamespace = try meta("netns").flatMap { UInt64($0) } ?? 0
        let lives = try database.query("""
            SELECT boot_id, ifindex, name, since_boot, first_seen, last_seen, netns, \(Self.counterColumns) FROM life WHERE ended IS NULL
            """) { (row) throws(StoreError) in
            StoredLife(bootID: row.text(0), namespace: UInt64(bitPattern: row.integer(6)), life: TrackedLife(
                ifindex: Int32(truncatingIfNeeded: row.integer(1)), name: row.text(2), counters: Self.kernelCounters(row, from: 7),
                sinceBoot: try seconds(row, 3), firstSeen: try time(row, 4), lastSeen: try time(row, 5)))
        }
        let names = try database.query("SELECT name FROM interface") { $0.text(0) }
        var present: IfindexTable<String>?
        if try meta("presence") != nil {
            present = IfindexTable(firstOf: try presentLinkRows())
        }
        var endedIndexes: Set<Int32> = []
        if let lastBoot {
            let rows = try database.query(
                "SELECT DISTINCT ifindex FROM life WHERE ended IS NOT NULL AND boot_id = ? AND netns = ?",
                [.text(lastBoot), Self.value(lastNamespace)]) { Int32(truncatingIfNeeded: $0.integer(0)) }
            endedIndexes = Set(rows)
        }
        return StoredState(
            lastBootID: lastBoot, lastNamespace: lastNamespace, openLives: lives, knownNames: Set(names), presentLinks: present,
            endedIndexes: endedIndexes, cleanStop: try meta("clean_stop").flatMap(CleanStop.init(text:)))
    }

}
