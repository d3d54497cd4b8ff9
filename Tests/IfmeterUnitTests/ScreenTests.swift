import Testing
@testable import IfmeterCore

/// The pieces the 80-column screens are made of: wrapping, the live line, its in-place redraw, and the
/// min/avg/max of `live`'s summary, each over a table of cases.
struct ScreenTests {
    static let wrapping: [(text: String, width: Int, indent: String, lines: [String])] = [
        ("short", 80, "", ["short"]),
        ("", 80, "  ", ["  "]),
        ("one two three", 9, "", ["one two", "three"]),
        ("one two three", 8, "  ", ["  one", "  two", "  three"]),
        // A word wider than the room stands alone rather than being cut.
        ("a unbreakableword b", 8, "", ["a", "unbreakableword", "b"]),
        ("exactly ten", 11, "", ["exactly ten"]),
    ]

    @Test(arguments: wrapping)
    func wrapsAtSpaces(_ c: (text: String, width: Int, indent: String, lines: [String])) {
        #expect(Wrapping.lines(c.text, width: c.width, indent: c.indent) == c.lines)
    }

    @Test func aTableWrapsItsLastColumnUnderItself() {
        var table = TextTable([("NAME", .left), ("RX", .right), ("WHY", .left)])
        table.append(["wwan0", "1.00 KiB", "short"])
        table.append(["usb0", "12 B", "driver cdc_ncm + local MAC: USB tethering"])
        #expect(table.rendered(fitting: 40) == """
            NAME         RX  WHY
            wwan0  1.00 KiB  short
            usb0       12 B  driver cdc_ncm + local
                             MAC: USB tethering

            """)
        // Within the width it is the plain table.
        #expect(table.rendered(fitting: 200) == table.rendered())
    }

    static let ifindexes: [(old: Int32?, new: Int32?, text: String?)] = [
        (nil, nil, nil), (5, nil, "was ifindex 5"), (nil, 3, "ifindex 3"), (5, 7, "ifindex 5 -> 7"), (4, 4, "ifindex 4"),
    ]

    @Test(arguments: ifindexes)
    func eventsSayTheIfindexInWords(_ c: (old: Int32?, new: Int32?, text: String?)) {
        #expect(EventsReport.ifindexChange(old: c.old, new: c.new) == c.text)
    }

    /// rx byte counters read at each refresh, one second apart (nil: the link absent), and what the
    /// summary makes of them in B/s: the least and greatest measured rate, and total over seconds.
    static let sessions: [(counters: [UInt64?], min: Double?, max: Double?, average: Double)] = [
        ([0, 1000, 1000, 4000], 0, 3000, 4000.0 / 3),
        ([0, 500], 500, 500, 500),
        ([0, 0, 0], 0, 0, 0),
        // First seen at the second refresh: that refresh has no interval behind it and is no minimum.
        ([nil, 100, 300, 600], 200, 300, 500.0 / 3),
        // A counter that went down counts from zero (rule 6): 100, never a wrapped 2^64.
        ([5000, 100], 100, 100, 100),
        // Present at the start only: nothing measured after it went.
        ([10, nil, nil], nil, nil, 0),
    ]

    @Test(arguments: sessions)
    func liveSummaryHasMinAverageAndMax(_ c: (counters: [UInt64?], min: Double?, max: Double?, average: Double)) {
        var session = LiveSession()
        func links(_ value: UInt64?) -> [LinkSample] {
            value.map { [LinkSample(ifindex: 3, name: "wwan0", counters: LinkCounters(rxBytes: $0, txBytes: 0, rxPackets: 0, txPackets: 0))] } ?? []
        }
        for (before, after) in zip(c.counters, c.counters.dropFirst()) {
            _ = session.refresh(from: links(before), to: links(after), elapsed: 1, selection: [], include: { _ in "cellular" })
        }
        let extremes = session.extremes["wwan0"]?.rxBytes ?? RateExtremes()
        #expect(extremes.least == c.min)
        #expect(extremes.greatest == c.max)
        #expect(LiveSession.averageRate(session.totals["wwan0"]?.rxBytes ?? 0, seconds: session.seconds) == c.average)
    }

    /// A merge's extremes are of its summed rates, as drawn: a+b at 1000 then 1000 never shows 0 or 2000.
    @Test func aMergeHasTheExtremesOfItsSum() {
        var session = LiveSession()
        func links(_ a: UInt64, _ b: UInt64) -> [LinkSample] {
            [LinkSample(ifindex: 1, name: "a", counters: LinkCounters(rxBytes: a, txBytes: 0, rxPackets: 0, txPackets: 0)),
             LinkSample(ifindex: 2, name: "b", counters: LinkCounters(rxBytes: b, txBytes: 0, rxPackets: 0, txPackets: 0))]
        }
        let merge = InterfaceSelection(groups: [["a", "b"]])
        _ = session.refresh(from: links(0, 0), to: links(1000, 0), elapsed: 1, selection: merge, include: { _ in "tunnel" })
        _ = session.refresh(from: links(1000, 0), to: links(1000, 1000), elapsed: 1, selection: merge, include: { _ in "tunnel" })
        #expect(session.extremes["a+b"]?.rxBytes.least == 1000)
        #expect(session.extremes["a+b"]?.rxBytes.greatest == 1000)
    }

    @Test func redrawReplacesTheLinesDrawnAndWhatIsLeftBelow() {
        #expect(LiveDrawing.redraw(["a", "b"], replacing: 3) == [
            .control(.carriageReturn), .control(.cursorUp(3)), .control(.eraseLine), .text("a\n"), .control(.eraseLine), .text("b\n"),
            .control(.eraseBelow),
        ])
        // The first draw moves nowhere.
        #expect(LiveDrawing.redraw(["a"], replacing: 0) == [.control(.carriageReturn), .control(.eraseLine), .text("a\n"), .control(.eraseBelow)])
        #expect(Output.TerminalControl.cursorUp(3).sequence == "\u{1B}[3A")
    }

    static let rates: [(rx: Double, rxPackets: Double)] = [(0, 0), (1.5, 0.5), (125_000_000_000, 9_999_999), (1e15, 1e7)]

    /// The widest name the kernel allows and rates up to a terabit fit 80 columns, columns in place.
    @Test(arguments: rates)
    func aLiveLineFitsAndKeepsItsColumns(_ c: (rx: Double, rxPackets: Double)) {
        let row = LiveRow(name: "wg-office-vpn12", interfaceClass: "tunnel", rate: (c.rx, c.rx / 3, c.rxPackets, c.rxPackets / 3), session: .zero)
        let idle = LiveRow(name: "wwan0", interfaceClass: "cellular", rate: (0, 0, 0, 0), session: .zero)
        let line = LiveSession.line(row, nameWidth: 15, units: Units())
        #expect(line.count <= 80, "\(line)")
        let other = LiveSession.line(idle, nameWidth: 15, units: Units())
        #expect(line.firstRange(of: "  tx ")?.lowerBound.utf16Offset(in: line) == other.firstRange(of: "  tx ")?.lowerBound.utf16Offset(in: other))
        #expect(line.count == other.count)
    }

    /// vnStat's avg. rate: a finished period over its whole length (a 23-hour DST day over 23 hours),
    /// the running one over the seconds so far, one not begun has none.
    static let periods: [(start: Int64, end: Int64, now: Int64, bytes: UInt64, seconds: Int64, rate: Double?)] = [
        (0, 86_400, 200_000, 864_000, 86_400, 10),
        (0, 82_800, 200_000, 82_800, 82_800, 1),
        (0, 86_400, 43_200, 86_400, 43_200, 2),
        (0, 2_592_000, 2_592_000, 2_592_000, 2_592_000, 1),
        (1000, 1300, 1000, 500, 0, nil),
        (1000, 1300, 900, 0, 0, nil),
    ]

    @Test(arguments: periods)
    func averageRateIsBytesOverTheSecondsPassed(_ c: (start: Int64, end: Int64, now: Int64, bytes: UInt64, seconds: Int64, rate: Double?)) {
        let seconds = HistoryReport.elapsedSeconds(start: c.start, end: c.end, now: c.now)
        #expect(seconds == c.seconds)
        #expect(HistoryReport.averageRate(c.bytes, seconds: seconds) == c.rate)
    }

    /// Noon UTC of 2026-11-29 (a Sunday): the same date in every zone within eleven hours.
    static let labels: [(formats: DateFormats, granularity: Granularity, label: String)] = [
        (DateFormats(), .day, "2026-11-29"),
        (DateFormats(), .month, "2026-11"),
        (DateFormats(), .year, "2026"),
        (DateFormats(day: "%d.%m.%Y"), .day, "29.11.2026"),
        (DateFormats(day: "%a %e %b"), .day, "Sun 29 Nov"),
        (DateFormats(month: "%b '%y"), .month, "Nov '26"),
        (DateFormats(day: "%d.%m.%Y"), .year, "2026"),
    ]

    @Test(arguments: labels)
    func periodLabelsFollowTheConfiguredFormats(_ c: (formats: DateFormats, granularity: Granularity, label: String)) {
        #expect(c.formats.label(1_795_953_600, c.granularity) == c.label)
    }

    /// Hours and five minutes are dated by DayFormat=, then the time.
    @Test func hoursTakeTheDayFormat() {
        let label = DateFormats(day: "%d.%m.%Y").label(1_795_953_600, .hour)
        #expect(label.hasPrefix("29.11.2026 ") && label.count == 16, "\(label)")
    }
}
