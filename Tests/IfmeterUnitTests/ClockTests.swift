import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// Traffic is never dated to a time that did not happen: a clock a time service has not set yet,
/// or one before the store's last commit, holds dating; a step re-dates what waits; rows a wrong
/// clock left in the future move to now (ClockTrust, PendingWrites.redate, CounterStore.redateFuture).
@Suite struct ClockTests {
    typealias Reading = ClockTrust.Reading
    static let lastCommit: Int64 = 1_796_000_000

    static func reading(_ wall: Double, _ boottime: Double, synced: Bool = false, expected: Bool = false) -> Reading {
        Reading(wall: wall, boottime: boottime, synchronized: synced, syncExpected: expected)
    }

    /// At start: (reading, the hold it begins with).
    static let starts: [(Reading, ClockTrust.Hold?)] = [
        (reading(1_796_000_100, 10), nil),  // after the last commit, no time service: as it says
        (reading(1_796_000_100, 10, expected: true), .notSynchronized),  // timesyncd has not set it yet
        (reading(1_796_000_100, 10, synced: true, expected: true), nil),
        (reading(1_577_836_800, 10), .beforeLastCommit(lastCommit)),  // a Pi at 2020-01-01
        (reading(1_577_836_800, 10, synced: true), nil),  // synchronised wins: the last commit was wrong
        (reading(1_924_992_000, 10, expected: true), .notSynchronized),  // a bad RTC at 2031, before NTP
    ]

    @Test(arguments: starts) func aStartHoldsDatingWhenTheClockIsKnownWrongOrNotYetSet(_ start: Reading, _ hold: ClockTrust.Hold?) {
        let trust = ClockTrust(start, lastCommit: Self.lastCommit, wait: 300)
        #expect(trust.hold == hold)
        #expect(trust.isHolding == (hold != nil))
    }

    /// (start, next reading, the step seen, the release).
    static let changes: [(Reading, Reading, Double?, ClockTrust.Release?)] = [
        // NTP steps the Pi forward six years: the step is seen, and past the last commit the hold ends.
        (reading(1_577_836_800, 10), reading(1_796_000_200, 25), 1_796_000_200 - 1_577_836_800 - 15, .pastLastCommit),
        // timesyncd steps a 2031 clock back and says it is synchronised.
        (reading(1_924_992_000, 10, expected: true), reading(1_796_000_200, 25, synced: true, expected: true), 1_796_000_200 - 1_924_992_000 - 15, .synchronized),
        // No sync within the wait: dating goes on by the clock.
        (reading(1_796_000_100, 10, expected: true), reading(1_796_000_400, 310, expected: true), nil, .waitedOut),
        (reading(1_796_000_100, 10, expected: true), reading(1_796_000_399, 309, expected: true), nil, nil),
        // A slew, a sample's jitter or a suspend (both clocks move) is no step.
        (reading(1_796_000_100, 10), reading(1_796_000_116.5, 25), nil, nil),
        (reading(1_796_000_100, 10), reading(1_796_090_100, 90_010), nil, nil),
        // A step while trusted is seen; there is nothing to release.
        (reading(1_796_000_100, 10), reading(1_795_996_515, 25), -3600, nil),
    ]

    @Test(arguments: changes) func aReadingSeesStepsAndEndsHolds(_ start: Reading, _ next: Reading, _ step: Double?, _ release: ClockTrust.Release?) {
        var trust = ClockTrust(start, lastCommit: Self.lastCommit, wait: 300)
        let change = trust.observe(next)
        #expect(change.step == step)
        #expect(change.released == release)
        let first = trust.takeRelease(), second = trust.takeRelease()
        #expect(first == (release != nil))
        #expect(!second)
        if release != nil { #expect(!trust.isHolding) }
    }

    /// History is judged (pruned, future rows moved) only by a clock no time service is still expected to set.
    @Test func onlyATrustedClockJudgesHistory() {
        var waited = ClockTrust(Self.reading(1_796_000_100, 10, expected: true), lastCommit: Self.lastCommit, wait: 300)
        #expect(!waited.mayJudgeHistory)
        _ = waited.observe(Self.reading(1_796_000_400, 310, expected: true))
        #expect(!waited.isHolding && !waited.mayJudgeHistory)
        // Offline, never synchronised: a day unstepped, and the prune may run.
        var offline = waited
        _ = offline.observe(Self.reading(1_796_000_100 + 86_390, 86_400, expected: true))
        #expect(!offline.mayJudgeHistory)
        _ = offline.observe(Self.reading(1_796_000_100 + 86_400, 86_410, expected: true))
        #expect(offline.mayJudgeHistory)
        _ = offline.observe(Self.reading(1_796_000_100 + 90_000, 86_425, expected: true))  // stepped: a day again
        #expect(!offline.mayJudgeHistory)
        _ = waited.observe(Self.reading(1_796_000_415, 325, synced: true, expected: true))
        #expect(waited.mayJudgeHistory)
        #expect(ClockTrust(Self.reading(1_796_000_100, 10), lastCommit: Self.lastCommit, wait: 300).mayJudgeHistory)
    }

    @Test func aStepRedatesWhatWaits() {
        var pending = PendingWrites()
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: "tun0", ifindex: 4, counters: LinkCounters(rxBytes: 1000))]
        outcome.events = [ResetEvent(.removed, name: "tun0", old: 4, new: nil, loss: .none, detail: "")]
        pending.record(outcome, at: Instant(wall: 1_924_992_010, sinceBoot: 10))
        pending.record(outcome, at: Instant(wall: 1_924_992_310, sinceBoot: 310))
        let step: Int64 = 1_796_000_000 - 1_924_992_000
        pending.redate(by: step)
        #expect(pending.deltas == [
            PendingWrites.Slot(name: "tun0", start: 1_796_000_000 - 1_796_000_000 % 300): LinkCounters(rxBytes: 1000),
            PendingWrites.Slot(name: "tun0", start: 1_796_000_300 - 1_796_000_300 % 300): LinkCounters(rxBytes: 1000),
        ])
        #expect(pending.events.map(\.time) == [1_796_000_010, 1_796_000_310])
    }

    /// A boot whose clock said 2031 committed and folded rows there; once the clock is right they
    /// move into now's rows, every total kept, and later folds count nothing twice.
    @Test func rowsInTheFutureMoveToNowAndAreCountedOnce() throws {
        setenv("TZ", "UTC", 1)
        tzset()
        let directory = try TestEnvironment.temporaryDirectory("clock")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        var tracker = CounterTracker(bootID: "boot-1")
        var pending = PendingWrites()
        pending.interfaces["tun0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
        func tun(_ rx: UInt64) -> [LinkSample] { [LinkSample(ifindex: 4, name: "tun0", kind: "tun", counters: LinkCounters(rxBytes: rx, rxPackets: rx / 100))] }
        // Every row kept, so the folds run but nothing is pruned: the daemon never prunes by a clock
        // it does not trust, and here the test of a 2031 that looked right is of the folds alone.
        var keepAll = Retention()
        (keepAll.fiveMinuteHours, keepAll.hourlyDays, keepAll.dailyDays, keepAll.monthlyMonths) = (0, 0, 0, 0)
        func commit(_ rx: UInt64, at wall: Int64, sinceBoot: Double) throws {
            let now = Instant(wall: wall, sinceBoot: sinceBoot)
            pending.record(rx == 0 ? tracker.start(stored: StoredState(), links: tun(0), at: now) : tracker.observe(dump: tun(rx), at: now, eventsWereLost: false), at: now)
            try store.commit(pending, openLives: tracker.lives.values, bootID: "boot-1", at: wall, retention: keepAll, intervals: (15, 300))
            pending = PendingWrites()
        }
        let today: Int64 = 1_796_000_400  // 2026-11-29 23:40 UTC
        try commit(0, at: today - 7200, sinceBoot: 0)
        try commit(5_000, at: today - 3600, sinceBoot: 3600)  // real traffic, before the reboot
        let future: Int64 = 1_924_992_000  // 2031-01-01
        try commit(7_000, at: future, sinceBoot: 4000)
        try commit(9_000, at: future + 4000, sinceBoot: 8000)  // past an hour: folded there
        #expect(try store.redateFuture(at: today))
        for granularity in Granularity.allCases {
            #expect(try store.buckets(granularity).allSatisfy { $0.start <= today }, "\(granularity)")
            let rows = try store.buckets(granularity).map { ($0.start, $0.counters.rxBytes) }
            #expect(try store.bucketTotals(granularity)["tun0"]?.rxBytes == 9_000, "\(granularity) \(rows)")
        }
        #expect(try !store.redateFuture(at: today))
        try commit(10_000, at: today + 7200, sinceBoot: 15200)  // two hours on: folds run again
        for granularity in Granularity.allCases {
            #expect(try store.bucketTotals(granularity)["tun0"]?.rxBytes == 10_000, "\(granularity)")
        }
        #expect(try store.interfaces().first?.totals.rxBytes == 10_000)
    }
}
