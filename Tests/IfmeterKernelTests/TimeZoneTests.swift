import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// Buckets in every zone: the daemon counts in one zone (TZ set on its
/// process only), a reader runs in another, and the hours and days shown
/// are the daemon zone's, each once, including both DST transitions, a
/// half-hour zone and a zone whose DST shift is thirty minutes.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct TimeZoneTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var zone: String
        var reader: String
        /// A moment the counting straddles (a DST transition when the zone has one).
        var around: Date
        var testDescription: String { "\(zone) read in \(reader)" }
    }

    static func transition(_ zone: String, after: String) -> Date {
        let start = ISO8601DateFormatter().date(from: after)!
        return TimeZone(identifier: zone)!.nextDaylightSavingTimeTransition(after: start)!
    }

    static let cases: [Case] = [
        Case(zone: "America/New_York", reader: "Asia/Kolkata", around: transition("America/New_York", after: "2026-03-01T00:00:00Z")),
        Case(zone: "America/New_York", reader: "UTC", around: transition("America/New_York", after: "2026-10-01T00:00:00Z")),
        Case(zone: "Asia/Kolkata", reader: "America/New_York", around: ISO8601DateFormatter().date(from: "2026-06-15T04:00:00Z")!),
        Case(zone: "Australia/Lord_Howe", reader: "Europe/Berlin", around: transition("Australia/Lord_Howe", after: "2026-03-15T00:00:00Z")),
        Case(zone: "Australia/Lord_Howe", reader: "Asia/Kathmandu", around: transition("Australia/Lord_Howe", after: "2026-09-15T00:00:00Z")),
        Case(zone: "UTC", reader: "Pacific/Chatham", around: ISO8601DateFormatter().date(from: "2026-07-01T00:10:00Z")!),
    ]

    @Test(arguments: cases)
    func bucketsFollowTheDaemonsZone(_ testCase: Case) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        let around = Int64(testCase.around.timeIntervalSince1970)
        func offset(_ moment: Int64) -> Double { Double(moment) - Date().timeIntervalSince1970 }
        // First sight, then 1000 bytes before the moment, 2000 after, 4000 a day later.
        let steps: [(at: Int64, bytes: Int)] = [(around - 5400, 0), (around - 1800, 1000), (around + 1800, 2000), (around + 23 * 3600, 4000)]
        for step in steps {
            if step.bytes > 0 { try daemon.namespace.tunTraffic(name: "tun0", rxPackets: step.bytes / 1000, size: 1000, persist: true) }
            try daemon.runOnce(clockOffset: offset(step.at), environment: ["TZ": testCase.zone])
        }
        let now = around + 23 * 3600 + 60
        func read(_ arguments: [String]) throws -> [[String: Any]] {
            let command = ["env", "TZ=\(testCase.reader)", "IFMETER_TEST_CLOCK_OFFSET=\(offset(now))", TestEnvironment.binary("ifmeter"),
                           "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments + ["--json"]
            let result = try daemon.namespace.run(command)
            #expect(result.status == 0, "\(result.standardError)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            return try #require(document["rows"] as? [[String: Any]])
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: testCase.zone)!
        let formatter = DateFormatter()
        formatter.timeZone = calendar.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        let utc = ISO8601DateFormatter()

        for (view, pattern, component) in [("hours", "yyyy-MM-dd HH:mm", Calendar.Component.hour), ("days", "yyyy-MM-dd", .day)] {
            let rows = try read([view, "--limit", "1000"])
            let starts = rows.compactMap { ($0["start"] as? String).flatMap(utc.date(from:)) }
            #expect(starts.count == rows.count && !rows.isEmpty, "\(view)")
            #expect(Set(starts).count == starts.count, "\(view): a bucket shown twice: \(rows.map { $0["label"] ?? "" })")
            #expect(rows.map { number($0["rx_bytes"]) }.reduce(0, +) == 7000, "\(view)")
            formatter.dateFormat = pattern
            for (row, start) in zip(rows, starts) {
                // Each bucket starts on the daemon zone's boundary and is labelled in that zone.
                #expect(calendar.dateInterval(of: component, for: start)?.start == start, "\(view) \(start)")
                #expect(row["label"] as? String == formatter.string(from: start), "\(view) \(start)")
            }
            if view == "days", starts.count == 2 {
                // The transition day is as long as the zone makes it (23, 24 or 25 hours, or 23.5).
                let day = try #require(calendar.dateInterval(of: .day, for: starts[0]))
                #expect(starts[1].timeIntervalSince(starts[0]) == day.duration)
            }
        }
        // --utc: every label is the bucket's UTC start.
        let result = try daemon.namespace.run(["env", "TZ=\(testCase.reader)", "IFMETER_TEST_CLOCK_OFFSET=\(offset(now))", TestEnvironment.binary("ifmeter"),
                                              "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "hours", "--utc", "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        for row in try #require(document["rows"] as? [[String: Any]]) {
            let start = try #require((row["start"] as? String).flatMap(utc.date(from:)))
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm'Z'"
            #expect(row["label"] as? String == formatter.string(from: start))
        }
    }
}
