extension CounterStore {
    package static let schemaVersion: Int64 = 3

    /// One step of a future schema upgrade: the SQL that takes a store of
    /// `version - 1` to `version`, run in one transaction with the version.
    package struct Migration: Sendable {
        package var version: Int64
        package var sql: String

        package init(version: Int64, sql: String) {
            self.version = version
            self.sql = sql
        }
    }

    /// The steps from schema 1 on: 2 adds the imported history.
    package static let migrations = [Migration(version: 2, sql: importTables), Migration(version: 3, sql: unseenLoss)]

    /// Schema 3: a loss may be `unseen` for at most `unseen_seconds` (a clean stop, then a reboot). A
    /// CHECK changes only with its table: the log is copied into the new one, ids and all.
    static let unseenLoss = eventTable(named: "event_v3") + """
        INSERT INTO event_v3(id, time, interface_id, boot_id, reason, old_ifindex, new_ifindex, loss, discarded_rx_bytes, discarded_tx_bytes, detail, basis)
          SELECT id, time, interface_id, boot_id, reason, old_ifindex, new_ifindex, loss, discarded_rx_bytes, discarded_tx_bytes, detail, basis FROM event;
        DROP TABLE event;
        ALTER TABLE event_v3 RENAME TO event;
        CREATE INDEX event_time ON event(time);
        """

    /// History brought from another tool (`ifmeter import vnstat`), apart from what ifmeter counted:
    /// the daemon never reads, folds or prunes it, and its metrics never include it. Keyed by name,
    /// as a name ifmeter never saw has no `interface` row. `top` holds vnStat's top days.
    static let importTables = """
        CREATE TABLE imported_interface (
            name TEXT PRIMARY KEY,
            class TEXT NOT NULL,
            source TEXT NOT NULL,
            seam INTEGER,
            imported_at INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL, tx_bytes INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE imported_bucket (
            name TEXT NOT NULL,
            granularity TEXT NOT NULL CHECK (\(oneOf("granularity", ["5min", "hour", "day", "month", "year", "top"]))),
            start INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL, tx_bytes INTEGER NOT NULL,
            PRIMARY KEY (name, granularity, start)
        ) WITHOUT ROWID;
        """

    /// Runs each step above `version`, each in its own transaction: a crash
    /// between them leaves a store of the version between, upgraded at the
    /// next start.
    package func migrate(from version: Int64, through steps: [Migration]) throws(StoreError) {
        for step in steps where step.version > version {
            try database.transaction { () throws(StoreError) in
                try database.execute(step.sql)
                try database.execute("PRAGMA user_version = \(step.version)")
            }
        }
    }

    /// SQLite's page for new stores. A commit writes whole pages, and a
    /// life that begins and ends touches a row or two in each of about ten
    /// tables and indexes: 1 KiB pages write a quarter of what 4 KiB did.
    static let pageSize = 1024

    static let counterColumns = Columns("rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_dropped, tx_dropped")

    /// A column list, spelt once for SQL and split once, when made (bench/TRIES.md).
    struct Columns: CustomStringConvertible {
        let description: String
        let components: [String]
        init(_ text: String) {
            description = text
            components = text.split(separator: ",").map { $0.trimmingWhitespace() }
        }

        /// Each column written `form(column)`: `list { "b.\($0)" }` is "b.rx_bytes, b.tx_bytes, ...".
        func list(separator: String = ", ", _ form: (String) -> String) -> String { components.map(form).joined(separator: separator) }
    }

    /// The four counters of `boot_total`.
    static let byteAndPacketColumns = Columns("rx_bytes, tx_bytes, rx_packets, tx_packets")

    static let schema = """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE interface (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            class TEXT NOT NULL,
            signal TEXT NOT NULL,
            kind TEXT NOT NULL,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
            rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
            rx_errors INTEGER NOT NULL DEFAULT 0, tx_errors INTEGER NOT NULL DEFAULT 0,
            rx_dropped INTEGER NOT NULL DEFAULT 0, tx_dropped INTEGER NOT NULL DEFAULT 0,
            basis TEXT NOT NULL DEFAULT '\(basis)',
            incomplete TEXT
        );
        CREATE TABLE life (
            id INTEGER PRIMARY KEY,
            interface_id INTEGER NOT NULL REFERENCES interface(id),
            boot_id TEXT NOT NULL,
            ifindex INTEGER NOT NULL,
            name TEXT NOT NULL,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            since_boot REAL NOT NULL,
            netns INTEGER NOT NULL DEFAULT 0,
            ended INTEGER,
            end_reason TEXT,
            rx_bytes INTEGER NOT NULL, tx_bytes INTEGER NOT NULL,
            rx_packets INTEGER NOT NULL, tx_packets INTEGER NOT NULL,
            rx_errors INTEGER NOT NULL, tx_errors INTEGER NOT NULL,
            rx_dropped INTEGER NOT NULL, tx_dropped INTEGER NOT NULL,
            counted_rx_bytes INTEGER NOT NULL DEFAULT 0, counted_tx_bytes INTEGER NOT NULL DEFAULT 0,
            counted_rx_packets INTEGER NOT NULL DEFAULT 0, counted_tx_packets INTEGER NOT NULL DEFAULT 0
        );
        CREATE UNIQUE INDEX life_open ON life(boot_id, netns, ifindex) WHERE ended IS NULL;
        CREATE TABLE present_link (ifindex INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE boot_total (
            boot_id TEXT NOT NULL,
            interface_id INTEGER NOT NULL REFERENCES interface(id),
            rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
            rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
            basis TEXT NOT NULL DEFAULT '\(basis)',
            PRIMARY KEY (boot_id, interface_id)
        ) WITHOUT ROWID;
        \(bucketTable)
        \(eventTable)
        CREATE INDEX event_time ON event(time);
        \(resetCountTable)
        \(importTables)
        """

    /// The event table: the resets and ends of lives, and what each lost.
    static let eventTable = eventTable(named: "event")

    static func eventTable(named name: String) -> String {
        """
        CREATE TABLE \(name) (
            id INTEGER PRIMARY KEY,
            time INTEGER NOT NULL,
            interface_id INTEGER NOT NULL REFERENCES interface(id),
            boot_id TEXT NOT NULL,
            reason TEXT NOT NULL,
            old_ifindex INTEGER,
            new_ifindex INTEGER,
            loss TEXT NOT NULL CHECK (\(oneOf("loss", ["none", "unknown", "discarded", "unseen"]))),
            discarded_rx_bytes INTEGER,
            discarded_tx_bytes INTEGER,
            unseen_seconds INTEGER,
            detail TEXT NOT NULL,
            basis TEXT NOT NULL DEFAULT '\(basis)'
        );
        """
    }

    /// How many resets of each reason an interface had whose rows are pruned, so that
    /// `ifmeter_resets_total` never goes down at a restart. No foreign key, as `bucket`.
    static let resetCountTable = """
        CREATE TABLE reset_count (
            interface_id INTEGER NOT NULL,
            reason TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (interface_id, reason)
        ) WITHOUT ROWID;
        """

    /// A CHECK that `column` holds one of `values`, as comparisons joined by OR: SQLite
    /// builds a temporary b-tree for `IN (...)` in a CHECK for every row written.
    static func oneOf(_ column: String, _ values: [String]) -> String {
        values.map { "\(column) = '\($0)'" }.joined(separator: " OR ")
    }

    /// The bucket table, keyed as reports and the prune read it. No foreign key on
    /// interface_id: deleting a name's rows would scan the table once per row deleted.
    static let bucketTable = """
        CREATE TABLE bucket (
            interface_id INTEGER NOT NULL,
            granularity TEXT NOT NULL CHECK (\(oneOf("granularity", ["5min", "hour", "day", "month", "year"]))),
            start INTEGER NOT NULL,
            rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
            rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
            basis TEXT NOT NULL DEFAULT '\(basis)',
            incomplete TEXT,
            rx_errors INTEGER NOT NULL DEFAULT 0, tx_errors INTEGER NOT NULL DEFAULT 0,
            rx_dropped INTEGER NOT NULL DEFAULT 0, tx_dropped INTEGER NOT NULL DEFAULT 0,
            last_counted INTEGER,
            PRIMARY KEY (granularity, start, interface_id)
        ) WITHOUT ROWID;
        """
}
