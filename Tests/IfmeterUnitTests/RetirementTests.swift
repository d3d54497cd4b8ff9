import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// Drives the real store through interface lives on a simulated clock, as
/// the daemon commits them: each life begins, carries traffic and ends,
/// then a commit (with its prune) follows.
private struct Simulation {
    let store: CounterStore
    var retention: Retention
    var bootID = "boot-0"
    var tracker = CounterTracker(bootID: "boot-0")
    var ifindex: Int32 = 10
    /// Every byte and packet committed, by class.
    var counted: [String: LinkCounters] = [:]

    init(_ store: CounterStore, retention: Retention) {
        self.store = store
        self.retention = retention
    }

    mutating func reboot(_ id: String) {
        bootID = id
        tracker = CounterTracker(bootID: id)
    }

    /// A life of `name` from `time` to 50 s later carrying `rx` and `tx`
    /// bytes (one packet each way), committed 10 s after it ended; its class
    /// recorded with it unless `recordClass` is false (the daemon records a
    /// name's class once per run).
    mutating func life(
        _ name: String, _ interfaceClass: InterfaceClass = .tunnel, rx: UInt64, tx: UInt64, at time: Int64, recordClass: Bool = true
    ) throws {
        ifindex += 1
        let link = LinkSample(ifindex: ifindex, name: name, kind: "tun")
        var gone = link
        let traffic = LinkCounters(rxBytes: rx, txBytes: tx, rxPackets: 1, txPackets: 1)
        gone.counters = traffic
        var pending = PendingWrites()
        if recordClass { pending.interfaces[name] = InterfaceInfo(interfaceClass: interfaceClass, signal: "test", kind: "tun") }
        let begun = Instant(wall: time, sinceBoot: Double(time % 1_000_000))
        let ended = Instant(wall: time + 50, sinceBoot: begun.sinceBoot + 50)
        pending.record(tracker.observe(event: LinkEvent(kind: .new, link: link), at: begun), at: begun)
        pending.record(tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: gone), at: ended), at: ended)
        try commit(pending, at: ended.wall + 10)
        counted[interfaceClass.rawValue, default: .zero] += traffic
    }

    /// A life begun as `first` at `time` and renamed to `second` 20 s
    /// later, as udev renames, each name's class recorded; its link under
    /// the new name.
    mutating func renamedLife(_ first: String, to second: String, at time: Int64) throws -> LinkSample {
        ifindex += 1
        for (name, offset) in [(first, Int64(0)), (second, 20)] {
            var pending = PendingWrites()
            pending.interfaces[name] = InterfaceInfo(interfaceClass: .tunnel, signal: "test", kind: "tun")
            let now = Instant(wall: time + offset, sinceBoot: Double(time % 1_000_000 + offset))
            pending.record(tracker.observe(event: LinkEvent(kind: .new, link: LinkSample(ifindex: ifindex, name: name, kind: "tun")), at: now), at: now)
            try commit(pending, at: now.wall)
        }
        return LinkSample(ifindex: ifindex, name: second, kind: "tun")
    }

    /// `link` deleted at `time` with nothing lost, and committed.
    mutating func remove(_ link: LinkSample, at time: Int64) throws {
        var pending = PendingWrites()
        let now = Instant(wall: time, sinceBoot: Double(time % 1_000_000))
        pending.record(tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link), at: now), at: now)
        try commit(pending, at: time)
    }

    func commit(_ pending: PendingWrites = PendingWrites(), at time: Int64) throws {
        try store.commit(pending, openLives: tracker.lives.values, bootID: bootID, at: time, retention: retention, intervals: (15, 300))
    }
}

/// Every total a report shows per class, at one moment: today, the cycle,
/// since boot and all time (as `ifmeter classes`), and each bucket of each
/// granularity summed by class (as the history views and graphs).
private func classTotals(_ store: CounterStore, bootID: String, at now: Int64) throws -> [String: LinkCounters] {
    let snapshot = try SnapshotReader.read(
        store: store, configuration: Configuration(), bootID: bootID, now: Instant(wall: now, sinceBoot: 0), kernel: nil, daemonRunning: false)
    var totals: [String: LinkCounters] = [:]
    for (interfaceClass, members) in StatusReport.byClass(snapshot) {
        for (label, pick) in [("today", \InterfaceSnapshot.today), ("cycle", \.cycle), ("since boot", \.sinceBoot), ("all time", \.allTime)] {
            totals["\(interfaceClass.rawValue) \(label)"] = members.reduce(LinkCounters.zero) { $0 + $1[keyPath: pick] }
        }
    }
    let stored = try store.interfaces()
    for interface in stored {
        totals["\(interface.interfaceClass.rawValue) all eight", default: .zero] += interface.totals
    }
    for granularity in Granularity.allCases {
        for bucket in try store.buckets(granularity) {
            totals["\(bucket.interfaceClass) \(granularity.rawValue) \(bucket.start)", default: .zero] += bucket.counters
        }
    }
    return totals
}

@Suite struct RetirementTests {
    let directory: URL
    /// 2026-01-01 00:00 UTC.
    static let start: Int64 = 1_767_225_600

    init() throws { directory = try TestEnvironment.temporaryDirectory("retire") }

    static var monthly: Retention {
        var retention = Retention()
        retention.dailyDays = 32
        return retention
    }

    /// `monthly`, ended lives kept forever (`FiveMinuteHours=0`).
    static var monthlyKeepingLives: Retention {
        var retention = monthly
        retention.fiveMinuteHours = 0
        return retention
    }

    /// tun-a's life at the start, then tun-b's 40 days later, whose commit
    /// retires tun-a; its ended life is kept (`monthlyKeepingLives`).
    private func retireTunA(_ simulation: inout Simulation) throws {
        try simulation.life("tun-a", rx: 1000, tx: 2000, at: Self.start)
        try simulation.life("tun-b", rx: 1, tx: 1, at: Self.start + 40 * 86_400)
        #expect(try simulation.store.interface(named: "tun-a") == nil)
        #expect(try simulation.store.rowCount("life WHERE name = 'tun-a'") == 1)
    }

    /// A VPN server's churn: four tunnels a day, each under a name never
    /// seen before, a reboot every ten days, for 300 days. Every table stays
    /// within what the retention keeps (without retirement: 1,200 interface
    /// rows, 2,400 month and year buckets, a boot_total row per name), and
    /// every class total keeps every byte.
    @Test func aChurnOfUniqueNamesStaysBoundedByTheRetention() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthly)
        let perDay = 4
        let days = 300
        var now = Self.start
        for day in 0..<days {
            if day % 10 == 0 { simulation.reboot("boot-\(day / 10)") }
            for slot in 0..<perDay {
                now = Self.start + Int64(day) * 86_400 + Int64(slot) * 6 * 3600
                // One cellular link for every three tunnels: two aggregates.
                let interfaceClass: InterfaceClass = slot == 3 ? .cellular : .tunnel
                try simulation.life("tun-\(day)-\(slot)", interfaceClass, rx: UInt64(1000 + day), tx: UInt64(slot + 1), at: now)
            }
        }
        let names = try store.rowCount("interface WHERE instr(name, ' ') = 0")
        // The last 32 days of names (a day's slack for the hourly prune) and two aggregates.
        #expect(names <= Int64(perDay * 34), "\(names) names kept")
        #expect(try store.rowCount("interface") == names + 2)
        // Per kept name at most one bucket of each size; per aggregate, the
        // day, month and year buckets the retention keeps.
        let buckets = try store.rowCount("bucket")
        #expect(buckets <= 5 * names + 2 * (33 + 25 + 1), "\(buckets) buckets kept")
        // This boot's names only (ten days) and the aggregates' rows for it.
        let bootTotals = try store.rowCount("boot_total")
        #expect(bootTotals <= Int64(perDay * 11 + 2), "\(bootTotals) boot_total rows kept")
        #expect(try store.rowCount("boot_total WHERE boot_id != '\(simulation.bootID)'") == 0)
        #expect(try store.rowCount("life") <= Int64(perDay * 3), "lives of the last two days")
        #expect(try store.rowCount("event") <= Int64(perDay * 34), "events of the last 32 days")

        // Not a byte lost: all time, and the year and month buckets (kept
        // longer than the simulation), per class.
        let stored = try store.interfaces()
        var allTime: [String: LinkCounters] = [:]
        for interface in stored { allTime[interface.interfaceClass.rawValue, default: .zero] += interface.totals }
        #expect(allTime == simulation.counted)
        for granularity in [Granularity.year, .month] {
            var sums: [String: LinkCounters] = [:]
            for bucket in try store.buckets(granularity) { sums[bucket.interfaceClass, default: .zero] += bucket.counters }
            #expect(sums == simulation.counted, "\(granularity)")
        }
        let tunnels = try #require(try store.interface(named: "retired tunnel"))
        #expect(tunnels.interfaceClass == .tunnel)
        // `signal` counts the names each aggregate holds.
        let counts = [tunnels.signal, try #require(try store.interface(named: "retired cellular")).signal].map { Int($0.prefix { $0 != " " }) ?? -1 }
        #expect(counts.reduce(0, +) == perDay * days - Int(names))
        // Older than the metrics file keeps names: the daemon's ledger, which
        // starts from the interfaces seen within MetricsKeepGoneSec=, never
        // takes an aggregate in.
        #expect(tunnels.lastSeen < now - Int64(Retention().metricsKeepGone))
        #expect(try store.integrityCheck() == "ok")
    }

    /// Retirement moves totals between rows, never between classes or
    /// buckets: every total per class is the same to the byte before and
    /// after, at the same moment.
    @Test func classTotalsAreIdenticalBeforeAndAfterRetirement() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Self.start + 400 * 86_400 + 12 * 3600
        do {
            let store = try CounterStore(directory: directory.path)
            var keepAll = Retention()
            keepAll.dailyDays = 0
            var simulation = Simulation(store, retention: keepAll)
            try simulation.life("tun-old", rx: 1_000_001, tx: 2_000_003, at: Self.start + 3600)
            try simulation.life("wlan-old", .wifi, rx: 5_000_000, tx: 7, at: Self.start + 7200)
            try simulation.life("tun-mid", rx: 300, tx: 400, at: now - 40 * 86_400)
            // A gap recorded under tun-mid: its rows say so, and the aggregate's keep the note.
            var pending = PendingWrites()
            pending.events = [(now - 40 * 86_400 + 100, ResetEvent(.counterReset, name: "tun-mid", old: 12, new: 12, loss: .unknown, detail: "test"))]
            try simulation.commit(pending, at: now - 40 * 86_400 + 100)
            // Gone just past the retention, its day bucket still kept.
            try simulation.life("tun-edge", rx: 70, tx: 80, at: TimeBuckets.start(of: .day, 32, before: now) + 60)
            try simulation.life("wwan0", .cellular, rx: 9, tx: 10, at: now - 3600)
            try simulation.life("tun-now", rx: 11, tx: 12, at: now - 600)
            store.close()
        }
        // Buckets pruned to the retention, no name retired yet (the metrics
        // file's keep-gone time is longer than any of them is gone).
        var noRetirement = Self.monthly
        noRetirement.metricsKeepGone = 1000 * 86_400
        let before: [String: LinkCounters]
        do {
            let store = try CounterStore(directory: directory.path)
            try Simulation(store, retention: noRetirement).commit(at: now)
            #expect(try store.rowCount("interface") == 6)
            #expect(try store.rowCount("bucket b JOIN interface i ON i.id = b.interface_id WHERE i.name = 'tun-edge' AND b.granularity = 'day'") == 1)
            before = try classTotals(store, bootID: "boot-0", at: now)
            store.close()
        }
        let store = try CounterStore(directory: directory.path)
        try Simulation(store, retention: Self.monthly).commit(at: now)
        #expect(try store.interfaces().map(\.name) == ["retired tunnel", "retired wifi", "tun-now", "wwan0"])
        let after = try classTotals(store, bootID: "boot-0", at: now)
        #expect(after == before)
        #expect(after["tunnel all time"] == LinkCounters(rxBytes: 1_000_001 + 300 + 70 + 11, txBytes: 2_000_003 + 400 + 80 + 12, rxPackets: 4, txPackets: 4))
        let tunnels = try #require(try store.interface(named: "retired tunnel"))
        #expect(tunnels.signal == "3 names retired")
        #expect(tunnels.firstSeen == Self.start + 3600 + 60, "tun-old's first commit")
        #expect(tunnels.incomplete?.hasPrefix("tun-mid: counter-reset at") == true)
        #expect(try store.rowCount("bucket b JOIN interface i ON i.id = b.interface_id WHERE i.name = 'retired tunnel' AND b.granularity = 'day'") == 1)

        // The reports: a class row like any other, never a link.
        let snapshot = try SnapshotReader.read(
            store: store, configuration: Configuration(), bootID: "boot-0", now: Instant(wall: now, sinceBoot: 0), kernel: [], daemonRunning: false)
        let retired = try #require(snapshot.interfaces.first { $0.name == "retired tunnel" })
        #expect(retired.presence == .retired)
        #expect(retired.liveDelta == .zero)
        let summary = StatusReport.summary(snapshot, units: Units(), all: false)
        #expect(summary.contains("2 gone interfaces and 2 retired totals not shown (--all shows them).\n"), "\(summary)")
        #expect(!summary.contains("retired tunnel"))
        let everything = StatusReport.summary(snapshot, units: Units(), all: true)
        #expect(everything.split(separator: "\n").contains { $0.split(separator: " ").prefix(4) == ["retired", "tunnel", "tunnel", "retired"] }, "\(everything)")
        #expect(StatusReport.oneline(snapshot, all: true).contains("retired tunnel;tunnel;retired;"))
        #expect(StatusReport.classesText(snapshot, units: Units()).contains("tun-now (retired)"))
        let json = StatusReport.json(snapshot).rendered()
        #expect(json.contains("\"name\": \"retired tunnel\""))
        #expect(json.contains("\"state\": \"retired\""))
        // No estimate for the running year of an aggregate.
        let years = HistoryReport.rows(
            .years, buckets: try store.buckets(.year), live: [:], classes: [:], now: now, names: [], from: .min, to: .max, limit: 100)
        #expect(years.contains { $0.name == "retired tunnel" && $0.estimated == nil })
        #expect(years.contains { $0.name == "tun-now" && $0.estimated != nil })
        #expect(try store.integrityCheck() == "ok")
    }

    /// A name seen again after it was retired is a new interface: a row of
    /// its own, counted from zero from then on. What it had stays in the
    /// aggregate, so the class total is both.
    @Test func aNameSeenAgainAfterRetirementStartsAFreshRow() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // One store object throughout, as in the daemon: no cached row id survives retirement.
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthly)
        try simulation.life("tun-a", rx: 1000, tx: 2000, at: Self.start)
        try simulation.life("tun-b", rx: 1, tx: 1, at: Self.start + 40 * 86_400)
        #expect(try store.interface(named: "tun-a") == nil)
        let retired = try #require(try store.interface(named: "retired tunnel"))
        #expect(retired.totals.rxBytes == 1000)

        // Deltas alone, as from a daemon that recorded tun-a's class
        // earlier in its run: the store must not reuse the id it cached.
        let back = Self.start + 41 * 86_400
        try simulation.life("tun-a", rx: 5, tx: 6, at: back, recordClass: false)
        let fresh = try #require(try store.interface(named: "tun-a"))
        #expect(fresh.totals == LinkCounters(rxBytes: 5, txBytes: 6, rxPackets: 1, txPackets: 1))
        #expect(fresh.firstSeen >= back)
        #expect(try store.interface(named: "retired tunnel")?.totals == retired.totals)
        #expect(try store.bucketTotals(.year)["tun-a"] == LinkCounters(rxBytes: 5, txBytes: 6, rxPackets: 1, txPackets: 1))
        let allTime = try store.interfaces().reduce(LinkCounters.zero) { $0 + $1.totals }
        #expect(allTime == simulation.counted["tunnel"])
        #expect(try store.integrityCheck() == "ok")
    }

    /// `DailyDays=0` keeps everything forever: no name is retired, no boot's
    /// counts pruned.
    @Test func aRetentionOfZeroRetiresNothing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var keepAll = Retention()
        keepAll.dailyDays = 0
        #expect(keepAll.retirementAge == nil)
        var simulation = Simulation(store, retention: keepAll)
        for day in 0..<120 {
            if day % 10 == 0 { simulation.reboot("boot-\(day / 10)") }
            try simulation.life("tun-\(day)", rx: 100, tx: 100, at: Self.start + Int64(day) * 86_400)
        }
        #expect(try store.rowCount("interface") == 120)
        #expect(try store.rowCount("interface WHERE instr(name, ' ') > 0") == 0)
        #expect(try store.rowCount("boot_total") == 120)
    }

    /// A name the metrics file may still show is not retired: after a
    /// restart the daemon's ledger would read it back smaller, and a
    /// published counter must never decrease.
    @Test func retirementWaitsForTheMetricsFileToDropTheName() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var retention = Self.monthly
        retention.metricsKeepGone = 60 * 86_400
        #expect(try #require(retention.retirementAge) == Int64(60 * 86_400))
        var simulation = Simulation(store, retention: retention)
        try simulation.life("tun-a", rx: 1, tx: 1, at: Self.start)
        try simulation.life("tun-b", rx: 1, tx: 1, at: Self.start + 50 * 86_400)
        #expect(try store.interface(named: "tun-a") != nil)
        try simulation.life("tun-c", rx: 1, tx: 1, at: Self.start + 61 * 86_400)
        #expect(try store.interface(named: "tun-a") == nil)
        #expect(try store.interface(named: "tun-b") != nil)
    }

    /// An idle link keeps the `last_seen` of its last traffic; when it
    /// leaves after more than the retention, it is gone since it left, not
    /// since its traffic. (Moved to another namespace: no event is
    /// recorded, whose age would hold retirement back too.)
    @Test func goneIsCountedFromTheLastLifeNotTheLastTraffic() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthly)
        let link = LinkSample(ifindex: 7, name: "tun-idle", kind: "tun")
        var pending = PendingWrites()
        pending.interfaces["tun-idle"] = InterfaceInfo(interfaceClass: .tunnel, signal: "test", kind: "tun")
        var begun = Instant(wall: Self.start, sinceBoot: 10)
        pending.record(simulation.tracker.observe(event: LinkEvent(kind: .new, link: link), at: begun), at: begun)
        var traffic = link
        traffic.counters = LinkCounters(rxBytes: 10, txBytes: 10)
        begun = Instant(wall: Self.start + 60, sinceBoot: 70)
        pending.record(simulation.tracker.observe(dump: [traffic], at: begun, eventsWereLost: false), at: begun)
        try simulation.commit(pending, at: Self.start + 100)
        // Present and idle for 40 days, committed every 6 hours.
        var now = Self.start + 100
        while now < Self.start + 40 * 86_400 {
            now += 6 * 3600
            let sample = Instant(wall: now, sinceBoot: Double(now - Self.start))
            pending = PendingWrites()
            pending.record(simulation.tracker.observe(dump: [traffic], at: sample, eventsWereLost: false), at: sample)
            try simulation.commit(pending, at: now)
        }
        #expect(try store.interface(named: "tun-idle") != nil)
        let removed = Instant(wall: now + 60, sinceBoot: Double(now + 60 - Self.start))
        pending = PendingWrites()
        pending.record(simulation.tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: true), link: traffic), at: removed), at: removed)
        try simulation.commit(pending, at: now + 120)
        // Days after it left (the life row itself long pruned): still its own row.
        try simulation.commit(at: now + 10 * 86_400)
        #expect(try store.rowCount("life") == 0)
        #expect(try store.rowCount("event") == 0)
        #expect(try store.interface(named: "tun-idle")?.totals.rxBytes == 10)
        try simulation.commit(at: now + 33 * 86_400)
        #expect(try store.interface(named: "tun-idle") == nil)
        #expect(try store.interface(named: "retired tunnel")?.totals.rxBytes == 10)
    }

    /// A life renamed while the daemon runs keeps the row of the name it
    /// began with; the new name is counted without an open life of its
    /// own. Counted for longer than the retention, it is not retired.
    @Test func aNameCountedUnderARenamedLifeIsNeverRetired() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthly)
        var pending = PendingWrites()
        pending.interfaces["tun-old"] = InterfaceInfo(interfaceClass: .tunnel, signal: "test", kind: "tun")
        let begun = Instant(wall: Self.start, sinceBoot: 10)
        pending.record(simulation.tracker.observe(event: LinkEvent(kind: .new, link: LinkSample(ifindex: 30, name: "tun-old", kind: "tun")), at: begun), at: begun)
        try simulation.commit(pending, at: Self.start + 10)
        // Renamed at once (udev), then counting under vpn0 for 40 days.
        var link = LinkSample(ifindex: 30, name: "vpn0", kind: "tun")
        var now = Self.start + 10
        var sent: UInt64 = 0
        let renamed = Instant(wall: now, sinceBoot: 20)
        pending = PendingWrites()
        pending.record(simulation.tracker.observe(event: LinkEvent(kind: .new, link: link), at: renamed), at: renamed)
        try simulation.commit(pending, at: now)
        while now < Self.start + 40 * 86_400 {
            now += 6 * 3600
            sent += 1000
            link.counters = LinkCounters(rxBytes: sent, txBytes: sent)
            let sample = Instant(wall: now, sinceBoot: Double(now - Self.start))
            pending = PendingWrites()
            pending.record(simulation.tracker.observe(dump: [link], at: sample, eventsWereLost: false), at: sample)
            try simulation.commit(pending, at: now)
        }
        #expect(try store.interface(named: "vpn0")?.totals.rxBytes == sent)
        #expect(try store.interface(named: "retired tunnel") == nil)
    }

    /// `FiveMinuteHours=0`: a life begun as tun-old and renamed to vpn0 is
    /// tun-old's row, vpn0's removal. tun-old lives on, vpn0 retires; seen
    /// again, vpn0 counts its resets from zero.
    @Test func aNameRetiredUnderAnotherNamesLifeCountsFromZeroWhenSeenAgain() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthlyKeepingLives)
        try simulation.remove(try simulation.renamedLife("tun-old", to: "vpn0", at: Self.start), at: Self.start + 30)
        #expect(try store.resetCounts()["vpn0"] == ["removed": 1])
        // tun-old comes and goes every ten days; vpn0 is gone for 40.
        for day in stride(from: 10, through: 40, by: 10) {
            try simulation.life("tun-old", rx: 1, tx: 1, at: Self.start + Int64(day) * 86_400)
        }
        #expect(try store.interface(named: "vpn0") == nil)
        let back = Self.start + 41 * 86_400
        try simulation.life("vpn0", rx: 1, tx: 1, at: back)
        #expect(try store.resetCounts()["vpn0"] == ["removed": 1])
        #expect(try store.events().filter { $0.name == "vpn0" }.map(\.time) == [back + 50])
    }

    /// `FiveMinuteHours=0`: a retired name's ended lives stay, under its
    /// name. Seen again, the name counts its resets from zero too: the
    /// removals of its old lives are the retired name's, not the new row's.
    @Test func aNameSeenAgainAfterRetirementCountsItsResetsFromZero() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthlyKeepingLives)
        try retireTunA(&simulation)
        #expect(try store.resetCounts()["tun-a"] == nil)

        let back = Self.start + 41 * 86_400
        try simulation.life("tun-a", rx: 5, tx: 6, at: back)
        #expect(try store.resetCounts()["tun-a"] == ["removed": 1])
        #expect(try store.events().filter { $0.name == "tun-a" }.map(\.time) == [back + 50])
    }

    /// `forget` takes a name's removals with it, those of a life begun
    /// under another name too (its row is the first name's), though the
    /// name's row stays for the life it has open.
    @Test func forgettingANameTakesTheRemovalOfALifeRenamedToIt() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthly)
        try simulation.remove(try simulation.renamedLife("tun-old", to: "vpn0", at: Self.start), at: Self.start + 30)
        var pending = PendingWrites()
        let begun = Instant(wall: Self.start + 60, sinceBoot: 60)
        pending.record(simulation.tracker.observe(event: LinkEvent(kind: .new, link: LinkSample(ifindex: 90, name: "vpn0", kind: "tun")), at: begun), at: begun)
        try simulation.commit(pending, at: begun.wall)
        #expect(try store.events().map(\.name) == ["vpn0"])

        #expect(try store.forget("vpn0") == true)
        #expect(try store.interface(named: "vpn0") != nil)
        #expect(try store.events().isEmpty)
        #expect(try store.resetCounts()["vpn0"] == nil)
        #expect(try store.interface(named: "tun-old") != nil)
    }

    /// `FiveMinuteHours=0` keeps ended lives forever, so retirement moves
    /// them to the aggregate under their own names. Forgetting the
    /// aggregate removes them with it: a retired name is not made again.
    @Test func forgettingAnAggregateBringsNoRetiredNameBack() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthlyKeepingLives)
        try retireTunA(&simulation)

        #expect(try store.forget("retired tunnel") == false)
        #expect(try store.interface(named: "retired tunnel") == nil)
        #expect(try store.interface(named: "tun-a") == nil)
        #expect(try store.interfaces().map(\.name) == ["tun-b"])
        #expect(try store.rowCount("life WHERE name = 'tun-a'") == 0)
        #expect(try store.integrityCheck() == "ok")
    }

    /// A store edited by hand: an aggregate near the writer's 2^62 limit,
    /// or a row of the aggregate's name in another class. The names stay
    /// where they are, the commit succeeds, nothing moves between classes.
    @Test func retirementNeverOverflowsNorMovesBytesBetweenClasses() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var simulation = Simulation(store, retention: Self.monthly)
        try simulation.life("tun-a", rx: 1 << 61, tx: 1, at: Self.start)
        try simulation.life("wlan-a", .wifi, rx: 5, tx: 5, at: Self.start)
        try store.database.execute("""
            INSERT INTO interface(name, class, signal, kind, first_seen, last_seen, rx_bytes) VALUES ('retired tunnel', 'tunnel', '1 names retired', 'retired', 0, 0, \((1 << 62) - (1 << 60)));
            INSERT INTO interface(name, class, signal, kind, first_seen, last_seen) VALUES ('retired wifi', 'cellular', '0 names retired', 'retired', 0, 0)
            """)
        try simulation.life("tun-b", rx: 1, tx: 1, at: Self.start + 40 * 86_400)
        #expect(try store.interface(named: "tun-a")?.totals.rxBytes == 1 << 61)
        #expect(try store.interface(named: "wlan-a")?.totals.rxBytes == 5)
        #expect(try store.interface(named: "retired tunnel")?.totals.rxBytes == (1 << 62) - (1 << 60))
        #expect(try store.interface(named: "retired wifi")?.totals == .zero)
    }

    /// The aggregate's name can be typed as printed (`-i`, `forget`), and no
    /// kernel name, however spelt, can be it: a space is encoded.
    @Test func anAggregateNameNeverMeetsAKernelName() {
        #expect(InterfaceName.retired(.tunnel) == "retired tunnel")
        #expect(InterfaceName.fromUser("retired tunnel") == "retired tunnel")
        #expect(InterfaceName.encode(bytes: "retired tunnel".utf8) == "retired\\x20tunnel")
        #expect(InterfaceName.retiredClass(of: "retired\\x20tunnel") == nil)
        #expect(InterfaceName.retiredClass(of: "retired wifi") == .wifi)
        #expect(InterfaceName.retiredClass(of: "retired bogus") == nil)
        #expect(!InterfaceName.isEncoded("retired tunnel"))
    }
}

/// The real daemon and CLI over a store whose tunnels have been gone for
/// longer than the daily retention (the clocks moved 70 days on).
