extension CounterStore {
    /// Removes an interface and every row that refers to it, in one
    /// transaction (`ifmeter forget`, with no daemon running). Returns
    /// whether the name is still counted: a link present at the last commit
    /// keeps its open life (the kernel counters the next start compares
    /// with, or the traffic in between is lost) and so a row of its own,
    /// with every total back at zero.
    @discardableResult
    package func forget(_ shownName: String) throws(StoreError) -> Bool {
        var stillCounted = false
        guard let name = try storedName(shownAs: shownName) else {
            try database.transaction { () throws(StoreError) in try deleteImport(of: shownName) }
            return false
        }
        try database.transaction { () throws(StoreError) in
            try deleteImport(of: name)
            guard let id = try database.query("SELECT id FROM interface WHERE name = ?", [.text(name)], row: { $0.integer(0) }).first else { return }
            // A life begun under this name and renamed since is the renamed
            // link's: it moves to that name's row (made like this one if no
            // commit made it yet) and goes on. Not from an aggregate: its
            // lives (ended, kept by FiveMinuteHours=) are the retired names',
            // which would come back as rows.
            if !InterfaceName.isRetired(name) {
                try database.run("""
                    INSERT INTO interface(name, class, signal, kind, first_seen, last_seen)
                      SELECT DISTINCT l.name, i.class, i.signal, i.kind, i.last_seen, i.last_seen
                      FROM life l JOIN interface i ON i.id = l.interface_id WHERE l.interface_id = ? AND l.name != i.name
                    ON CONFLICT(name) DO NOTHING
                    """, [.integer(id)])
                try database.run("""
                    UPDATE life SET interface_id = (SELECT n.id FROM interface n WHERE n.name = life.name)
                    WHERE interface_id = ? AND name != ?
                    """, [.integer(id), .text(name)])
            }
            for table in ["bucket", "event", "boot_total", "reset_count"] {
                try database.run("DELETE FROM \(table) WHERE interface_id = ?", [.integer(id)])
            }
            try database.run("DELETE FROM life WHERE interface_id = ? AND ended IS NOT NULL", [.integer(id)])
            // Or renamed to this name: its life is the old name's row, and goes on.
            stillCounted = try database.query(
                "SELECT count(*) FROM life WHERE interface_id = ? OR (name = ? AND ended IS NULL)", [.integer(id), .text(name)], row: { $0.integer(0) }
            ).first ?? 0 > 0
            if stillCounted {
                try database.run("""
                    UPDATE interface SET \(Self.counterColumns.list { "\($0) = 0" }), incomplete = NULL, first_seen = last_seen WHERE id = ?
                    """, [.integer(id)])
            } else {
                try database.run("DELETE FROM interface WHERE id = ?", [.integer(id)])
            }
        }
        interfaceIDs[name] = nil
        return stillCounted
    }

    /// The name a row holds that readers show as `name` (`interfaceName`):
    /// the same, but for a row no daemon wrote, which they show encoded.
    func storedName(shownAs name: String) throws(StoreError) -> String? {
        if !(try database.query("SELECT 1 FROM interface WHERE name = ?", [.text(name)]) { $0.integer(0) }).isEmpty { return name }
        return try database.query("SELECT name FROM interface") { $0.text(0) }.first { InterfaceName.fromUser($0) == name }
    }

}
