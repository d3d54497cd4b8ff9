import Foundation
import FoundationXML
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// A PNG rendered by librsvg (rsvg-convert) and decoded by netpbm
/// (pngtopnm) into RGB pixels: the picture as a viewer shows it.
struct RenderedImage {
    let width: Int
    let height: Int
    let pixels: [UInt8]

    init(svg: String) throws {
        let directory = try TestEnvironment.temporaryDirectory("graph")
        defer { try? FileManager.default.removeItem(at: directory) }
        let svgPath = directory.appendingPathComponent("g.svg").path
        let pngPath = directory.appendingPathComponent("g.png").path
        try svg.write(toFile: svgPath, atomically: true, encoding: .utf8)
        try mustRun("/usr/bin/env", ["rsvg-convert", "--background-color", "white", "-o", pngPath, svgPath])
        let png = try Data(contentsOf: URL(fileURLWithPath: pngPath))
        #expect(png.prefix(8) == Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), "not a PNG")
        let ppmPath = directory.appendingPathComponent("g.ppm").path
        try mustRun("/bin/sh", ["-c", "pngtopnm \"$0\" > \"$1\"", pngPath, ppmPath])
        let ppm = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ppmPath)))
        // "P6\n<width> <height>\n<max>\n" then RGB bytes.
        var fields: [Int] = []
        var index = 2
        while fields.count < 3 {
            while ppm[index] == 0x20 || ppm[index] == 0x0a { index += 1 }
            var value = 0
            while ppm[index] >= 0x30 && ppm[index] <= 0x39 { value = value * 10 + Int(ppm[index] - 0x30); index += 1 }
            fields.append(value)
        }
        #expect(ppm.prefix(2) == [0x50, 0x36] && fields[2] == 255)
        width = fields[0]
        height = fields[1]
        pixels = Array(ppm[(index + 1)...])
        #expect(pixels.count == width * height * 3)
    }

    func pixel(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        let offset = (y * width + x) * 3
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2])
    }

    func isBackground(_ x: Int, _ y: Int) -> Bool { pixel(x, y) == (255, 255, 255) }

    /// Pixels of exactly this colour (bars are drawn without antialiasing at their centre).
    func count(_ colour: (UInt8, UInt8, UInt8)) -> Int {
        stride(from: 0, to: pixels.count, by: 3).filter { (pixels[$0], pixels[$0 + 1], pixels[$0 + 2]) == colour }.count
    }

    /// The rightmost drawn pixel within rows [top, bottom).
    func rightmostInk(top: Int, bottom: Int) -> Int? {
        for x in stride(from: width - 1, through: 0, by: -1) {
            for y in max(top, 0)..<min(bottom, height) where !isBackground(x, y) { return x }
        }
        return nil
    }
}

@Suite struct GraphRenderingTests {
    static let now = Int64(1_796_040_000)  // 2026-11-30 12:00 UTC

    /// Rows for every bucket of the range, a few interfaces of different
    /// classes, values growing so that every bar differs.
    static func rows(_ granularity: Granularity, from: Int64, interfaces: [(String, InterfaceClass)]) -> [HistoryRow] {
        var rows: [HistoryRow] = []
        var start = max(from, now - 3700 * 86_400)
        start = TimeBuckets.start(of: granularity, containing: start)
        var step: UInt64 = 1
        while start <= now {
            for (offset, (name, interfaceClass)) in interfaces.enumerated() {
                let bytes = step * 1_048_576 * UInt64(offset + 1)
                rows.append(HistoryRow(name: name, interfaceClass: interfaceClass.rawValue, start: start,
                                       counters: LinkCounters(rxBytes: bytes * 3, txBytes: bytes), live: false, incomplete: nil, estimated: nil))
            }
            step += 1
            start = TimeBuckets.start(of: granularity, -1, before: start)
        }
        return rows
    }

    static let everyClass: [(String, InterfaceClass)] = [("wlp2s0", .wifi), ("wwan0", .cellular), ("tun0", .tunnel), ("enp3s0", .wired), ("br0", .other)]

    static func drawing(
        _ kind: GraphKind, days: Int, interfaces: [(String, InterfaceClass)] = everyClass, byName: Bool = false, style: GraphStyle = .light
    ) -> GraphDrawing {
        setenv("TZ", "UTC", 1)
        tzset()
        let panels = SVGGraph.panels(kind, rows: { rows($0, from: $1, interfaces: interfaces) }, now: now, days: days, byName: byName,
                                     aliases: ["wwan0": "the phone on the roof"])
        return SVGGraph.render(
            title: SVGGraph.title(kind, now: now, days: days), caveat: SVGGraph.caveat(byClass: !byName), panels: panels, buckets: SVGGraph.buckets(kind),
            style: style)
    }

    static let sizes: [(GraphKind, Int)] = [(.daily, 1), (.daily, 2), (.daily, 7), (.daily, 24), (.daily, 25), (.daily, 30), (.daily, 92), (.daily, 93),
                                           (.daily, 365), (.daily, 3660), (.fiveminute, 30), (.hourly, 30), (.monthly, 30), (.yearly, 30),
                                           (.top, 30), (.summary, 30)]

    /// No text leaves the picture or touches another: titles, notes, the
    /// legend, panel titles, axis values and the x labels.
    @Test(arguments: sizes)
    func everyTextFitsAndNoneOverlaps(_ size: (kind: GraphKind, days: Int)) {
        for byName in [false, true] {
            let drawing = Self.drawing(size.kind, days: size.days, byName: byName)
            for box in drawing.texts {
                #expect(box.left >= 0 && box.right <= Double(drawing.width) && box.top >= 0 && box.bottom <= Double(drawing.height),
                        "\(box.text) outside \(drawing.width)x\(drawing.height)")
            }
            let boxes = drawing.texts.filter { !$0.text.isEmpty }
            for (index, a) in boxes.enumerated() {
                for b in boxes[(index + 1)...] where a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom {
                    Issue.record("\(a.text) overlaps \(b.text)")
                }
            }
            #expect(!drawing.axisLabels.isEmpty)
            // The caveat is one line, and the value axis has gridlines besides 0.
            #expect(drawing.texts.filter { $0.text == SVGGraph.caveat(byClass: !byName) }.count == 1)
            #expect(drawing.texts.filter { $0.text.hasPrefix("Estimates") }.count == 1)
            #expect(drawing.svg.components(separatedBy: "stroke=\"\(GraphPalette(.light).grid)\"").count - 1 >= 2 * 5)
        }
    }

    /// Bounded: ten years of days stays a picture, not hundreds of megabytes.
    @Test func theLargestDailyGraphIsBounded() {
        let drawing = Self.drawing(.daily, days: GraphKind.maximumDays)
        #expect(drawing.width <= 8000)
        #expect(drawing.svg.utf8.count < 12_000_000)
    }

    /// Rendered by librsvg as a viewer would: the size the SVG declares,
    /// bars in both colours, nothing drawn in the outer margin (so nothing
    /// is clipped at an edge), and the title and notes no wider than the
    /// layout assumed (the width estimate holds for the real font).
    @Test(arguments: [(GraphKind.daily, 1), (.daily, 7), (.daily, 30), (.daily, 400), (.fiveminute, 30), (.hourly, 30), (.monthly, 30),
                      (.yearly, 30), (.top, 30), (.summary, 30)])
    func rendersToAPNGThatFits(_ size: (kind: GraphKind, days: Int)) throws {
        let drawing = Self.drawing(size.kind, days: size.days, byName: true)
        let image = try RenderedImage(svg: drawing.svg)
        #expect(image.width == drawing.width && image.height == drawing.height)
        #expect(image.count((0x2b, 0x6c, 0xb0)) > 50, "no received bars")
        #expect(image.count((0xdd, 0x6b, 0x20)) > 50, "no transmitted bars")
        for x in 0..<image.width {
            for y in [0, 1, 2, image.height - 3, image.height - 2, image.height - 1] where !image.isBackground(x, y) {
                Issue.record("ink at the edge (\(x), \(y))")
                return
            }
        }
        for y in 0..<image.height {
            for x in [0, 1, 2, image.width - 3, image.width - 2, image.width - 1] where !image.isBackground(x, y) {
                Issue.record("ink at the edge (\(x), \(y))")
                return
            }
        }
        // The title and the note lines are alone on their rows.
        for box in drawing.texts.prefix(while: { $0.top < drawing.texts.first { $0.text == "received" }!.top }) {
            let ink = try #require(image.rightmostInk(top: Int(box.top) + 2, bottom: Int(box.bottom)), "\(box.text) not drawn")
            #expect(Double(ink) <= box.right + 1, "\(box.text) drawn to \(ink), laid out to \(box.right)")
        }
    }
}

/// ifmeter's own renderer path: PNGRenderer running rsvg-convert as the CLI does.
@Suite struct PNGRendererTests {
    static func renderer() throws -> String {
        try #require(PNGRenderer.locate(in: PNGRenderer.defaultSearch), "rsvg-convert (librsvg2-bin) is needed: make test-deps")
    }

    /// A real PNG at the size the SVG declares, for every kind and both styles.
    @Test(arguments: GraphKind.allCases)
    func thePNGIsAPNGOfTheSVGsSize(_ kind: GraphKind) throws {
        for style in GraphStyle.allCases {
            let drawing = GraphRenderingTests.drawing(kind, days: 30, style: style)
            let png = try PNGRenderer.render(drawing.svg, with: try Self.renderer())
            #expect(png.prefix(8) == [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
            let size = try #require(PNGRenderer.pngSize(png))
            #expect(size.width == drawing.width && size.height == drawing.height, "\(kind) \(style)")
        }
    }

    /// The dark picture as a viewer shows it: dark at every edge, bars in the dark palette, and
    /// text drawn in the light text colour.
    @Test func theDarkPictureIsDarkAndItsBarsAndTextShow() throws {
        let drawing = GraphRenderingTests.drawing(.daily, days: 30, style: .dark)
        let image = try RenderedImage(svg: drawing.svg)
        let palette = GraphPalette(.dark)
        func rgb(_ colour: String) -> (UInt8, UInt8, UInt8) {
            let value = Int(colour.dropFirst(), radix: 16)!
            return (UInt8(value >> 16), UInt8(value >> 8 & 0xff), UInt8(value & 0xff))
        }
        for (x, y) in [(0, 0), (image.width - 1, 0), (0, image.height - 1), (image.width - 1, image.height - 1)] {
            #expect(image.pixel(x, y) == rgb(palette.background), "(\(x), \(y))")
        }
        #expect(image.count(rgb(palette.received)) > 50 && image.count(rgb(palette.transmitted)) > 50)
        #expect(image.count(rgb(palette.text)) > 20, "no text in the text colour")
        #expect(image.count((255, 255, 255)) == 0, "white left in the dark picture")
    }

    /// A renderer that fails: its status and first line of complaint, in one line.
    @Test func aFailingRendererIsReportedInOneLine() throws {
        let directory = try TestEnvironment.temporaryDirectory("renderer")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = directory.appendingPathComponent("rsvg-convert").path
        try "#!/bin/sh\ncat >/dev/null\necho 'Error reading SVG: bad' >&2\necho second line >&2\nexit 3\n".write(toFile: fake, atomically: true, encoding: .utf8)
        #expect(chmod(fake, 0o755) == 0)
        #expect(PNGRenderer.locate(in: PNGRenderer.searchDirectories(path: directory.path)) == fake)
        #expect(throws: PNGRenderingError.rendererFailed(program: fake, how: "exited with status 3", message: "Error reading SVG: bad")) {
            try PNGRenderer.render("<svg/>", with: fake)
        }
        try "#!/bin/sh\ncat >/dev/null\necho not a png\n".write(toFile: fake, atomically: true, encoding: .utf8)
        #expect(throws: PNGRenderingError.rendererFailed(program: fake, how: "could not run", message: "run: Permission denied")) {
            try PNGRenderer.render("<svg/>", with: fake)
        }
        #expect(chmod(fake, 0o755) == 0)
        #expect(throws: PNGRenderingError.rendererFailed(program: fake, how: "wrote no PNG", message: "")) { try PNGRenderer.render("<svg/>", with: fake) }
    }
}

/// `ifmeter graph` as users run it, over a real daemon's store.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct GraphCommandTests {
    @Test func everyKindWritesToStandardOutputAndDaysAreBounded() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 0.5)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 20, txPackets: 10, size: 1000, persist: true)
        func ifmeter(_ arguments: [String]) throws -> ProcessResult {
            try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
        }
        for kind in GraphKind.allCases {
            let result = try ifmeter(["graph", "--svg", "-", "--kind", kind.rawValue, "-i", "tun0"])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.hasPrefix("<?xml"))
            #expect(!result.standardOutput.contains("wrote"))
            let parser = XMLParser(data: Data(result.standardOutput.utf8))
            #expect(parser.parse(), "\(kind)")
            #expect(result.standardOutput.contains(">tun0</text>"))
            let image = try RenderedImage(svg: result.standardOutput)
            #expect(image.count((0x2b, 0x6c, 0xb0)) > 0, "\(kind): the received bar is missing")
        }
        #expect(!FileManager.default.fileExists(atPath: daemon.directory.appendingPathComponent("-").path))
        let tooMany = try ifmeter(["graph", "--svg", "-", "--days", "1000000"])
        #expect(tooMany.status == 64)
        #expect(tooMany.standardError == "ifmeter: --days 1000000: expected a whole number from 1 to 3660 (see 'ifmeter graph --help')\n")
        #expect(tooMany.standardOutput.isEmpty)
        #expect(daemon.stop() == 0)
    }

    /// `-o traffic.png` writes a PNG of the SVG's size; without rsvg-convert on PATH, one line naming
    /// the package, exit 69, nothing written; a failing one, one line, exit 70, nothing written.
    @Test func aPNGIsWrittenOrNothingIs() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        func ifmeter(_ arguments: [String], path: String? = nil) throws -> ProcessResult {
            try daemon.namespace.run(["/usr/bin/env"] + (path.map { ["PATH=\($0)"] } ?? []) + [
                TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
        }
        let png = daemon.directory.appendingPathComponent("traffic.png").path
        let written = try ifmeter(["graph", "-o", png, "--kind", "fiveminute", "--dark"])
        #expect(written.status == 0, "\(written.standardError)")
        #expect(written.standardOutput == "wrote \(png)\n")
        let svg = try ifmeter(["graph", "-o", "-", "--kind", "fiveminute", "--dark"])
        let size = try #require(PNGRenderer.pngSize([UInt8](try Data(contentsOf: URL(fileURLWithPath: png)))))
        #expect(svg.standardOutput.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(size.width)\" height=\"\(size.height)\" "), "\(size)")

        let missing = daemon.directory.appendingPathComponent("missing.png").path
        let unavailable = try ifmeter(["graph", "-o", missing], path: "/nonexistent:relative/bin")
        #expect(unavailable.status == ExitCode.unavailable.rawValue)
        #expect(unavailable.standardError
            == "ifmeter: \(missing): a PNG needs rsvg-convert, found in none of /nonexistent: install librsvg2-bin, or write an SVG\n")
        #expect(unavailable.standardOutput.isEmpty && !FileManager.default.fileExists(atPath: missing))

        let fakeDirectory = daemon.directory.appendingPathComponent("bin").path
        try FileManager.default.createDirectory(atPath: fakeDirectory, withIntermediateDirectories: false)
        try "#!/bin/sh\necho 'out of memory' >&2\nexit 1\n".write(toFile: fakeDirectory + "/rsvg-convert", atomically: true, encoding: .utf8)
        #expect(chmod(fakeDirectory + "/rsvg-convert", 0o755) == 0)
        let failed = try ifmeter(["graph", "-o", missing], path: fakeDirectory)
        #expect(failed.status == ExitCode.software.rawValue)
        #expect(failed.standardError == "ifmeter: \(missing): \(fakeDirectory)/rsvg-convert exited with status 1: out of memory; no PNG written\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// A PNG to a terminal is refused before anything is read (script(1) gives it one).
    @Test func aPNGIsNeverWrittenToATerminal() throws {
        let command = "\(TestEnvironment.binary("ifmeter")) --state-dir /nonexistent graph -o - --png"
        let result = try runProcess("/usr/bin/script", ["-qec", command, "/dev/null"])
        #expect(result.status == ExitCode.usage.rawValue, "\(result.standardOutput)")
        #expect(result.standardOutput.contains("ifmeter: a PNG on a terminal shows as noise: redirect it (> traffic.png) or write it with -o traffic.png"))
    }

    /// `--svg` naming a device (`/dev/null` as root, say): one line, exit
    /// 73, and the device stays; a FIFO, holding nothing, is replaced as a
    /// file is.
    @Test func aDeviceIsNeverReplacedByTheGraph() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let device = daemon.directory.appendingPathComponent("null").path
        let fifo = daemon.directory.appendingPathComponent("fifo").path
        #expect(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)  // 1:3, as /dev/null
        #expect(mkfifo(fifo, 0o600) == 0)
        func graph(_ path: String) throws -> ProcessResult {
            try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath,
                                      "graph", "--svg", path])
        }
        let onDevice = try graph(device)
        #expect(onDevice.status == ExitCode.cannotCreate.rawValue, "\(onDevice.standardError)")
        #expect(onDevice.standardError == "ifmeter: \(device): replace: a device stands there, left untouched\n")
        #expect(FileSystem.nonFileKind(device) == .device)
        let onFIFO = try graph(fifo)
        #expect(onFIFO.status == 0, "\(onFIFO.standardError)")
        #expect(FileSystem.nonFileKind(fifo) == nil)
    }

    /// `--svg dir/` (a trailing slash), `--svg dir` naming a directory, or
    /// `--svg missing/`: one line, exit 73, and nothing written in or
    /// beside it (`dir/` had been taken as the file `dir` inside `dir`).
    @Test func aDirectoryIsNeverTheGraphsFile() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let directory = daemon.directory.appendingPathComponent("pictures").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let missing = daemon.directory.appendingPathComponent("missing").path
        let before = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path).sorted()
        for (path, why) in [
            (directory + "/", "a path ending in / names a directory, not a file"),
            (directory, "a directory stands there, left untouched"),
            (missing + "/", "a path ending in / names a directory, not a file"),
        ] {
            let result = try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath,
                                                   "graph", "--svg", path])
            #expect(result.status == ExitCode.cannotCreate.rawValue, "\(path): \(result.standardError)")
            #expect(result.standardError == "ifmeter: \(path): replace: \(why)\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "\(path)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path).sorted() == before, "\(path)")
        }
    }
}
