import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// `top` does what its help says: the N largest days among every interface
/// shown, largest first, today ranked by what it holds.
@Suite(.serialized) struct TopTests {
    @Test func theLimitRanksAllInterfacesTogether() throws {
        let (snapshot, directory, store) = try ReportGoldenTests.snapshot()
        defer { try? FileManager.default.removeItem(at: directory) }
        let live = Dictionary(snapshot.interfaces.map { ($0.name, $0.liveDelta) }, uniquingKeysWith: { a, _ in a })
        let rows = HistoryReport.rows(.top, buckets: try store.buckets(.day), live: live, classes: [:], now: snapshot.now,
                                      names: [], from: .min, to: .max, limit: 4)
        #expect(rows.count == 4)
        #expect(rows.map(\.total) == rows.map(\.total).sorted(by: >))
        #expect(Set(rows.map(\.name)) == ["wwan0", "tun0"])
        #expect(rows.allSatisfy { $0.estimated == nil })
        #expect(rows.contains { $0.live })
    }
}
