// Shared by `make fuzz` (compiled with IfmeterCore's sources, -D IFMETER_FUZZ)
// and by HostileStoreTests, which replays Corpus/store in `make test`.
#if !IFMETER_FUZZ
@testable import IfmeterCore
#endif
import Glibc

/// Store contents an input chooses, and every reader and the daemon's
/// start-up path run over them. Whatever the values, each must either work
/// or fail with a StoreError of one line; a trap is the finding.
enum StoreFuzzHarness {
    static let bootID = "0f0f0f0f-1111-2222-3333-444444444444"
    static let now: Int64 = 1_800_000_000

    /// (table, columns an input may overwrite)
    static let targets: [(table: String, columns: [String])] = [
        ("interface", ["name", "class", "signal", "kind", "first_seen", "last_seen", "rx_bytes", "tx_bytes", "rx_packets", "tx_packets",
                       "rx_errors", "tx_errors", "rx_dropped", "tx_dropped", "incomplete"]),
        ("life", ["boot_id", "ifindex", "name", "first_seen", "last_seen", "since_boot", "ended", "rx_bytes", "tx_bytes", "rx_packets",
                  "tx_packets", "rx_errors", "tx_dropped", "counted_rx_bytes", "counted_tx_bytes", "counted_rx_packets"]),
        ("bucket", ["start", "rx_bytes", "tx_bytes", "rx_packets", "tx_packets", "incomplete", "rx_errors", "tx_dropped", "last_counted"]),
        ("event", ["time", "reason", "old_ifindex", "new_ifindex", "detail"]),
        ("meta", ["boot_id", "last_commit", "sample_interval", "commit_interval", "folded_through"]),
    ]

    static let hostileValues: [SQLiteValue] = [
        .integer(-1), .integer(.max), .integer(.min), .integer(.max - 1), .integer(1 << 62), .integer((1 << 62) + 1), .integer(0),
        .real(1e300), .real(-1e300), .real(.infinity), .real(-.infinity), .real(0.5), .text("NaN"), .text("inf"), .text("1e300"),
        .text("-9223372036854775808"), .text(""), .text("q\"\u{301}"), .text("\\\u{301}"), .text("\u{1B}[2J\u{1B}]52;c;aGk=\u{07}"),
        .text("=1+1"), .text("a\r\nb"), .null,
    ]

    /// Builds the store in `directory` (emptied first), applies the input,
    /// runs the readers and the daemon's path. Returns what went wrong.
    static func run(_ input: [UInt8], directory: String) -> [String] {
        var problems: [String] = []
        func check(_ error: StoreError, _ step: String) {
            let text = error.description
            if text.unicodeScalars.contains("\n") { problems.append("\(step): multi-line error: \(text)") }
            if ![ExitCode.dataError, .ioError, .cannotCreate, .noInput].contains(error.exitCode) { problems.append("\(step): exit \(error.exitCode)") }
        }
        _ = system("rm -rf '\(directory)'")
        mkdir(directory, 0o700)
        do {
            let store = try CounterStore(directory: directory)
            try seed(store)
            try apply(input, to: store)
            store.close()
        } catch {
            return ["seeding failed: \(error)"]
        }
        let configuration = {
            var configuration = Configuration()
            configuration.sysfsRoot = "/nonexistent"
            configuration.billingDay = 7
            configuration.budgets = [Budget(target: .interfaceClass(.tunnel), bytes: 1 << 40), Budget(target: .interface("wlan0"), bytes: 1)]
            return configuration
        }()
        let kernel = [
            LinkSample(ifindex: 4, name: "tun0", kind: "tun", arpType: 65534, flags: 1, operState: .up,
                       counters: LinkCounters(rxBytes: 5000, txBytes: 7000, rxPackets: 5, txPackets: 7)),
            LinkSample(ifindex: 5, name: "wlan0", kind: "wireguard", arpType: 65534, flags: 1, operState: .up,
                       counters: LinkCounters(rxBytes: .max - 10, txBytes: 1 << 63, rxPackets: 3, txPackets: 4)),
        ]
        let instant = Instant(wall: now, sinceBoot: 1000)
        // The CLI's readers.
        do {
            let reader = try CounterStore(directory: directory, readOnly: true)
            let snapshot = try SnapshotReader.read(
                store: reader, configuration: configuration, bootID: bootID, now: instant, kernel: kernel,
                rates: [4: (1e300, .infinity), 5: (.nan, -1)], daemonRunning: false)
            for units in [Units(), Units(scale: .raw, ratesInBits: false), Units(scale: .si)] {
                _ = StatusReport.text(snapshot, units: units)
                _ = StatusReport.classesText(snapshot, units: units)
                _ = StatusReport.budgetLines(snapshot, units: units)
            }
            _ = StatusReport.json(snapshot).rendered()
            _ = StatusReport.classesJSON(snapshot).rendered()
            _ = StatusReport.checkJSON(snapshot, exitCode: 0).rendered()
            let live = Dictionary(snapshot.interfaces.map { ($0.name, $0.liveDelta) }, uniquingKeysWith: { a, _ in a })
            let classes = Dictionary(snapshot.interfaces.map { ($0.name, InterfaceClass(rawValue: $0.interfaceClass) ?? .other) }, uniquingKeysWith: { a, _ in a })
            for kind in HistoryReport.Kind.allCases {
                let rows = HistoryReport.rows(
                    kind, buckets: try reader.buckets(kind.granularity), live: live, classes: classes, now: now, names: [],
                    from: .min, to: .max, limit: 100)
                _ = HistoryReport.text(kind, rows, units: Units())
                _ = HistoryReport.json(kind, rows).rendered()
            }
            for kind in GraphKind.allCases {
                let panels = SVGGraph.panels(kind, rows: { granularity, from in
                    HistoryReport.rows(HistoryReport.Kind(listing: granularity), buckets: (try? reader.buckets(granularity)) ?? [], live: live,
                                       classes: classes, now: now, names: [], from: from, to: .max, limit: .max)
                }, now: now, days: 30, byName: false)
                for style in GraphStyle.allCases {
                    _ = SVGGraph.render(
                        title: SVGGraph.title(kind, now: now, days: 30), caveat: SVGGraph.caveat(byClass: true), panels: panels,
                        buckets: SVGGraph.buckets(kind), style: style)
                }
            }
            for granularity in Granularity.allCases {
                let buckets = try reader.buckets(granularity)
                _ = ExportWriter.render(buckets, format: .csv)
                _ = ExportWriter.render(buckets, format: .jsonl)
            }
            let events = try reader.events()
            _ = EventsReport.text(events)
            _ = EventsReport.json(events).rendered()
            reader.close()
        } catch {
            check(error, "reader")
        }
        // The daemon's start-up, a sample and two commits.
        do {
            let store = try CounterStore(directory: directory)
            let stored = try store.loadState()
            var accumulated: [String: LinkCounters] = [:]
            for interface in try store.interfaces() { accumulated[interface.name] = interface.totals }
            _ = try store.resetCounts()
            var tracker = CounterTracker(bootID: bootID)
            var pending = PendingWrites()
            var outcome = tracker.start(stored: stored, links: kernel, at: instant)
            for delta in outcome.deltas { accumulated[delta.name, default: .zero] += delta.counters }
            pending.record(outcome, at: instant)
            try store.commit(pending, openLives: tracker.lives.values, bootID: bootID, at: now, retention: Retention(), intervals: (15, 300))
            var later = kernel
            for index in later.indices { later[index].counters = later[index].counters + LinkCounters(rxBytes: 1000, txBytes: 1000) }
            let next = Instant(wall: now + 15, sinceBoot: 1015)
            outcome = tracker.observe(dump: later, at: next, eventsWereLost: false)
            for delta in outcome.deltas { accumulated[delta.name, default: .zero] += delta.counters }
            pending = PendingWrites()
            pending.record(outcome, at: next)
            try store.commit(pending, openLives: tracker.lives.values, bootID: bootID, at: now + 15, retention: Retention(), intervals: (15, 300))
            _ = MetricsFile(path: directory + "/ifmeter.prom").render(MetricsSnapshot(
                interfaces: accumulated.map { MetricsInterface(
                    device: $0.key, info: InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun"), ifindex: 4,
                    totals: $0.value, resets: ["removed": .max]) },
                lastSample: .nan, sampleDuration: .infinity, storeWriteErrors: .max, lastCommit: .min))
            store.close()
        } catch {
            check(error, "daemon")
        }
        return problems
    }

    /// A small store as the daemon leaves it: two interfaces, open lives,
    /// buckets of every granularity, events, the heartbeat.
    static func seed(_ store: CounterStore) throws {
        let database = store.database
        try database.transaction { () throws(StoreError) in
            try database.execute("""
                INSERT INTO interface(id, name, class, signal, kind, first_seen, last_seen, rx_bytes, tx_bytes, rx_packets, tx_packets)
                  VALUES (1, 'tun0', 'tunnel', 'kind tun', 'tun', \(now - 86_400), \(now), 4000, 6000, 4, 6),
                         (2, 'wlan0', 'wifi', 'kind wireguard', 'wireguard', \(now - 86_400), \(now), 100, 200, 1, 2);
                INSERT INTO life(interface_id, boot_id, ifindex, name, first_seen, last_seen, since_boot, rx_bytes, tx_bytes, rx_packets, tx_packets,
                  rx_errors, tx_errors, rx_dropped, tx_dropped, counted_rx_bytes, counted_tx_bytes)
                  VALUES (1, '\(bootID)', 4, 'tun0', \(now - 3600), \(now - 60), 900, 4000, 6000, 4, 6, 0, 0, 0, 0, 4000, 6000),
                         (2, '\(bootID)', 5, 'wlan0', \(now - 3600), \(now - 60), 900, 100, 200, 1, 2, 0, 0, 0, 0, 100, 200);
                INSERT INTO event(time, interface_id, boot_id, reason, old_ifindex, new_ifindex, loss, detail)
                  VALUES (\(now - 7200), 1, '\(bootID)', 'removed', 3, NULL, 'unknown', 'gone'),
                         (\(now - 3600), 2, '\(bootID)', 'reboot', NULL, 5, 'none', 'new boot');
                INSERT INTO meta(key, value) VALUES ('boot_id', '\(bootID)'), ('last_commit', '\(now - 60)'),
                  ('sample_interval', '15'), ('commit_interval', '300');
                """)
            for granularity in Granularity.allCases {
                for id in [1, 2] {
                    try database.run(
                        "INSERT INTO bucket(interface_id, granularity, start, rx_bytes, tx_bytes, rx_packets, tx_packets) VALUES (?, ?, ?, 1000, 2000, 1, 2)",
                        [.integer(Int64(id)), .text(granularity.rawValue), .integer(TimeBuckets.start(of: granularity, containing: now - 60))])
                }
            }
            // Folded: the coarse rows and the totals hold the five-minute rows.
            try database.run("UPDATE meta SET value = ? WHERE key = 'folded_through'",
                             [.text(String(TimeBuckets.start(of: .fiveMinutes, containing: now - 60) + 300))])
        }
    }

    /// Each 3-byte record: a column, a row, a value (the value byte past
    /// the list of hostile values takes the next 8 bytes as an integer).
    static func apply(_ input: [UInt8], to store: CounterStore) throws {
        let columns = targets.flatMap { target in target.columns.map { (target.table, $0) } }
        var index = 0
        while index + 3 <= input.count {
            let (table, column) = columns[Int(input[index]) % columns.count]
            let row = Int64(input[index + 1] % 4)
            let choice = Int(input[index + 2]) % (hostileValues.count + 2)
            index += 3
            var value: SQLiteValue
            if choice < hostileValues.count {
                value = hostileValues[choice]
            } else {
                var number: UInt64 = 0
                for byte in input[min(index, input.count)..<min(index + 8, input.count)] { number = number << 8 | UInt64(byte) }
                index += 8
                value = choice == hostileValues.count ? .integer(Int64(bitPattern: number)) : .real(Double(bitPattern: number))
            }
            let sql: String
            switch table {
            case "meta":
                sql = "UPDATE meta SET value = ? WHERE key = '\(column)'"
                if case .null = value { value = .text("") }
            case "bucket":
                sql = """
                    UPDATE bucket SET \(column) = ? WHERE (interface_id, granularity, start) IN
                      (SELECT interface_id, granularity, start FROM bucket ORDER BY start, interface_id LIMIT 1 OFFSET \(row * 3))
                    """
            default:
                sql = "UPDATE \(table) SET \(column) = ? WHERE rowid IN (SELECT rowid FROM \(table) LIMIT 1 OFFSET \(row))"
            }
            // Constraint failures (NOT NULL, UNIQUE, CHECK) are the schema
            // doing its work: that value cannot be in a store.
            _ = try? store.database.run(sql, [value])
        }
    }
}
