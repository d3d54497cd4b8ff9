import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// `check`'s projection rests on the time observed and says how sure it is;
/// the history views' estimates scale the running bucket the same way.
@Suite struct ProjectionTests {
    static let day: Int64 = 86_400
    static let cycleStart: Int64 = 1_000 * day
    static let cycleEnd = cycleStart + 30 * day

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var used: UInt64
        var countingSince: Int64
        var now: Int64
        var confidence: ProjectionConfidence
        var projected: UInt64
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        // The case: 28 MB ten minutes into the cycle (105.83 GiB projected before).
        Case(label: "10 min into the cycle", used: 28_000_000, countingSince: 0, now: cycleStart + 600,
             confidence: .low, projected: 120_960_000_000),
        // Installed mid-cycle: the rate is over the 5 days counted, not the 15 since the cycle began.
        Case(label: "installed mid-cycle", used: 5_000_000_000, countingSince: cycleStart + 10 * day, now: cycleStart + 15 * day,
             confidence: .medium, projected: 20_000_000_000),
        Case(label: "counted all cycle", used: 15_000_000_000, countingSince: 0, now: cycleStart + 15 * day,
             confidence: .high, projected: 30_000_000_000),
        Case(label: "a day exactly", used: 1_000, countingSince: cycleStart + 5 * day, now: cycleStart + 6 * day,
             confidence: .medium, projected: 25_000),
        Case(label: "nothing observed yet", used: 0, countingSince: cycleStart + 3 * day, now: cycleStart + 3 * day,
             confidence: .low, projected: 0),
    ]

    @Test(arguments: cases)
    func projection(_ testCase: Case) {
        let projection = BudgetProjection(
            used: testCase.used, cycleStart: Self.cycleStart, cycleEnd: Self.cycleEnd, countingSince: testCase.countingSince, now: testCase.now)
        #expect(projection.confidence == testCase.confidence)
        #expect(projection.isTrusted == (testCase.confidence != .low))
        #expect(projection.projected == testCase.projected)
        #expect(projection.observedSince == max(Self.cycleStart, testCase.countingSince))
    }

    /// Too little evidence never alarms, however steep the early rate.
    @Test func tooEarlyNeverAlarms() throws {
        let (directory, store, stored, _) = try ReportGoldenTests.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = stored
        configuration.budgets = [Budget(target: .interfaceClass(.cellular), bytes: 10_000_000)]
        configuration.billingDay = 29  // the cycle began at 00:00 today, four hours of it observed
        let now = TimeText.parse("2026-11-29 04:00")!
        let snapshot = try SnapshotReader.read(
            store: store, configuration: configuration, bootID: "boot-1", now: Instant(wall: now, sinceBoot: 1), kernel: nil, daemonRunning: false)
        #expect(snapshot.budgets.map(\.state) == [.ok])
        #expect(snapshot.budgets.first?.projection.confidence == .low)
        #expect(CheckVerdict(snapshot) == .ok)
        // No figure in JSON either, as the text shows none: a script must
        // not read four hours' rate as the cycle's.
        let json = try #require(snapshot.budgets.first.map { StatusReport.budgetJSON($0).rendered() })
        #expect(json.contains("\"projected_bytes\": null"), "\(json)")
        // Said within 80 columns, as every status line.
        let lines = StatusReport.budgetLines(snapshot, units: Units()).split(separator: "\n")
        #expect(lines.contains { $0.contains("ok, too early") })
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines)")
    }

    static let month: Int64 = 30 * 86_400
    static let estimates: [(counters: UInt64, elapsed: Int64, length: Int64, bucket: Int64, expected: UInt64?)] = [
        (1_000, 3_600, 86_400, 86_400, 24_000),  // an hour of a day: the first estimate
        (1_000, 3_599, 86_400, 86_400, nil),
        (1_000, 86_400, 86_400, 86_400, 1_000),
        (0, 3_600, 86_400, 86_400, 0),
        (1_000, 150, 3_600, 3_600, 24_000),  // a twenty-fourth of an hour
        (1_000, 149, 3_600, 3_600, nil),
        (1_000, 59, 900, 900, nil),  // never within the first minute
        (1_000, 120, month, month, nil),  // two minutes of a tunnel are no month's rate
        (1_000, 86_399, month, month, nil),
        (1_000, 86_400, month, month, 30_000),  // a day, as check waits before a budget's projection
        (1_000, 86_400, 15 * 86_400, month, 15_000),  // counted from mid-month: scaled to what is left of it
        (1_000, 86_400, 365 * 86_400, 365 * 86_400, 365_000),
    ]

    @Test(arguments: estimates)
    func runningBucketEstimate(_ testCase: (counters: UInt64, elapsed: Int64, length: Int64, bucket: Int64, expected: UInt64?)) {
        let estimate = HistoryReport.estimate(
            LinkCounters(rxBytes: testCase.counters), elapsed: testCase.elapsed, length: testCase.length, bucket: testCase.bucket)
        #expect(estimate?.rxBytes == testCase.expected)
    }

    /// A running day's estimate only while one of the row's links is
    /// present: a link that is gone carries nothing more. A merge adds its
    /// members each projected on its own, a gone one as it stands.
    static let presence: [(selection: InterfaceSelection, present: Set<String>?, estimated: UInt64?)] = [
        ([], ["tun0"], 24_000),
        ([], [], nil),  // deleted since: what it counted is the day's total
        ([], ["wwan0"], nil),
        ([], nil, 24_000),  // the kernel not read: no way to tell
        (InterfaceSelection(groups: [["tun0", "tun1"]]), ["tun1"], 25_000),  // tun1's 24,000 and tun0's 1,000 (48,000 when projected as one)
        (InterfaceSelection(groups: [["tun0", "tun1"]]), ["tun0", "tun1"], 48_000),
        (InterfaceSelection(groups: [["tun0", "tun1"]]), nil, 48_000),
        (InterfaceSelection(groups: [["tun0", "tun1"]]), ["tun2"], nil),
    ]

    @Test(arguments: presence)
    func noEstimateForALinkThatIsGone(_ testCase: (selection: InterfaceSelection, present: Set<String>?, estimated: UInt64?)) {
        let day: Int64 = 20_000 * 86_400
        let buckets = ["tun0", "tun1"].map {
            StoredBucket(name: $0, interfaceClass: "tunnel", granularity: .day, start: day, counters: LinkCounters(rxBytes: 1_000), incomplete: nil)
        }
        let rows = HistoryReport.rows(
            .days, buckets: buckets, live: [:], classes: [:], now: day + 3_600, names: testCase.selection, from: .min, to: .max, limit: 10,
            countingSince: ["tun0": 0, "tun1": 0], present: testCase.present)
        #expect(rows.first?.estimated?.rxBytes == testCase.estimated, "\(rows)")
    }

    /// Nor while it is not counted: a link present but no longer watched
    /// (`Watch=`, an `ignore` override) carries nothing anyone counts. A
    /// merge adds such a member as it stands.
    static let unwatched: [(selection: InterfaceSelection, present: Set<String>?, unwatched: Set<String>, estimated: UInt64?)] = [
        ([], ["tun0"], [], 24_000),
        ([], ["tun0"], ["tun0"], nil),
        ([], nil, ["tun0"], nil),  // the kernel not read: the configuration alone says it
        ([], ["tun0"], ["tun1"], 24_000),
        (InterfaceSelection(groups: [["tun0", "tun1"]]), ["tun0", "tun1"], ["tun0"], 25_000),
        (InterfaceSelection(groups: [["tun0", "tun1"]]), ["tun0", "tun1"], ["tun0", "tun1"], nil),
    ]

    @Test(arguments: unwatched)
    func noEstimateForALinkNoLongerCounted(
        _ testCase: (selection: InterfaceSelection, present: Set<String>?, unwatched: Set<String>, estimated: UInt64?)
    ) {
        let day: Int64 = 20_000 * 86_400
        let buckets = ["tun0", "tun1"].map {
            StoredBucket(name: $0, interfaceClass: "tunnel", granularity: .day, start: day, counters: LinkCounters(rxBytes: 1_000), incomplete: nil)
        }
        let rows = HistoryReport.rows(
            .days, buckets: buckets, live: [:], classes: [:], now: day + 3_600, names: testCase.selection, from: .min, to: .max, limit: 10,
            countingSince: ["tun0": 0, "tun1": 0], present: testCase.present, unwatched: testCase.unwatched)
        #expect(rows.first?.estimated?.rxBytes == testCase.estimated, "\(rows)")
    }

    /// `days -i wwan0+tun0`: each member is projected from when it was
    /// counted, not the merge from its earliest member. wwan0, counted all
    /// day, 1,000 in four hours: 6,000; tun0, counted from 02:00, 1,000 in
    /// two hours: 11,000 by midnight. As one from 00:00: 12,000.
    @Test func mergedMembersAreProjectedFromTheirOwnStart() {
        let day: Int64 = 20_000 * 86_400
        let buckets = ["wwan0", "tun0"].map {
            StoredBucket(name: $0, interfaceClass: "other", granularity: .day, start: day, counters: LinkCounters(rxBytes: 1_000), incomplete: nil)
        }
        let rows = HistoryReport.rows(
            .days, buckets: buckets, live: [:], classes: [:], now: day + 4 * 3_600, names: InterfaceSelection(groups: [["wwan0", "tun0"]]),
            from: .min, to: .max, limit: 10, countingSince: ["wwan0": 0, "tun0": day + 2 * 3_600], present: ["wwan0", "tun0"])
        #expect(rows.map(\.name) == ["wwan0+tun0"])
        #expect(rows.first?.counters.rxBytes == 2_000)
        #expect(rows.first?.estimated?.rxBytes == 17_000, "\(rows)")
    }
}

/// status's rate needs no waiting: the live delta over the seconds since
/// the daemon's last commit, only while that window means "now".
@Suite struct StatusRateTests {
    static func snapshot(lastCommit: Int64?, stale: Bool, now: Int64, presence: LinkPresence = .up) -> Snapshot {
        let interface = InterfaceSnapshot(
            name: "wwan0", interfaceClass: "cellular", signal: "", presence: presence, liveDelta: LinkCounters(rxBytes: 6_000, txBytes: 600),
            today: .zero, cycle: .zero, sinceBoot: .zero, allTime: .zero, rate: nil, rateWindow: nil, lastEvent: nil, incomplete: nil, firstSeen: 0)
        return Snapshot(
            now: now, bootID: "b", billingDay: 1, cycleStart: 0, cycleEnd: 1, interfaces: [interface],
            daemon: DaemonHealth(running: true, lastCommit: lastCommit, commitInterval: 300, sampleInterval: 15, stale: stale),
            budgets: [], kernelRead: true)
    }

    static let cases: [(lastCommit: Int64?, stale: Bool, now: Int64, presence: LinkPresence, rx: Double?)] = [
        (1_000, false, 1_060, .up, 100),  // 6000 bytes over 60 s
        (1_000, false, 1_002, .up, nil),  // two seconds: too short to mean anything
        (1_000, true, 9_000, .up, nil),  // the daemon stopped committing: not "now"
        (nil, false, 1_060, .up, nil),
        (1_000, false, 1_060, .gone, nil),
        (1_000, false, 1_060, .unwatched, nil),  // whatever passes, nobody counts it: no rate, not 0
    ]

    @Test(arguments: cases)
    func rateSinceLastCommit(_ testCase: (lastCommit: Int64?, stale: Bool, now: Int64, presence: LinkPresence, rx: Double?)) {
        var snapshot = Self.snapshot(lastCommit: testCase.lastCommit, stale: testCase.stale, now: testCase.now, presence: testCase.presence)
        snapshot.setRatesSinceLastCommit()
        #expect(snapshot.interfaces[0].rate?.rx == testCase.rx)
        #expect((snapshot.interfaces[0].rateWindow != nil) == (testCase.rx != nil))
    }
}
