import Testing
@testable import IfmeterCore

/// The seam rule: vnStat's rows count only for what ended before ifmeter's own first sight of a name.
/// Bucket ends are fixed steps here (a day of 100 s, an hour of 10 s...) so each case reads at a glance.
@Suite struct VnStatSeamTests {
    static let lengths: [Granularity: Int64] = [.fiveMinutes: 1, .hour: 10, .day: 100, .month: 1000, .year: 10_000]
    static func end(_ granularity: Granularity, _ start: Int64) -> Int64 { start + lengths[granularity]! }

    /// Five-minute rows 0..<30, hours 0..<3 and one day, month and year, each summing its finer rows.
    static var history: VnStatInterface {
        var rows: [Granularity: [ImportedRow]] = [:]
        rows[.fiveMinutes] = (0..<30).map { ImportedRow(.fiveMinutes, start: Int64($0), rxBytes: 1, txBytes: 2) }
        rows[.hour] = (0..<3).map { ImportedRow(.hour, start: Int64($0) * 10, rxBytes: 10, txBytes: 20) }
        rows[.day] = [ImportedRow(.day, start: 0, rxBytes: 30, txBytes: 60)]
        rows[.month] = [ImportedRow(.month, start: 0, rxBytes: 30, txBytes: 60)]
        rows[.year] = [ImportedRow(.year, start: 0, rxBytes: 30, txBytes: 60)]
        return VnStatInterface(name: "wwan0", rxTotal: 530, txTotal: 60, rows: rows, top: [ImportedRow(nil, start: 0, rxBytes: 30, txBytes: 60)])
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var seam: Int64?
        var skipping: Set<Granularity> = []
        var fiveMinuteRows: Int
        var hours: [UInt64]
        var day: UInt64?
        var year: UInt64?
        var totalRx: UInt64
        var top: Bool
        var gaps: [Granularity] = []
        var testDescription: String { "seam \(seam.map(String.init) ?? "none") skipping \(skipping.map(\.rawValue).sorted())" }
    }

    @Test(arguments: [
        // Never seen by ifmeter: every row, and vnStat's totals (500 bytes older than its rows).
        Case(seam: nil, fiveMinuteRows: 30, hours: [10, 10, 10], day: 30, year: 30, totalRx: 530, top: true),
        // Seen at 25: the five-minute rows before it, two whole hours, the third cut at 25 (5 rows);
        // the day, month and year rebuilt from those; the top day not over, not kept.
        Case(seam: 25, fiveMinuteRows: 25, hours: [10, 10, 5], day: 25, year: 25, totalRx: 525, top: false),
        // Seen at 0: nothing of vnStat's rows, only what its totals hold beyond them.
        Case(seam: 0, fiveMinuteRows: 0, hours: [], day: nil, year: nil, totalRx: 500, top: false),
        // Seen after everything ended: all rows whole.
        Case(seam: 20_000, fiveMinuteRows: 30, hours: [10, 10, 10], day: 30, year: 30, totalRx: 530, top: true),
        // MonthRotate: no months; the year is rebuilt from the days.
        Case(seam: 25, skipping: [.month], fiveMinuteRows: 25, hours: [10, 10, 5], day: 25, year: 25, totalRx: 525, top: false),
    ])
    func vnStatsRowsStopAtTheSeam(_ expected: Case) {
        let plan = VnStatSeam.plan(Self.history, seam: expected.seam, skipping: expected.skipping, end: Self.end)
        func rows(_ granularity: Granularity) -> [ImportedRow] { plan.rows.filter { $0.granularity == granularity } }
        #expect(rows(.fiveMinutes).count == expected.fiveMinuteRows)
        #expect(rows(.hour).map(\.rxBytes) == expected.hours)
        #expect(rows(.day).first?.rxBytes == expected.day)
        #expect(rows(.year).first?.rxBytes == expected.year)
        #expect(rows(.month).isEmpty == (expected.skipping.contains(.month) || expected.day == nil))
        #expect(plan.totals.rxBytes == expected.totalRx)
        #expect(plan.rows.contains { $0.granularity == nil } == expected.top)
        #expect(plan.gaps == expected.gaps)
    }

    /// A day the seam cuts whose hours vnStat no longer keeps is left out and said, never guessed.
    @Test func aCutRowWithoutFinerRowsIsAGap() {
        var history = Self.history
        history.rows[.fiveMinutes] = []
        history.rows[.hour] = [ImportedRow(.hour, start: 20, rxBytes: 10, txBytes: 20)]
        let plan = VnStatSeam.plan(history, seam: 25, end: Self.end)
        #expect(plan.gaps.contains(.day))
        #expect(plan.gaps.contains(.hour))
        #expect(!plan.rows.contains { $0.granularity == .day })
    }
}
