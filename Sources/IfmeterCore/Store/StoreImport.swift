/// An interface's history as another tool counted it, before ifmeter did (`ifmeter import vnstat`).
package struct ImportedInterface: Sendable, Hashable {
    package var name: String
    package var interfaceClass: InterfaceClass
    /// The file it came from.
    package var source: String
    /// Where ifmeter's own counting of the name began (its first sight); nil when it never saw it.
    package var seam: Int64?
    package var importedAt: Int64
    /// The other tool's all-time totals up to the seam (bytes only: vnStat keeps no packets).
    package var totals: LinkCounters

    package init(name: String, interfaceClass: InterfaceClass, source: String, seam: Int64?, importedAt: Int64, totals: LinkCounters) {
        self.name = name
        self.interfaceClass = interfaceClass
        self.source = source
        self.seam = seam
        self.importedAt = importedAt
        self.totals = totals
    }
}

/// One imported row: `granularity` nil for one of vnStat's top days.
package struct ImportedRow: Sendable, Hashable {
    package var granularity: Granularity?
    package var start: Int64
    package var rxBytes: UInt64
    package var txBytes: UInt64

    package init(_ granularity: Granularity?, start: Int64, rxBytes: UInt64, txBytes: UInt64) {
        self.granularity = granularity
        self.start = start
        self.rxBytes = rxBytes
        self.txBytes = txBytes
    }
}

extension CounterStore {
    /// The label of an exported row that holds imported history: vnStat's figures are estimates too.
    package static let importedBasis = basis + ", imported from vnStat"

    /// A store of schema 1 opened read-only has no imported history.
    var hasImportTables: Bool {
        get throws(StoreError) {
            try database.query("SELECT count(*) FROM sqlite_schema WHERE name = 'imported_bucket'") { $0.integer(0) }.first == 1
        }
    }

    package func importedInterfaces() throws(StoreError) -> [ImportedInterface] {
        guard try hasImportTables else { return [] }
        return try database.query("""
            SELECT name, class, source, seam, imported_at, rx_bytes, tx_bytes FROM imported_interface ORDER BY name
            """) { (row) throws(StoreError) in
            ImportedInterface(
                name: interfaceName(row, 0), interfaceClass: try member(row, 1, of: InterfaceClass.self), source: oneLine(row.text(2)),
                seam: row.isNull(3) ? nil : try time(row, 3), importedAt: try time(row, 4),
                totals: LinkCounters(rxBytes: try counter(row, 5), txBytes: try counter(row, 6)))
        }
    }

    /// Imported rows of one granularity (nil: the top days) with `from <= start < to`, as buckets
    /// marked imported, with the class their import recorded.
    func importedBuckets(_ granularity: Granularity?, from: Int64, to: Int64) throws(StoreError) -> [StoredBucket] {
        guard try hasImportTables else { return [] }
        return try database.query("""
            SELECT b.name, i.class, b.start, b.rx_bytes, b.tx_bytes
            FROM imported_bucket b JOIN imported_interface i ON i.name = b.name
            WHERE b.granularity = ? AND b.start >= ? AND b.start < ? ORDER BY b.start, b.name
            """, [.text(granularity?.rawValue ?? "top"), .integer(from), .integer(to)]) { (row) throws(StoreError) in
            StoredBucket(
                name: interfaceName(row, 0), interfaceClass: try member(row, 1, of: InterfaceClass.self).rawValue, granularity: granularity ?? .day,
                start: try time(row, 2), counters: LinkCounters(rxBytes: try counter(row, 3), txBytes: try counter(row, 4)), imported: true)
        }
    }

    /// vnStat's top days that no day row (ifmeter's or imported) covers any more.
    package func importedTopDays() throws(StoreError) -> [StoredBucket] {
        let days = Set(try buckets(.day).map { "\($0.start) \($0.name)" })
        return try importedBuckets(nil, from: .min, to: .max).filter { !days.contains("\($0.start) \($0.name)") }
    }

    /// Replaces `interface`'s imported history with `rows`, in one transaction: importing the same
    /// file again leaves the store as it was.
    package func replaceImport(_ interface: ImportedInterface, rows: [ImportedRow]) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            try deleteImport(of: interface.name)
            try database.run("""
                INSERT INTO imported_interface(name, class, source, seam, imported_at, rx_bytes, tx_bytes) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, [.text(interface.name), .text(interface.interfaceClass.rawValue), .text(interface.source),
                      interface.seam.map { .integer($0) } ?? .null, .integer(interface.importedAt),
                      .integer(Int64(clamping: interface.totals.rxBytes)), .integer(Int64(clamping: interface.totals.txBytes))])
            for row in rows {
                try database.run("""
                    INSERT INTO imported_bucket(name, granularity, start, rx_bytes, tx_bytes) VALUES (?, ?, ?, ?, ?)
                    """, [.text(interface.name), .text(row.granularity?.rawValue ?? "top"), .integer(row.start),
                          .integer(Int64(clamping: row.rxBytes)), .integer(Int64(clamping: row.txBytes))])
            }
        }
    }

    /// Inside the caller's transaction (`forget` too).
    func deleteImport(of name: String) throws(StoreError) {
        guard try hasImportTables else { return }
        try database.run("DELETE FROM imported_bucket WHERE name = ?", [.text(name)])
        try database.run("DELETE FROM imported_interface WHERE name = ?", [.text(name)])
    }

    /// The first sight of `name` by ifmeter itself, where imported history must stop.
    package func firstSeen(of name: String) throws(StoreError) -> Int64? {
        try database.query("SELECT first_seen FROM interface WHERE name = ?", [.text(name)]) { (row) throws(StoreError) in try time(row, 0) }.first
    }
}
