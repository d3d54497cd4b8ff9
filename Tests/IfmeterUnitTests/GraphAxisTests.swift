import Glibc
import Testing
@testable import IfmeterCore

/// The graphs' axes, palettes, output format and renderer search, as pure functions.
@Suite struct GraphAxisTests {
    static let GiB = 1024.0 * 1024 * 1024

    /// Gridlines at round values of the largest unit reached, from 0 to at or above the largest bar.
    @Test(arguments: [
        (UInt64(0), Units.Scale.iec, ["0", "1 B"]),
        (1000, .iec, ["0", "250 B", "500 B", "750 B", "1000 B"]),
        (1_500_000_000, .iec, ["0", "0.5 GiB", "1 GiB", "1.5 GiB"]),
        (1_500_000_000, .si, ["0", "0.5 GB", "1 GB", "1.5 GB"]),
        (9_600_000, .si, ["0", "2.5 MB", "5 MB", "7.5 MB", "10 MB"]),
        (3 * 1_048_576 + 1, .iec, ["0", "1 MiB", "2 MiB", "3 MiB", "4 MiB"]),
        (700 * 1_048_576, .iec, ["0", "200 MiB", "400 MiB", "600 MiB", "800 MiB"]),
        (1100, .si, ["0", "0.5 kB", "1 kB", "1.5 kB"]),
        (123_456, .raw, ["0", "50000", "100000", "150000"]),
    ])
    func valueTicksAreRound(_ row: (largest: UInt64, scale: Units.Scale, labels: [String])) {
        let ticks = GraphAxis.valueTicks(largest: row.largest, scale: row.scale)
        #expect(ticks.map(\.label) == row.labels)
        #expect(ticks.last!.bytes >= Double(row.largest))
    }

    /// At every size: 0 first, 2 to 4 gridlines above it, the top at or above the largest value
    /// and less than a step above it.
    @Test(arguments: Units.Scale.allCasesForTests)
    func valueTicksHoldAtEverySize(_ scale: Units.Scale) {
        var value: UInt64 = 1
        while value < UInt64.max / 7 {
            for largest in [value, value * 2 + 1, value * 3 - 1] {
                let ticks = GraphAxis.valueTicks(largest: largest, scale: scale)
                #expect(ticks.first?.bytes == 0)
                #expect((3...5).contains(ticks.count) || largest < 4, "\(largest): \(ticks.map(\.label))")
                #expect(ticks.last!.bytes >= Double(largest), "\(largest)")
                let step = ticks[1].bytes
                #expect(ticks.last!.bytes - step < Double(largest), "\(largest): a gridline wasted above the largest bar")
            }
            value *= 7
        }
    }

    static let now = Int64(1_796_040_000)  // 2026-11-30 12:00 UTC, a Monday

    static func starts(_ granularity: Granularity, _ count: Int) -> [Int64] {
        (0..<count).map { TimeBuckets.start(of: granularity, count - 1 - $0, before: now) }
    }

    /// Labels at period boundaries: the finest kind whose labels do not crowd.
    @Test(arguments: [
        // 24 hours from 13:00 at 20 px, labels needing 24: every second hour, even hours.
        (Granularity.hour, 24, 20.0, 24.0, Array(stride(from: 1, to: 24, by: 2))),
        // 48 hours of five minutes from 12:05 at 2 px, 46 px a label: every two hours from 14:00.
        (.fiveMinutes, 576, 2.0, 46.0, Array(stride(from: 23, to: 576, by: 24))),
        // 30 days from Sunday 2026-11-01: Mondays.
        (.day, 30, 16.0, 45.0, [1, 8, 15, 22, 29]),
        (.day, 7, 45.0, 45.0, Array(0..<7)),
        // A year of days at 2 px: quarter starts (2026-01-01, 04-01, 07-01, 10-01).
        (.day, 365, 2.0, 80.0, [31, 121, 212, 304]),
        (.month, 12, 16.0, 58.0, [1]),
        (.year, 10, 40.0, 37.0, Array(0..<10)),
        // Even midnights crowd: thinned from the left.
        (.fiveMinutes, 576, 1.0, 1000.0, [143]),
    ])
    func labelsStandAtPeriodBoundaries(_ row: (granularity: Granularity, count: Int, slot: Double, room: Double, expected: [Int])) {
        setenv("TZ", "UTC", 1)
        tzset()
        #expect(GraphAxis.labelledBars(starts: Self.starts(row.granularity, row.count), row.granularity, slot: row.slot, room: row.room) == row.expected)
    }

    /// Readable in both styles (WCAG 2): text 7:1, the quieter text 4.5:1, bars and axis 3:1, the
    /// grid visible yet quieter than all of them.
    @Test(arguments: GraphStyle.allCases)
    func bothStylesAreReadable(_ style: GraphStyle) {
        let palette = GraphPalette(style)
        func contrast(_ colour: String) -> Double { GraphPalette.contrast(colour, palette.background) }
        #expect(contrast(palette.text) >= 7)
        #expect(contrast(palette.muted) >= 4.5)
        for colour in [palette.received, palette.transmitted, palette.axis] { #expect(contrast(colour) >= 3, "\(colour)") }
        #expect(contrast(palette.grid) > 1.2 && contrast(palette.grid) < contrast(palette.axis))
    }

    @Test(arguments: [
        ("traffic.png", false, GraphFormat.png), ("Traffic.PNG", false, .png), ("traffic.svg", false, .svg), ("-", false, .svg),
        ("-", true, .png), ("picture", true, .png), ("png", false, .svg), ("dir.png/traffic", false, .svg),
    ])
    func theFormatFollowsTheNameOrTheFlag(_ row: (path: String, png: Bool, format: GraphFormat)) {
        #expect(GraphFormat.chosen(path: row.path, png: row.png) == row.format)
    }

    /// Only PATH's absolute directories: "", "." and relative ones would run the working directory's.
    @Test(arguments: [
        (String?.none, ["/usr/local/bin", "/usr/bin", "/bin"]),
        ("/usr/bin:/bin", ["/usr/bin", "/bin"]),
        (".:bin::/opt/x/bin:/usr/bin:/opt/x/bin", ["/opt/x/bin", "/usr/bin"]),
        ("", []),
    ])
    func theSearchIsPATHsAbsoluteDirectories(_ row: (path: String?, directories: [String])) {
        #expect(PNGRenderer.searchDirectories(path: row.path) == row.directories)
    }

    @Test func theFirstExecutableRendererIsTaken() {
        let present: Set = ["/usr/bin/rsvg-convert", "/opt/bin/rsvg-convert"]
        #expect(PNGRenderer.locate(in: ["/usr/local/bin", "/opt/bin/", "/usr/bin"], isExecutable: present.contains) == "/opt/bin/rsvg-convert")
        #expect(PNGRenderer.locate(in: ["/usr/local/bin"], isExecutable: present.contains) == nil)
    }

    /// The signature, then IHDR's width and height; anything else is no PNG.
    @Test func aPNGsSizeComesFromItsHeader() {
        let header: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0x02, 0x1c, 0, 0, 0, 0xf5]
        #expect(PNGRenderer.pngSize(header).map { [$0.width, $0.height] } == [540, 245])
        #expect(PNGRenderer.pngSize(Array(header.prefix(23))) == nil)
        #expect(PNGRenderer.pngSize([0x3c] + header.dropFirst()) == nil)
        #expect(PNGRenderer.pngSize(Array("<?xml version=\"1.0\"?><svg/>".utf8)) == nil)
    }

    @Test func aMissingRendererNamesThePackageAndWhereItLooked() {
        #expect(PNGRenderingError.rendererMissing(searched: ["/usr/bin", "/bin"]).description
            == "a PNG needs rsvg-convert, found in none of /usr/bin:/bin: install librsvg2-bin, or write an SVG")
        #expect(PNGRenderingError.rendererMissing(searched: []).description
            == "a PNG needs rsvg-convert, and PATH names no absolute directory to find it in: install librsvg2-bin, or write an SVG")
    }

    @Test func theRenderersComplaintIsOneLine() {
        #expect(PNGRenderer.firstLine(Array("\n\u{1B}[31mError: bad\r\nmore\n".utf8)) == "[31mError: bad")
        #expect(PNGRenderer.firstLine([]) == "")
    }
}

extension Units.Scale {
    static let allCasesForTests: [Units.Scale] = [.iec, .si, .raw]
}
