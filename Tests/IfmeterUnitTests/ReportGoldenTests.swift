import Foundation
import FoundationXML
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// Golden outputs over a store written by the real accounting and store
/// code (CounterTracker -> PendingWrites -> CounterStore.commit), never by
/// hand-written rows. Run with IFMETER_UPDATE_GOLDEN=1 to rewrite the files
/// after a deliberate change, then read the diff.
@Suite(.serialized) struct ReportGoldenTests {
    static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    /// Three days of a modem and a VPN tunnel that was torn down and rebuilt.
    static func makeStore() throws -> (directory: URL, store: CounterStore, configuration: Configuration, now: Int64) {
        setenv("TZ", "UTC", 1)
        tzset()
        let directory = try TestEnvironment.temporaryDirectory("golden")
        let store = try CounterStore(directory: directory.path)
        var configuration = try ConfigurationFile.parse("[Budgets]\nBillingDay=15\ncellular=10MB\ntun0=500KB\n", path: "golden.conf")
        configuration.bootIDPath = "/nonexistent"
        configuration.sysfsRoot = "/nonexistent"  // classify by name and kind only
        var tracker = CounterTracker(bootID: "boot-1")
        func at(_ text: String) -> Instant {
            let wall = TimeText.parse(text)!
            return Instant(wall: wall, sinceBoot: Double(wall - TimeText.parse("2026-11-27 09:00")!))
        }
        func wwan(_ rx: UInt64, _ tx: UInt64) -> LinkSample {
            LinkSample(ifindex: 3, name: "wwan0", kind: "", arpType: 65534, counters: LinkCounters(rxBytes: rx, txBytes: tx, rxPackets: rx / 1000, txPackets: tx / 1000))
        }
        func tun(_ ifindex: Int32, _ rx: UInt64, _ tx: UInt64) -> LinkSample {
            LinkSample(ifindex: ifindex, name: "tun0", kind: "tun", arpType: 65534, counters: LinkCounters(rxBytes: rx, txBytes: tx, rxPackets: rx / 500, txPackets: tx / 500))
        }
        func commit(_ pending: inout PendingWrites, _ now: Instant) throws {
            try store.commit(pending, openLives: tracker.lives.values, bootID: "boot-1", at: now.wall, retention: Retention(), intervals: (15, 300))
            pending = PendingWrites()
        }
        var pending = PendingWrites()
        pending.interfaces["wwan0"] = InterfaceInfo(interfaceClass: .cellular, signal: "DEVTYPE=wwan", kind: "")
        pending.interfaces["tun0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
        var now = at("2026-11-27 10:00")
        pending.record(tracker.start(stored: StoredState(), links: [wwan(0, 0), tun(5, 0, 0)], at: now), at: now)
        now = at("2026-11-27 11:00")
        pending.record(tracker.observe(dump: [wwan(5_000_000, 1_000_000), tun(5, 200_000, 300_000)], at: now, eventsWereLost: false), at: now)
        try commit(&pending, now)
        now = at("2026-11-28 09:00")
        pending.record(tracker.observe(dump: [wwan(7_000_000, 1_500_000), tun(5, 240_000, 300_000)], at: now, eventsWereLost: false), at: now)
        pending.record(tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: tun(5, 250_000, 310_000)), at: now), at: now)
        try commit(&pending, now)
        now = at("2026-11-29 08:00")
        pending.record(tracker.observe(event: LinkEvent(kind: .new, link: tun(7, 0, 0)), at: now), at: now)
        pending.record(tracker.observe(dump: [wwan(8_000_000, 1_600_000), tun(7, 10_000, 20_000)], at: now, eventsWereLost: false), at: now)
        try commit(&pending, now)
        return (directory, store, configuration, TimeText.parse("2026-11-29 12:00")!)
    }

    static func snapshot(budgets: String? = nil) throws -> (Snapshot, URL, CounterStore) {
        var (directory, store, configuration, now) = try makeStore()
        if let budgets {
            configuration.budgets = []
            configuration = try ConfigurationFile.parse("[Budgets]\nBillingDay=15\n" + budgets, path: "golden.conf", into: configuration)
        }
        // The kernel now: wwan0 counted 4096 more bytes (4 packets) since
        // the last commit; tun0 (ifindex 7) is gone, which the stopped
        // daemon will record at its next start.
        let kernel = [LinkSample(
            ifindex: 3, name: "wwan0", flags: 1, operState: .up,
            counters: LinkCounters(rxBytes: 8_004_096, txBytes: 1_600_000, rxPackets: 8_004, txPackets: 1_600))]
        let snapshot = try SnapshotReader.read(
            store: store, configuration: configuration, bootID: "boot-1",
            now: Instant(wall: now, sinceBoot: Double(now - TimeText.parse("2026-11-27 09:00")!)), kernel: kernel,
            rates: [3: (rx: 1250, tx: 125)], daemonRunning: false)
        return (snapshot, directory, store)
    }

    func expectGolden(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = Self.goldenDirectory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["IFMETER_UPDATE_GOLDEN"] == "1" {
            try actual.write(to: url, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(actual == expected, "golden \(name) differs", sourceLocation: sourceLocation)
    }

    @Test func statusText() throws {
        let (snapshot, directory, _) = try Self.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        try expectGolden("status.txt", StatusReport.text(snapshot, units: Units()))
        try expectGolden("status-si-bytes.txt", StatusReport.text(snapshot, units: Units(scale: .raw, ratesInBits: false)))
        // The default screen: a line per interface present, within 80 columns.
        let summary = StatusReport.summary(snapshot, units: Units(), all: false)
        try expectGolden("status-summary.txt", summary)
        #expect(summary.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(!summary.contains("\ntun0 "))  // gone: left out by default
        #expect(StatusReport.summary(snapshot, units: Units(), all: true).contains("\ntun0 "))
        try expectGolden("status-oneline.txt", StatusReport.oneline(snapshot, all: true))
    }

    /// vnStat's summary lines: the day before today, the calendar month before this one.
    @Test func yesterdayAndLastMonth() throws {
        let (directory, store, configuration, _) = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let november = try store.buckets(Granularity.month).filter { $0.name == "wwan0" }.reduce(LinkCounters.zero) { $0 + $1.counters }
        let day = try store.buckets(Granularity.day).filter { $0.name == "wwan0" && $0.start == TimeText.parse("2026-11-28")! }.first?.counters
        for (now, yesterday, lastMonth) in [("2026-11-29 12:00", day, LinkCounters.zero), ("2026-12-01 08:00", nil, november)] {
            let wall = TimeText.parse(now)!
            let snapshot = try SnapshotReader.read(
                store: store, configuration: configuration, bootID: "", now: Instant(wall: wall, sinceBoot: 1e6), kernel: nil, daemonRunning: false)
            let wwan = try #require(snapshot.interfaces.first { $0.name == "wwan0" })
            #expect(wwan.yesterday == (yesterday ?? .zero), "\(now)")
            #expect(wwan.lastMonth == lastMonth, "\(now)")
        }
        #expect(november.rxBytes > 0)
    }

    @Test func statusJSON() throws {
        let (snapshot, directory, _) = try Self.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = StatusReport.json(snapshot).rendered()
        try expectGolden("status.json", text + "\n")
        // The documented schema, checked key by key.
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(document["schema"] as? String == "ifmeter.status/1")
        #expect(document["estimate"] as? Bool == true)
        #expect(Set(document.keys) == ["schema", "estimate", "basis", "generated", "boot_id", "kernel_read", "foreign_namespace", "daemon", "billing_cycle", "interfaces", "budgets"])
        let interfaces = try #require(document["interfaces"] as? [[String: Any]])
        #expect(interfaces.map { Set($0.keys) }.allSatisfy {
            $0 == ["name", "alias", "class", "signal", "state", "today", "yesterday", "cycle", "last_month", "since_boot", "all_time", "live_delta", "rate", "last_reset", "incomplete", "imported"]
        })
        let wwan = try #require(interfaces.first { $0["name"] as? String == "wwan0" })
        // Stored 8,000,000 received plus the live 4096 from the kernel.
        #expect(number((wwan["all_time"] as? [String: Any])?["rx_bytes"]) == 8_004_096)
    }

    @Test func historyClassesEventsExport() throws {
        let (snapshot, directory, store) = try Self.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        let live = Dictionary(snapshot.interfaces.map { ($0.name, $0.liveDelta) }, uniquingKeysWith: { a, _ in a })
        let classes = Dictionary(snapshot.interfaces.map { ($0.name, InterfaceClass(rawValue: $0.interfaceClass) ?? .other) }, uniquingKeysWith: { a, _ in a })
        let countingSince = Dictionary(snapshot.interfaces.map { ($0.name, $0.firstSeen) }, uniquingKeysWith: { a, _ in a })
        for kind in HistoryReport.Kind.allCases {
            let rows = HistoryReport.rows(
                kind, buckets: try store.buckets(kind.granularity), live: live, classes: classes,
                now: snapshot.now, names: [], from: .min, to: .max, limit: kind.defaultLimit,
                countingSince: countingSince)
            let text = HistoryReport.text(kind, rows, units: Units())
            try expectGolden("\(kind.rawValue).txt", text)
            // A terminal of 80 columns shows every view whole: the bars take what is left.
            #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(kind)")
        }
        // [Display] formats and units: the widest day label allowed still fits 80 columns.
        let wide = DateFormats(day: "%d %b %Y", month: "%b %Y")
        for kind in [HistoryReport.Kind.days, .hours, .months] {
            let rows = HistoryReport.rows(kind, buckets: try store.buckets(kind.granularity), live: live, classes: classes, now: snapshot.now,
                                          names: [], from: .min, to: .max, limit: kind.defaultLimit, countingSince: countingSince)
            let text = HistoryReport.text(kind, rows, units: Units(scale: .si, ratesInBits: false), dates: wide)
            try expectGolden("\(kind.rawValue)-si-dates.txt", text)
            #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(kind)")
        }
        // JSON: each row's average rate, total bytes over the seconds its period has run.
        let days = HistoryReport.rows(.days, buckets: try store.buckets(.day), live: live, classes: classes, now: snapshot.now,
                                      names: [], from: .min, to: .max, limit: 30)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(HistoryReport.json(.days, days).rendered().utf8)) as? [String: Any])
        let records = try #require(document["rows"] as? [[String: Any]])
        #expect(records.map { number($0["elapsed_seconds"]) } == [86_400, 86_400, 43_200, 86_400, 86_400, 43_200])
        for record in records {
            let total = Double(number(record["rx_bytes"]) + number(record["tx_bytes"]))
            let average = try #require(record["average_bytes_per_second"] as? Double)
            #expect(abs(average - total / Double(number(record["elapsed_seconds"]))) < 1e-9 * average)
        }
        // An empty range says where to look, and keys no bars.
        for kind in HistoryReport.Kind.allCases {
            let empty = HistoryReport.text(kind, [], units: Units())
            #expect(empty.hasPrefix("Nothing counted in this range ('ifmeter status'"), "\(kind)")
            #expect(!empty.contains("Bars:"), "\(kind)")
        }
        try expectGolden("classes.txt", StatusReport.classesText(snapshot, units: Units()))
        try expectGolden("events.txt", EventsReport.text(try store.events()))
        try expectGolden("export.csv", ExportWriter.render(try store.buckets(.day), format: .csv))
        try expectGolden("export.jsonl", ExportWriter.render(try store.buckets(.day), format: .jsonl))
        // Every JSON line parses and carries the label.
        for line in ExportWriter.render(try store.buckets(.hour), format: .jsonl).split(separator: "\n") {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(record["estimate"] as? Bool == true)
            #expect(record["basis"] as? String == CounterStore.basis)
        }
    }

    /// The links of a laptop with a phone tethered: the widest name the kernel allows, the longest signal.
    static let links: [ClassifiedLink] = [
        ClassifiedLink(
            sample: LinkSample(ifindex: 1, name: "lo", operState: .unknown, counters: LinkCounters(rxBytes: 3_250, txBytes: 3_250, rxPackets: 40, txPackets: 40)),
            classification: Classification(nil, by: .loopback)),
        ClassifiedLink(
            sample: LinkSample(ifindex: 3, name: "wlp2s0", operState: .up, counters: LinkCounters(rxBytes: 9_876_543_210, txBytes: 123_456_789, rxPackets: 7_000_000, txPackets: 900_000)),
            classification: Classification(.wifi, by: .deviceType("wlan"))),
        ClassifiedLink(
            sample: LinkSample(ifindex: 9, name: "enx0a1b2c3d4e5f", operState: .lowerLayerDown, counters: .zero),
            classification: Classification(.cellular, by: .tetheringDriverLocalAddress("cdc_ncm"))),
        ClassifiedLink(
            sample: LinkSample(ifindex: 12, name: "wg-office-vpn12", kind: "wireguard", operState: .unknown, counters: LinkCounters(rxBytes: 52_428_800, txBytes: 1_048_576, rxPackets: 40_000, txPackets: 9_000)),
            classification: Classification(.tunnel, by: .linkKind("wireguard"))),
    ]

    /// A live session over two refreshes a second apart of the golden interfaces, one merged pair.
    static func liveSummary() -> String {
        var session = LiveSession()
        func links(_ step: UInt64) -> [LinkSample] {
            [LinkSample(ifindex: 3, name: "wlp2s0", counters: LinkCounters(rxBytes: step * step * 1_250_000, txBytes: step * 12_500, rxPackets: step * step * 900, txPackets: step * 60)),
             LinkSample(ifindex: 12, name: "wg-office-vpn12", counters: LinkCounters(rxBytes: step * 125_000, txBytes: step * 1_250, rxPackets: step * 90, txPackets: step * 9))]
        }
        for step in UInt64(0)..<3 {
            _ = session.refresh(from: links(step), to: links(step + 1), elapsed: 1, selection: [], include: { _ in "wifi" })
        }
        return LiveSession.title(interval: 1, count: 3) + session.summary(selection: [], units: Units())
    }

    /// Every screen within 80 columns, and the caveat once, the last line.
    @Test func screensFitEightyColumnsWithTheCaveatOnceLast() throws {
        let (snapshot, directory, store) = try Self.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        let interfaces = InterfacesReport.table(Self.links, units: Units())
        try expectGolden("interfaces.txt", interfaces)
        let live = Self.liveSummary()
        try expectGolden("live-summary.txt", live)
        let screens = [
            ("events", EventsReport.text(try store.events())), ("events, none", EventsReport.text([])), ("interfaces", interfaces), ("live", live),
            ("status", StatusReport.summary(snapshot, units: Units(), all: true)), ("status -i", StatusReport.text(snapshot, units: Units())),
            ("classes", StatusReport.classesText(snapshot, units: Units())), ("days", HistoryReport.text(.days, [], units: Units())),
        ]
        for (name, screen) in screens {
            let lines = screen.split(separator: "\n")
            #expect(lines.allSatisfy { $0.count <= 80 }, "\(name): \(lines.map(\.count).max() ?? 0) columns")
            #expect(lines.last.map(String.init) == Estimate.basis + ".", "\(name)")
            #expect(lines.filter { $0.contains("estimate") }.count == 1, "\(name)")
        }
    }

    @Test func budgetsAndCheckVerdicts() throws {
        let (snapshot, directory, _) = try Self.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        // cellular: 9.6 MB of 10 MB after 14.5 of 30 days: projected over.
        // tun0: 590 kB of 500 kB: exceeded.
        #expect(snapshot.budgets.map(\.state) == [.projectedOver, .exceeded])
        #expect(CheckVerdict(snapshot).rawValue == 2)
        try expectGolden("check.txt", StatusReport.checkText(snapshot, units: Units(scale: .si)))
    }

    /// Budgets per hour, day, month and cycle, on rx, tx or both: a table per period, the cycle's as before.
    @Test func budgetsPerPeriodAndDirection() throws {
        let lines = "cellular=10MB\nwwan0=1MB per day rx\nwwan0=9MB per month\ntun0=100KB per hour tx\nBillingDay.tun0=1\ntun0=300KB tx\n"
        let (snapshot, directory, _) = try Self.snapshot(budgets: lines)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(snapshot.budgets.map(\.budget.period) == [.cycle, .day, .month, .hour, .cycle])
        #expect(snapshot.budgets.map(\.billingDay) == [15, 15, 15, 1, 1])
        let text = StatusReport.checkText(snapshot, units: Units(scale: .si))
        try expectGolden("check-periods.txt", text)
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 })
        // The cycle's total sums days, the month's the month bucket: the same bytes here, from two sizes.
        #expect(snapshot.budgets[0].used == snapshot.interfaces.filter { $0.interfaceClass == "cellular" }.map(\.cycle.totalBytes).reduce(0, +))
    }

    /// Every kind of picture over the golden store, as the CLI draws it.
    @Test(arguments: GraphKind.allCases)
    func graphsAreGoldenAndWellFormed(_ kind: GraphKind) throws {
        let (snapshot, directory, store) = try Self.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        let svg = Self.graph(kind, store: store, now: snapshot.now, days: 7)
        try expectGolden(kind == .daily ? "graph.svg" : "graph-\(kind.rawValue).svg", svg)
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(svg.contains(">cellular</text>"))
    }

    /// The dark variant: the same picture in the dark palette, none of the light one's colours left.
    @Test func theDarkGraphIsGoldenAndKeepsNoLightColour() throws {
        let (snapshot, directory, store) = try Self.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        let svg = Self.graph(.summary, store: store, now: snapshot.now, days: 7, style: .dark)
        try expectGolden("graph-summary-dark.svg", svg)
        #expect(XMLParser(data: Data(svg.utf8)).parse())
        let (light, dark) = (GraphPalette(.light), GraphPalette(.dark))
        #expect(svg.contains("fill=\"\(dark.background)\"") && svg.contains("fill=\"\(dark.received)\"") && svg.contains("fill=\"\(dark.transmitted)\""))
        for colour in [light.background, light.text, light.muted, light.grid, light.received, light.transmitted] {
            #expect(!svg.contains("\"\(colour)\""), "\(colour) left in the dark picture")
        }
    }

    static func graph(
        _ kind: GraphKind, store: CounterStore, now: Int64, days: Int, selection: InterfaceSelection = [], style: GraphStyle = .light
    ) -> String {
        let panels = SVGGraph.panels(kind, rows: { granularity, from in
            HistoryReport.rows(HistoryReport.Kind(listing: granularity), buckets: (try? store.buckets(granularity, from: from)) ?? [], live: [:],
                               classes: [:], now: now, names: selection, from: from, to: .max, limit: .max)
        }, now: now, days: days, byName: !selection.isEmpty)
        return SVGGraph.render(
            title: SVGGraph.title(kind, now: now, days: days), caveat: SVGGraph.caveat(byClass: selection.isEmpty), panels: panels,
            buckets: SVGGraph.buckets(kind), style: style
        ).svg
    }
}
