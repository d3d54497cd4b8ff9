import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// A commit writes five-minute rows only; once an hour they are folded into
/// the hour, day, month and year rows. Whatever has been folded, every
/// reader sees each granularity add up to what was counted, once.
@Suite struct BucketFoldTests {
    let directory: URL

    init() throws { directory = try TestEnvironment.temporaryDirectory("fold") }

    /// 10:00 local on some day: the process zone decides where hours and days fall.
    static let hourStart = TimeBuckets.start(of: .hour, containing: 1_767_225_600 + 10 * 3600)

    private func pending(rxBytes: UInt64, at time: Int64) -> PendingWrites {
        var pending = PendingWrites()
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: "wwan0", ifindex: 3, counters: LinkCounters(rxBytes: rxBytes, rxPackets: 1))]
        pending.record(outcome, at: Instant(wall: time, sinceBoot: 100))
        return pending
    }

    private func commit(_ store: CounterStore, rxBytes: UInt64, at time: Int64) throws {
        try store.commit(pending(rxBytes: rxBytes, at: time), openLives: [], bootID: "boot-a", at: time, retention: Retention(), intervals: (15, 300))
    }

    /// Each granularity's buckets as `start: rx bytes`, as readers see them.
    private func seen(_ store: CounterStore, _ granularity: Granularity, from: Int64 = .min, to: Int64 = .max) throws -> [Int64: UInt64] {
        Dictionary(try store.buckets(granularity, from: from, to: to).map { ($0.start, $0.counters.rxBytes) }, uniquingKeysWith: +)
    }

    /// What a write into every granularity at once would have left.
    private func expected(_ deltas: [(time: Int64, rxBytes: UInt64)], _ granularity: Granularity) -> [Int64: UInt64] {
        deltas.reduce(into: [:]) { $0[TimeBuckets.start(of: granularity, containing: $1.time), default: 0] += $1.rxBytes }
    }

    private func coarseRows(_ store: CounterStore) throws -> Int64 {
        try store.database.query("SELECT count(*) FROM bucket WHERE granularity != '5min'") { $0.integer(0) }.first ?? -1
    }

    @Test func commitsWriteFiveMinuteRowsAndAnHourLaterTheyAreFoldedOnce() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let hour = Self.hourStart
        var deltas: [(time: Int64, rxBytes: UInt64)] = [(hour + 600, 100), (hour + 1800, 100)]
        let store = try CounterStore(directory: directory.path)
        for (time, bytes) in deltas { try commit(store, rxBytes: bytes, at: time) }

        // Within the hour, only five-minute rows are written, and every
        // reader sees the hour, day, month and year they add up to.
        #expect(try coarseRows(store) == 0)
        for granularity in Granularity.allCases {
            #expect(try seen(store, granularity) == expected(deltas, granularity), "\(granularity)")
            #expect(try store.bucketTotals(granularity)["wwan0"]?.rxBytes == 200, "\(granularity)")
        }

        // The next hour's first commit folds the hour before it.
        deltas.append((hour + 3600 + 60, 50))
        try commit(store, rxBytes: 50, at: hour + 3600 + 60)
        #expect(try store.meta("folded_through") == String(hour + 3600))
        #expect(try store.database.query("SELECT rx_bytes FROM bucket WHERE granularity = 'hour' AND start = ?", [.integer(hour)]) { $0.integer(0) } == [200])
        #expect(try store.database.query("SELECT count(*) FROM bucket WHERE granularity = 'hour' AND start = ?", [.integer(hour + 3600)]) { $0.integer(0) } == [0])
        for granularity in Granularity.allCases {
            #expect(try seen(store, granularity) == expected(deltas, granularity), "\(granularity)")
            #expect(try store.bucketTotals(granularity)["wwan0"]?.rxBytes == 250, "\(granularity)")
        }
        // A range takes a row not folded yet by the start of its hour.
        #expect(try seen(store, .hour, from: hour + 3600) == [hour + 3600: 50])
        #expect(try seen(store, .hour, to: hour + 3600) == [hour: 200])

        // The clock steps back into a folded hour: the delta goes into
        // every granularity at once, never into a row folded again.
        deltas.append((hour + 900, 7))
        try commit(store, rxBytes: 7, at: hour + 900)
        for granularity in Granularity.allCases {
            #expect(try seen(store, granularity) == expected(deltas, granularity), "\(granularity)")
        }
        store.close()

        // A reader and the next writer read the same.
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        let again = try CounterStore(directory: directory.path)
        for granularity in Granularity.allCases {
            #expect(try seen(reader, granularity) == expected(deltas, granularity), "\(granularity)")
            #expect(try seen(again, granularity) == expected(deltas, granularity), "\(granularity)")
        }
    }

    /// Since version 5 the all-time totals are folded too: a commit leaves
    /// the interface row alone (one page less per interface counted), and
    /// every reader adds the five-minute rows not folded yet to it, all
    /// eight counters and the last time counted.
    @Test func theAllTimeTotalsAreFoldedHourlyAndReadWholeMeanwhile() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let hour = Self.hourStart
        let counted = LinkCounters(rxBytes: 100, txBytes: 10, rxPackets: 2, txPackets: 1, rxErrors: 3, txErrors: 1, rxDropped: 2, txDropped: 1)
        func commit(_ store: CounterStore, _ counters: LinkCounters, at time: Int64) throws {
            var pending = PendingWrites()
            var outcome = AccountingOutcome()
            outcome.deltas = [Delta(name: "wwan0", ifindex: 3, counters: counters)]
            pending.record(outcome, at: Instant(wall: time, sinceBoot: 100))
            try store.commit(pending, openLives: [], bootID: "boot-a", at: time, retention: Retention(), intervals: (15, 300))
        }
        func row(_ store: CounterStore) throws -> [Int64] {
            try store.database.query("SELECT rx_bytes, rx_errors, tx_dropped, last_seen FROM interface WHERE name = 'wwan0'") {
                [$0.integer(0), $0.integer(1), $0.integer(2), $0.integer(3)]
            }.first ?? []
        }
        let store = try CounterStore(directory: directory.path)
        try commit(store, counted, at: hour + 600)
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        try commit(store, counted, at: hour + 1800)

        // Within the hour the row is as the first commit created it.
        #expect(try row(store) == [0, 0, 0, hour + 600])
        for opened in [store, reader] {
            let read = try opened.interface(named: "wwan0")
            #expect(read?.totals == counted + counted)
            #expect(read?.lastSeen == hour + 1800)
            #expect(try opened.interfaces().map(\.name) == ["wwan0"])
        }

        // The next hour's first commit folds the totals with the buckets.
        try commit(store, counted, at: hour + 3600 + 60)
        #expect(try row(store) == [200, 6, 2, hour + 1800])
        // Only five-minute rows carry a time: on the rows kept for years it would only grow the store.
        #expect(try store.database.query("SELECT count(*) FROM bucket WHERE granularity != '5min' AND last_counted IS NOT NULL") { $0.integer(0) } == [0])
        for opened in [store, reader] {
            #expect(try opened.interface(named: "wwan0")?.totals == counted + counted + counted)
            #expect(try opened.interface(named: "wwan0")?.lastSeen == hour + 3600 + 60)
        }

        // The clock steps back into the folded hour: straight into the row.
        try commit(store, counted, at: hour + 900)
        #expect(try row(store) == [300, 9, 3, hour + 1800])
        #expect(try store.interface(named: "wwan0")?.totals.rxBytes == 400)
        store.close()
        #expect(try CounterStore(directory: directory.path).interface(named: "wwan0")?.totals.rxErrors == 12)
    }

    /// A reset event with a loss marks a five-minute row (incomplete, no
    /// counters, no last_counted). Nothing was counted then: the fold must
    /// not move last_seen to that slot, which the reader never showed.
    @Test func aFoldMovesLastSeenOnlyToWhatWasCounted() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let hour = Self.hourStart
        let store = try CounterStore(directory: directory.path)
        try commit(store, rxBytes: 100, at: hour + 600)
        var pending = PendingWrites()
        pending.events = [(hour + 1800, ResetEvent(.counterReset, name: "wwan0", old: 3, new: 3, loss: .unknown, detail: "test"))]
        try store.commit(pending, openLives: [], bootID: "boot-a", at: hour + 1800, retention: Retention(), intervals: (15, 300))
        let before = try store.interface(named: "wwan0")?.lastSeen
        #expect(before == hour + 600)
        try store.commit(PendingWrites(), openLives: [], bootID: "boot-a", at: hour + 3600 + 60, retention: Retention(), intervals: (15, 300))
        #expect(try store.meta("folded_through") == String(hour + 3600))
        #expect(try store.interface(named: "wwan0")?.lastSeen == before)
    }

    /// A daemon stopped for three days (past FiveMinuteHours=48) folds what it left at its next commit,
    /// before the prune, so no five-minute row leaves its retention unfolded.
    @Test func aFoldLateByDaysComesBeforeThePrune() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let hour = Self.hourStart
        let store = try CounterStore(directory: directory.path)
        try commit(store, rxBytes: 100, at: hour + 600)
        let later = hour + 3 * 86400
        try commit(store, rxBytes: 1, at: later)
        #expect(try store.buckets(.fiveMinutes).map(\.start) == [TimeBuckets.start(of: .fiveMinutes, containing: later)])
        for granularity in [Granularity.hour, .day, .month, .year] {
            #expect(try store.bucketTotals(granularity)["wwan0"]?.rxBytes == 101, "\(granularity)")
        }
        #expect(try seen(store, .day)[TimeBuckets.start(of: .day, containing: hour)] == 100)
    }

    /// A reader takes its journal copy after the daemon folded (its cached
    /// folded_through is the one it opened with): a journaled delta for a slot
    /// the fold already passed (the clock stepped back) goes to the copy's
    /// five-minute row only, which the copy's own folded_through says is in
    /// the hour row. The hour, day, month and year then miss it.
    @Test func aReaderOpenedBeforeAFoldIncludesAJournalDeltaInEveryGranularity() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let hour = Self.hourStart
        let daemon = try CounterStore(directory: directory.path)
        try commit(daemon, rxBytes: 100, at: hour + 600)
        let storeID = try daemon.journalIdentity()
        let reader = try CounterStore(directory: directory.path, readOnly: true)
        // The daemon's first commit of the next hour folds the hour before it.
        try commit(daemon, rxBytes: 50, at: hour + 3600 + 60)
        #expect(try daemon.meta("folded_through") == String(hour + 3600))
        // Then the clock steps back into the folded hour and a record is journaled.
        let journalPath = directory.appendingPathComponent("ifmeterd.journal").path
        let journal = try CommitJournal(path: journalPath, header: JournalHeader(
            storeID: storeID, generation: try daemon.appliedJournalGeneration() + 1, bootID: "boot-a", namespace: 0))
        try journal.append(JournalRecord(time: hour + 1200, batch: CommitBatch(pending: pending(rxBytes: 7, at: hour + 1200))))
        let overlay = try JournalOverlay(over: reader, journalAt: journalPath)
        #expect(overlay.inclusion.applied == 1)
        #expect(try overlay.store.bucketTotals(.fiveMinutes)["wwan0"]?.rxBytes == 157)
        for granularity in [Granularity.hour, .day, .month, .year] {
            #expect(try overlay.store.bucketTotals(granularity)["wwan0"]?.rxBytes == 157, "\(granularity)")
        }
        #expect(try overlay.store.buckets(.hour).first { $0.start == hour }?.counters.rxBytes == 107)
    }

    /// A store the daemon accepts (every counter within 2^62, and so the
    /// totals the fold will write) whose year row and unfolded five-minute
    /// rows sum past 2^62: the fold refuses the commit in one line rather
    /// than write a sum it cannot go on adding to, and the store opens
    /// again as it was.
    @Test func aFoldPastTheHeadroomIsRefusedAndWritesNothing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let hour = Self.hourStart
        let first = try CounterStore(directory: directory.path)
        try commit(first, rxBytes: 1, at: hour + 60)
        first.close()
        let path = directory.appendingPathComponent(CounterStore.fileName).path
        let limit = CounterStore.counterLimit
        _ = try mustRun("/usr/bin/sqlite3", [path, """
            UPDATE bucket SET rx_bytes = 100 WHERE granularity = '5min';
            INSERT INTO bucket(interface_id, granularity, start, rx_bytes)
              SELECT interface_id, 'year', \(TimeBuckets.start(of: .year, containing: hour)), \(limit - 10) FROM bucket LIMIT 1;
            """])
        let before = try mustRun("/usr/bin/sqlite3", [path, ".dump"])
        let opened = try CounterStore(directory: directory.path)
        #expect {
            try commit(opened, rxBytes: 1, at: hour + 3600 + 60)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.exitCode == .dataError && !error.description.contains("\n") && error.description.contains("would pass 2^62")
        }
        opened.close()
        #expect(try mustRun("/usr/bin/sqlite3", [path, ".dump"]) == before)
        #expect(throws: Never.self) { _ = try CounterStore(directory: directory.path, readOnly: true).buckets(.hour) }
    }

    /// A fold value no ifmeter writes is refused with one line, not built on.
    @Test(arguments: ["-5", "soon", "99999999999999999999"])
    func aStoreWithAFoldValueNoIfmeterWritesIsRefused(_ value: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try CounterStore(directory: directory.path).close()
        let path = directory.appendingPathComponent(CounterStore.fileName).path
        _ = try mustRun("/usr/bin/sqlite3", [path, "UPDATE meta SET value = '\(value)' WHERE key = 'folded_through'"])
        #expect {
            _ = try CounterStore(directory: directory.path)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.exitCode == .dataError && !error.description.contains("\n") && error.description.contains("folded_through")
        }
    }
}
