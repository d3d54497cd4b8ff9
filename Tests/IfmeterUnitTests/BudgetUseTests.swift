import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// Each budget's use counts its own period and direction, from the buckets of that size and what the
/// store lacks yet; status, check and the metrics all read it from here.
@Suite struct BudgetUseTests {
    static let now = TimeText.parse("2026-11-20 14:30")!
    static let hour = TimeBuckets.start(of: .hour, containing: now)
    static let day = TimeBuckets.start(of: .day, containing: now)

    static func bucket(_ name: String, _ granularity: Granularity, _ start: Int64, rx: UInt64, tx: UInt64) -> StoredBucket {
        StoredBucket(name: name, interfaceClass: "cellular", granularity: granularity, start: start,
                     counters: LinkCounters(rxBytes: rx, txBytes: tx), incomplete: nil)
    }

    static let rows: [StoredBucket] = [
        bucket("wwan0", .hour, hour - 3600, rx: 1_000, tx: 1_000),  // the hour before: not this hour's
        bucket("wwan0", .hour, hour, rx: 300, tx: 30),
        bucket("wwan0", .day, day - 86_400, rx: 5_000, tx: 5_000),
        bucket("wwan0", .day, day, rx: 2_000, tx: 200),
        bucket("wwan1", .day, day, rx: 700, tx: 70),
        bucket("wwan0", .month, TimeBuckets.start(of: .month, containing: now), rx: 40_000, tx: 4_000),
        bucket("wwan0", .year, TimeBuckets.start(of: .year, containing: now), rx: 90_000, tx: 9_000),
    ]

    static let cases: [(budget: Budget, used: UInt64)] = [
        (Budget(target: .interface("wwan0"), bytes: 1, period: .hour, direction: .rx), 300 + 10),
        (Budget(target: .interface("wwan0"), bytes: 1, period: .hour, direction: .tx), 30 + 1),
        (Budget(target: .interface("wwan0"), bytes: 1, period: .day), 2_200 + 11),
        (Budget(target: .interfaceClass(.cellular), bytes: 1, period: .day, direction: .rx), 2_000 + 700 + 10),
        (Budget(target: .interface("wwan0"), bytes: 1, period: .month, direction: .tx), 4_000 + 1),
        (Budget(target: .interface("wwan0"), bytes: 1, period: .year), 99_000 + 11),
        // BillingDay=20: the cycle began at today's midnight, the day before is the last cycle's.
        (Budget(target: .interface("wwan0"), bytes: 1), 2_200 + 11),
        (Budget(target: .interface("wwan9"), bytes: 1, period: .day), 0),
    ]

    @Test(arguments: cases)
    func countsItsPeriodAndDirection(_ testCase: (budget: Budget, used: UInt64)) throws {
        var configuration = Configuration()
        configuration.billingDay = 20
        configuration.budgets = [testCase.budget]
        let members = [
            BudgetMember(name: "wwan0", interfaceClass: "cellular", firstSeen: 0, uncommitted: LinkCounters(rxBytes: 10, txBytes: 1)),
            BudgetMember(name: "wwan1", interfaceClass: "cellular", firstSeen: 0),
        ]
        var asked: [Granularity] = []
        let statuses = try BudgetUse.statuses(configuration, members: members, now: Self.now) { granularity, start in
            asked.append(granularity)
            return Self.rows.filter { $0.granularity == granularity && $0.start >= start }
        }
        let status = try #require(statuses.first)
        #expect(status.used == testCase.used)
        #expect(asked == [testCase.budget.period.granularity])
        #expect(status.periodStart <= Self.now && Self.now < status.periodEnd)
    }

    /// Periods in the local calendar; a cycle from its own billing day.
    @Test(arguments: [
        (BudgetPeriod.hour, "2026-11-20 14:00", "2026-11-20 15:00"), (.day, "2026-11-20", "2026-11-21"),
        (.month, "2026-11-01", "2026-12-01"), (.year, "2026-01-01", "2027-01-01"), (.cycle, "2026-11-03", "2026-12-03"),
    ])
    func periodBounds(_ period: BudgetPeriod, _ start: String, _ end: String) {
        let bounds = period.bounds(containing: Self.now, billingDay: 3)
        #expect(bounds.start == TimeText.parse(start))
        #expect(bounds.end == TimeText.parse(end))
    }

    /// A short period is projected after a 24th of it, not after a day it never lasts.
    @Test(arguments: [(Int64(149), ProjectionConfidence.low), (150, .medium), (899, .medium), (900, .high)])
    func anHourIsJudgedOnItsOwnScale(_ observed: Int64, _ confidence: ProjectionConfidence) {
        let projection = BudgetProjection(used: 100, cycleStart: 0, cycleEnd: 3_600, countingSince: 0, now: observed)
        #expect(projection.confidence == confidence)
    }
}
