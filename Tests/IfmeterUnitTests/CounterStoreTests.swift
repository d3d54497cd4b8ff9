import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

@Suite struct CounterStoreTests {
    let directory: URL
    var path: String { directory.appendingPathComponent(CounterStore.fileName).path }

    init() throws { directory = try TestEnvironment.temporaryDirectory("store") }

    private func life(_ ifindex: Int32, _ counters: LinkCounters) -> TrackedLife {
        TrackedLife(ifindex: ifindex, name: "tun0", counters: counters, sinceBoot: 12.5, firstSeen: 1_700_000_000, lastSeen: 1_700_000_100)
    }

    /// `ifmeter` reads the store in many queries and the kernel once, while
    /// the daemon commits when it likes. Held from before the kernel is
    /// read, one snapshot of the store never holds a baseline newer than
    /// the counters compared with it (read as a counter reset: the whole
    /// counter added again), nor totals older than its baselines.
    @Test func aReaderSeesOneCommitWhateverTheDaemonCommitsMeanwhile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try CounterStore(directory: directory.path)
        func commit(delta rx: UInt64, baseline: UInt64, at time: Int64) throws {
            var pending = PendingWrites()
            pending.interfaces["tun0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
            var outcome = AccountingOutcome()
            outcome.deltas = [Delta(name: "tun0", ifindex: 4, counters: LinkCounters(rxBytes: rx, rxPackets: rx / 100))]
            pending.record(outcome, at: Instant(wall: time, sinceBoot: 50))
            try writer.commit(
                pending, openLives: [life(4, LinkCounters(rxBytes: baseline, rxPackets: baseline / 100))], bootID: "boot-1",
                presence: PresenceUpdate(present: [4: "tun0"]), at: time, retention: Retention(), intervals: (15, 300))
        }
        try commit(delta: 1000, baseline: 1000, at: 1_700_000_100)
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        try reader.holdSnapshot()
        // The kernel as the reader reads it: 500 more than the last commit...
        let kernel = [LinkSample(ifindex: 4, name: "tun0", kind: "tun", counters: LinkCounters(rxBytes: 1500, rxPackets: 15))]
        // ... then the daemon samples 200 more still, and commits.
        try commit(delta: 700, baseline: 1700, at: 1_700_000_110)
        let snapshot = try SnapshotReader.read(
            store: reader, configuration: Configuration(), bootID: "boot-1", now: Instant(wall: 1_700_000_120, sinceBoot: 70),
            kernel: kernel, daemonRunning: true)
        let tun0 = try #require(snapshot.interfaces.first { $0.name == "tun0" })
        #expect(tun0.allTime.rxBytes == 1500)
        #expect(tun0.sinceBoot.rxBytes == 1500)
        #expect(tun0.today.rxBytes == 1500)
    }

    /// A power cut starts a new boot, whose counters cannot give back an unsynced commit: every
    /// writer's commit is synced (synchronous=FULL, 2) before it returns.
    @Test func aWritersCommitIsSyncedBeforeItReturns() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try CounterStore(directory: directory.path)
        #expect(try writer.database.query("PRAGMA synchronous") { $0.integer(0) } == [2])
        #expect(try writer.database.query("PRAGMA journal_mode") { $0.text(0) } == ["wal"])
    }

    @Test func commitsAndLoadsBackTheSameState() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let huge = LinkCounters(rxBytes: UInt64.max - 1, txBytes: 1 << 63, rxPackets: 3)
        do {
            let store = try CounterStore(directory: directory.path)
            var pending = PendingWrites()
            pending.interfaces["tun0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
            var outcome = AccountingOutcome()
            outcome.deltas = [Delta(name: "tun0", ifindex: 4, counters: LinkCounters(rxBytes: 500, txBytes: 700, rxPackets: 5, txPackets: 7))]
            outcome.events = [ResetEvent(.historyUnknown, name: "tun0", old: nil, new: 4, loss: .unknown, detail: "first seen")]
            pending.record(outcome, at: Instant(wall: 1_700_000_100, sinceBoot: 12.5))
            try store.commit(pending, openLives: [life(4, huge)], bootID: "boot-1", at: 1_700_000_100, retention: Retention(), intervals: (15, 300))
        }
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        let state = try reader.loadState()
        #expect(state.lastBootID == "boot-1")
        #expect(state.knownNames == ["tun0"])
        #expect(state.openLives.count == 1)
        #expect(state.openLives.first?.life == life(4, huge))
        let interface = try #require(try reader.interfaces().first)
        #expect(interface.interfaceClass == .tunnel)
        #expect(interface.totals == LinkCounters(rxBytes: 500, txBytes: 700, rxPackets: 5, txPackets: 7))
        #expect(interface.incomplete?.hasPrefix("history-unknown at \(TimeText.utc(1_700_000_100))") == true)
        #expect(try reader.events().map(\.reason.rawValue) == ["history-unknown"])
        #expect(try reader.integrityCheck() == "ok")
    }

    /// A commit leaves out the statements it knows change nothing (an open
    /// life looked for that was never written, a link's presence deleted
    /// that was never recorded), knowing from the rows a connection reads
    /// at its first write: what an earlier run wrote is found, updated and
    /// deleted, and a life or link that came and went between two commits
    /// leaves one ended row and no presence.
    @Test(arguments: [false, true])
    func aCommitEndsTheLivesAndPresenceAnEarlierConnectionWrote(reopened: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var store = try CounterStore(directory: directory.path)
        func commit(ended: [TrackedLife] = [], open: [TrackedLife] = [], present: IfindexTable<String>, previous: IfindexTable<String>?, at time: Int64) throws {
            var pending = PendingWrites()
            pending.interfaces["tun0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
            pending.endedLives = ended.map { (EndedLife(life: $0, end: .removed, bootID: "boot-1", namespace: 0), time) }
            try store.commit(
                pending, openLives: open, bootID: "boot-1", presence: PresenceUpdate(present: present, previous: previous), at: time,
                retention: Retention(), intervals: (15, 300))
        }
        let counters = LinkCounters(rxBytes: 100)
        try commit(open: [life(4, counters)], present: [1: "lo", 4: "tun0"], previous: nil, at: 1_700_000_100)
        if reopened {
            store.close()
            store = try CounterStore(directory: directory.path)
        }
        // tun0 (4) ends; another tun0 (5) came and went since the last commit.
        try commit(ended: [life(4, counters), life(5, counters)], present: [1: "lo"], previous: [1: "lo", 4: "tun0"], at: 1_700_000_400)
        #expect(try store.rowCount("life") == 2)
        #expect(try store.rowCount("life WHERE ended IS NULL") == 0)
        #expect(try store.database.query("SELECT ifindex FROM present_link") { $0.integer(0) } == [1])
        // Begun again after the last commit: a new open row beside the ended ones.
        try commit(open: [life(4, counters)], present: [1: "lo", 4: "tun0"], previous: [1: "lo"], at: 1_700_000_700)
        #expect(try store.rowCount("life WHERE ended IS NULL AND ifindex = 4") == 1)
        #expect(try store.database.query("SELECT ifindex FROM present_link ORDER BY ifindex") { $0.integer(0) } == [1, 4])
        #expect(try store.integrityCheck() == "ok")
    }

    /// A transaction rolled back takes what the connection learnt of the
    /// rows with it: here a journal the store refuses after its record
    /// ended tun0's life, which is then ended by a commit that succeeds.
    @Test func aRolledBackCommitLeavesTheNextToFindTheOpenLife() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        let counters = LinkCounters(rxBytes: 100)
        try store.commit(PendingWrites(), openLives: [life(4, counters)], bootID: "boot-1", at: 1_700_000_100, retention: Retention(), intervals: (15, 300))
        var ending = PendingWrites()
        ending.endedLives = [(EndedLife(life: life(4, counters), end: .removed, bootID: "boot-1", namespace: 0), 1_700_000_200)]
        var refused = ending
        // Each within the headroom, together past it: refused after the life's row was written.
        refused.deltas[PendingWrites.Slot(name: "tun0", start: 1_700_000_100)] = LinkCounters(rxBytes: 1 << 62)
        refused.deltas[PendingWrites.Slot(name: "tun0", start: 1_700_000_400)] = LinkCounters(rxBytes: 1 << 62)
        let journal = JournalContents(
            header: JournalHeader(storeID: try store.journalIdentity(), generation: 1, bootID: "boot-1", namespace: 0),
            records: [JournalRecord(time: 1_700_000_500, batch: CommitBatch(pending: refused))], ending: .whole)
        guard case .refused = try store.apply(journal, retention: Retention(), intervals: (15, 300)) else {
            Issue.record("the journal was applied")
            return
        }
        #expect(try store.rowCount("life WHERE ended IS NULL") == 1)
        try store.commit(ending, openLives: [], bootID: "boot-1", at: 1_700_000_600, retention: Retention(), intervals: (15, 300))
        #expect(try store.rowCount("life") == 1)
        #expect(try store.rowCount("life WHERE ended IS NULL") == 0)
    }

    /// A VPN that comes and goes every minute for three days: ended lives
    /// and events stay within their retention, the file stops growing, and
    /// the totals keep every byte and the reset counts every removal.
    @Test func churnStaysWithinRetention() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var retention = Retention()
        retention.fiveMinuteHours = 2
        retention.hourlyDays = 1
        retention.dailyDays = 1
        let store = try CounterStore(directory: directory.path)
        var tracker = CounterTracker(bootID: "boot-1")
        var pending = PendingWrites()
        pending.interfaces["tun0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
        let start: Int64 = 1_767_225_600
        var sizes: [Int64] = []
        for minute in 0..<(3 * 24 * 60) {
            let link = LinkSample(ifindex: Int32(10 + minute), name: "tun0", kind: "tun")
            var gone = link
            gone.counters = LinkCounters(rxBytes: 1000, txBytes: 10)
            let begun = Instant(wall: start + Int64(minute) * 60, sinceBoot: Double(minute) * 60)
            let ended = Instant(wall: begun.wall + 50, sinceBoot: begun.sinceBoot + 50)
            pending.record(tracker.observe(event: LinkEvent(kind: .new, link: link), at: begun), at: begun)
            pending.record(tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: gone), at: ended), at: ended)
            guard minute % 5 == 4 else { continue }
            try store.commit(pending, openLives: tracker.lives.values, bootID: "boot-1", at: ended.wall, retention: retention, intervals: (15, 300))
            pending = PendingWrites()
            if minute % (24 * 60) == 24 * 60 - 1 { sizes.append(try store.pageCount()) }
        }
        let lives = try store.rowCount("life")
        let events = try store.rowCount("event")
        // Two hours of lives (plus the hour between prunes); a day of events.
        #expect(lives > 0 && lives <= 3 * 60, "\(lives) lives kept")
        #expect(events > 0 && events <= 25 * 60, "\(events) events kept")
        #expect(try store.rowCount("event WHERE time < \(start + 2 * 86400 - 3600)") == 0)
        #expect(try store.events().allSatisfy { $0.reason == .removed && $0.loss == .none })
        // Every removal counted, its row kept or not.
        #expect(try store.resetCounts() == ["tun0": ["removed": 3 * 24 * 60]])
        // Day three adds nothing to the file that day two had not reached.
        #expect(sizes.count == 3 && sizes[2] <= sizes[1], "pages at the end of each day: \(sizes)")
        let interface = try #require(try store.interfaces().first)
        #expect(interface.totals.rxBytes == 3 * 24 * 60 * 1000)
        #expect(try store.integrityCheck() == "ok")
    }

    /// One ifindex twice in one commit under one name (a link made with an
    /// explicit index): a veth that lost its final rx, then a tun with
    /// nothing lost. Each removal is its own life's and its own event.
    @Test func twoRemovalsOfOneIfindexInOneCommitAreEachTheirOwnLifes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var tracker = CounterTracker(bootID: "boot-1")
        var pending = PendingWrites()
        let start: Int64 = 1_767_225_600
        for (offset, kind) in [(Int64(0), "veth"), (100, "tun")] {
            let link = LinkSample(ifindex: 5, name: "x0", kind: kind)
            var gone = link
            gone.counters = LinkCounters(rxBytes: 1000, txBytes: 10)
            let begun = Instant(wall: start + offset, sinceBoot: Double(offset) + 10)
            let ended = Instant(wall: start + offset + 50, sinceBoot: Double(offset) + 60)
            pending.record(tracker.observe(event: LinkEvent(kind: .new, link: link), at: begun), at: begun)
            pending.record(tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: gone), at: ended), at: ended)
        }
        try store.commit(pending, openLives: tracker.lives.values, bootID: "boot-1", at: start + 200, retention: Retention(), intervals: (15, 300))
        #expect(try store.rowCount("event") == 2)
        #expect(try store.database.query("SELECT end_reason FROM life ORDER BY ended") { $0.text(0) } == ["removed", "removed"])
        #expect(try store.events().map { "\($0.time) \($0.loss.name)" } == ["\(start + 50) unknown", "\(start + 150) none"])
        #expect(try store.resetCounts() == ["x0": ["removed": 2]])
    }

    /// An error names the statement that failed on one line, whatever
    /// lines the statement spans.
    @Test(arguments: [
        ("CREATE TABLE bucket_v3 (\n    interface_id INTEGER NOT NULL,\n\tstart INTEGER\n)", "CREATE TABLE bucket_v3 ( interface_id INTEGER NOT NULL, star"),
        ("SELECT 1", "SELECT 1"),
        ("  \n  ", ""),
    ])
    func aStatementIsNamedOnOneLine(_ sql: String, _ expected: String) {
        #expect(SQLiteDatabase.summary(of: sql) == expected)
    }

    @Test func aNonSQLiteFileIsRefusedAndLeftUntouched() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try CounterStore(directory: directory.path)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.exitCode == .dataError && error.description.contains("left untouched")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    /// A reader that held the WAL from being reset lets it grow; the next
    /// reset cuts it back to the automatic checkpoint's size in this
    /// store's pages (a header and 1000 frames, each a page and 24 bytes),
    /// whether the store began with 1 KiB pages or with SQLite's 4 KiB.
    @Test(arguments: [nil, 4096] as [Int?])
    func theWALIsCutBackToTheCheckpointSizeInTheStoresPages(begunWith pageSize: Int?) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        if let pageSize {
            try mustRun("/usr/bin/sqlite3", [path, "PRAGMA page_size = \(pageSize); CREATE TABLE t(x); DROP TABLE t;"])
        }
        let store = try CounterStore(directory: directory.path)
        let page = Int64(pageSize ?? CounterStore.pageSize)
        #expect(try store.database.query("PRAGMA page_size") { $0.integer(0) } == [page])
        #expect(try store.database.query("PRAGMA journal_size_limit") { $0.integer(0) } == [32 + 1000 * (page + 24)])
    }

    @Test func aForeignDatabaseIsRefusedAndLeftUntouched() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try mustRun("/usr/bin/sqlite3", [path, "CREATE TABLE photos(id INTEGER); INSERT INTO photos VALUES (1);"])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { try CounterStore(directory: directory.path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aNewerSchemaIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try CounterStore(directory: directory.path)
        try mustRun("/usr/bin/sqlite3", [path, "PRAGMA user_version = 99;"])
        #expect {
            _ = try CounterStore(directory: directory.path)
        } throws: { error in
            (error as? StoreError)?.description == "\(path): store schema version 99 is newer than this ifmeter supports (\(CounterStore.schemaVersion)); upgrade ifmeter, the store was left untouched"
        }
    }

    @Test func aReaderNeverCreatesAStore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect {
            _ = try CounterStore(directory: directory.path, readOnly: true)
        } throws: { error in
            (error as? StoreError)?.exitCode == .noInput
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test(arguments: [Granularity.fiveMinutes, .hour, .day, .month, .year])
    func bucketStartsContainTheirTime(_ granularity: Granularity) {
        for time: Int64 in [0, 1_700_000_000, 1_709_251_199, 1_735_689_600, 1_800_000_123] {
            let start = TimeBuckets.start(of: granularity, containing: time)
            #expect(start <= time)
            #expect(TimeBuckets.start(of: granularity, containing: start) == start)
            // The next bucket starts after `time`.
            let next = TimeBuckets.start(of: granularity, -1, before: time)
            #expect(next > time)
        }
    }
}
