/// What an edit did, or why it was refused (the store unchanged), in the line `ifmeter` prints.
package struct EditOutcome: Sendable, Equatable {
    package var status: ExitCode
    package var message: String

    package init(_ status: ExitCode, _ message: String) {
        self.status = status
        self.message = message
    }
}

extension CounterStore {
    /// Applies one edit in one transaction. Moving history needs its source gone from the kernel:
    /// a link counted now keeps its open life under its name, and moving that would split it.
    package func apply(_ edit: StoreEdit) throws(StoreError) -> EditOutcome {
        switch edit {
        case .forget(let name):
            guard try isKnown(name) else { return try unknown(name) }
            return try forget(name)
                ? EditOutcome(.success, "\(name): its records were removed from \(path); it was present at the last commit, so ifmeterd counts it on from zero")
                : EditOutcome(.success, "\(name): removed from \(path)")
        case .rename(let shownOld, let new):
            let old = try storedName(shownAs: shownOld) ?? shownOld
            if let refused = try refusal(moving: old, to: new) { return refused }
            if try isKnown(new) { return EditOutcome(.usage, "\(new) has records of its own; merge \(old) \(new) adds \(old)'s to them") }
            try move(old, into: new)
            return EditOutcome(.success, "\(old): its history is now \(new)'s in \(path)")
        case .merge(let shownSource, let shownTarget):
            let source = try storedName(shownAs: shownSource) ?? shownSource
            let target = try storedName(shownAs: shownTarget) ?? shownTarget
            if let refused = try refusal(moving: source, to: target) { return refused }
            try move(source, into: target)
            return EditOutcome(.success, "\(source): its history was added to \(target)'s in \(path)")
        case .watch(let name), .unwatch(let name):
            let watched = if case .watch = edit { true } else { false }
            try writeMeta([(Self.watchKey + name, watched ? "watch" : "ignore")])
            return EditOutcome(.success, watched
                ? "\(name): counted from now on, whatever its class (ifmeter unwatch \(name) stops it)"
                : "\(name): not counted from now on; its history stays (ifmeter forget \(name) --force removes it)")
        }
    }

    static let watchKey = "watch:"

    /// The names `ifmeter watch` (true) and `unwatch` (false) chose, which win over Watch= and [Classes].
    package func chosenWatches() throws(StoreError) -> [String: Bool] {
        let rows = try database.query("SELECT key, value FROM meta WHERE key >= 'watch:' AND key < 'watch;'") { row in
            (String(row.text(0).dropFirst(Self.watchKey.count)), row.text(1) == "watch")
        }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }

    private func isKnown(_ name: String) throws(StoreError) -> Bool {
        if try storedName(shownAs: name) != nil { return true }
        return try importedInterfaces().contains { $0.name == name }
    }

    private func interfaceID(_ name: String) throws(StoreError) -> Int64? {
        try database.query("SELECT id FROM interface WHERE name = ?", [.text(name)]) { $0.integer(0) }.first
    }

    private func unknown(_ name: String) throws(StoreError) -> EditOutcome {
        let known = try interfaces().map(\.name) + importedInterfaces().map(\.name)
        return EditOutcome(.usage, "no interface \(name) (known: \(NaturalOrder.sorted(Array(Set(known))).joined(separator: " ")))")
    }

    private func refusal(moving source: String, to target: String) throws(StoreError) -> EditOutcome? {
        guard try isKnown(source) else { return try unknown(source) }
        if source == target { return EditOutcome(.usage, "\(source) and \(target) are one interface") }
        if let retired = [source, target].first(where: InterfaceName.isRetired) {
            return EditOutcome(.usage, "\(retired) holds a class's retired interfaces; it is not one to move")
        }
        let open = try database.query("""
            SELECT count(*) FROM life l JOIN interface i ON i.id = l.interface_id WHERE (i.name = ?1 OR l.name = ?1) AND l.ended IS NULL
            """, [.text(source)]) { $0.integer(0) }.first ?? 0
        if open > 0 {
            return EditOutcome(.usage, "\(source) is a link counted now; only the history of a name no longer present moves (rename the link with ip link set first)")
        }
        return nil
    }

    /// `source`'s rows become `target`'s, added to any it has: totals, buckets, events, resets, imports.
    private func move(_ source: String, into target: String) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            if let from = try interfaceID(source) {
                if let into = try interfaceID(target) {
                    try add(from, into: into, targetName: target)
                } else {
                    try database.run("UPDATE interface SET name = ? WHERE id = ?", [.text(target), .integer(from)])
                    try database.run("UPDATE life SET name = ? WHERE interface_id = ?", [.text(target), .integer(from)])
                }
            }
            try moveImport(source, into: target)
        }
        interfaceIDs[source] = nil
        interfaceIDs[target] = nil
    }

    private func add(_ from: Int64, into: Int64, targetName: String) throws(StoreError) {
        let counters = Self.counterColumns
        let sums = { (columns: Columns) in columns.list { "\($0) = \($0) + excluded.\($0)" } }
        try database.run("""
            INSERT INTO bucket(interface_id, granularity, start, \(counters), incomplete, last_counted)
              SELECT ?2, granularity, start, \(counters), incomplete, last_counted FROM bucket WHERE interface_id = ?1
            ON CONFLICT(granularity, start, interface_id) DO UPDATE SET \(sums(counters)),
              incomplete = coalesce(incomplete, excluded.incomplete),
              last_counted = max(coalesce(last_counted, excluded.last_counted), coalesce(excluded.last_counted, last_counted))
            """, [.integer(from), .integer(into)])
        try database.run("""
            INSERT INTO boot_total(boot_id, interface_id, \(Self.byteAndPacketColumns))
              SELECT boot_id, ?2, \(Self.byteAndPacketColumns) FROM boot_total WHERE interface_id = ?1
            ON CONFLICT(boot_id, interface_id) DO UPDATE SET \(sums(Self.byteAndPacketColumns))
            """, [.integer(from), .integer(into)])
        try database.run("""
            INSERT INTO reset_count(interface_id, reason, count) SELECT ?2, reason, count FROM reset_count WHERE interface_id = ?1
            ON CONFLICT(interface_id, reason) DO UPDATE SET count = count + excluded.count
            """, [.integer(from), .integer(into)])
        try database.run("""
            UPDATE interface SET \(counters.list { "\($0) = \($0) + (SELECT s.\($0) FROM interface s WHERE s.id = ?1)" }),
              first_seen = min(first_seen, (SELECT first_seen FROM interface WHERE id = ?1)),
              last_seen = max(last_seen, (SELECT last_seen FROM interface WHERE id = ?1)),
              incomplete = coalesce(incomplete, (SELECT incomplete FROM interface WHERE id = ?1))
            WHERE id = ?2
            """, [.integer(from), .integer(into)])
        try database.run("UPDATE event SET interface_id = ?2 WHERE interface_id = ?1", [.integer(from), .integer(into)])
        try database.run("UPDATE life SET interface_id = ?2, name = ?3 WHERE interface_id = ?1", [.integer(from), .integer(into), .text(targetName)])
        for table in ["bucket", "boot_total", "reset_count"] {
            try database.run("DELETE FROM \(table) WHERE interface_id = ?", [.integer(from)])
        }
        try database.run("DELETE FROM interface WHERE id = ?", [.integer(from)])
    }

    private func moveImport(_ source: String, into target: String) throws(StoreError) {
        guard try hasImportTables else { return }
        try database.run("""
            INSERT INTO imported_bucket(name, granularity, start, rx_bytes, tx_bytes)
              SELECT ?2, granularity, start, rx_bytes, tx_bytes FROM imported_bucket WHERE name = ?1
            ON CONFLICT(name, granularity, start) DO UPDATE SET rx_bytes = rx_bytes + excluded.rx_bytes, tx_bytes = tx_bytes + excluded.tx_bytes
            """, [.text(source), .text(target)])
        try database.run("""
            INSERT INTO imported_interface(name, class, source, seam, imported_at, rx_bytes, tx_bytes)
              SELECT ?2, class, source, seam, imported_at, rx_bytes, tx_bytes FROM imported_interface WHERE name = ?1
            ON CONFLICT(name) DO UPDATE SET rx_bytes = rx_bytes + excluded.rx_bytes, tx_bytes = tx_bytes + excluded.tx_bytes,
              seam = max(coalesce(seam, excluded.seam), coalesce(excluded.seam, seam))
            """, [.text(source), .text(target)])
        try database.run("DELETE FROM imported_bucket WHERE name = ?", [.text(source)])
        try database.run("DELETE FROM imported_interface WHERE name = ?", [.text(source)])
    }
}
