import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// `ifmeterd --relay-metrics`: what node_exporter reads is a bounded regular file of ifmeter_ lines,
/// whatever the daemon's user puts at the source (a FIFO, a link, a huge file, other collectors' series).
@Suite struct MetricsRelayTests {
    let directory: URL
    var source: String { directory.appendingPathComponent("run/ifmeter.prom").path }
    var target: String { directory.appendingPathComponent("textfiles/ifmeter.prom").path }

    init() throws {
        directory = try TestEnvironment.temporaryDirectory("relay")
        for name in ["run", "textfiles"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
        }
    }

    @Test(arguments: [
        ("ifmeter_receive_bytes_total{device=\"tun0\"} 5\n", "ifmeter_receive_bytes_total{device=\"tun0\"} 5\n"),
        ("# HELP ifmeter_x y\n# TYPE ifmeter_x gauge\nifmeter_x 1\n", "# HELP ifmeter_x y\n# TYPE ifmeter_x gauge\nifmeter_x 1\n"),
        ("node_cpu_seconds_total 1\n# HELP node_cpu x\nifmeter_a 1\n", "ifmeter_a 1\n"),
        ("ifmeter_a 1\nifmeter_b\u{0} 2\n\n\nifmeter_c 3", "ifmeter_a 1\nifmeter_c 3\n"),
        ("", ""),
    ])
    func onlyIfmeterLinesAreKept(_ input: String, _ kept: String) {
        #expect(String(decoding: MetricsRelay.kept(Array(input.utf8)), as: UTF8.self) == kept)
    }

    @Test(arguments: ["fifo", "symlink", "huge"])
    func aHostileSourceLeavesTheCopyAsItWas(_ kind: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let relay = MetricsRelay(source: source, target: target)
        try FileSystem.write(Array("ifmeter_a 1\n".utf8), to: source)
        try relay.copy()
        unlink(source)
        switch kind {
        case "fifo": #expect(mkfifo(source, 0o644) == 0)
        case "symlink": #expect(symlink("/dev/zero", source) == 0)
        default:
            try FileSystem.write([], to: source)
            #expect(truncate(source, off_t(MetricsRelay.sizeLimit + 1)) == 0)
        }
        let started = SystemClock.monotonic()
        #expect(throws: (any Error).self) { try relay.copy() }
        #expect(SystemClock.monotonic() - started < 5)
        var info = stat()
        #expect(lstat(target, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_mode & 0o777 == 0o644)
        #expect(try FileSystem.readText(target) == "ifmeter_a 1\n")
    }

    /// The running relay copies each file the daemon renames into its directory, and nothing else wakes it.
    @Test func theRelayFollowsEachReplacement() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let relay = Process()
        relay.executableURL = URL(fileURLWithPath: TestEnvironment.binary("ifmeterd"))
        relay.arguments = ["--relay-metrics", source, target]
        relay.standardError = FileHandle.nullDevice
        try relay.run()
        defer { kill(relay.processIdentifier, SIGKILL); relay.waitUntilExit() }
        for value in 1...5 {
            try FileSystem.writeAtomically(Array("ifmeter_a \(value)\nnode_b 1\n".utf8), to: source, synced: false)
            let deadline = SystemClock.monotonic() + 5
            while (try? FileSystem.readText(target)) != "ifmeter_a \(value)\n" && SystemClock.monotonic() < deadline { usleep(10_000) }
            #expect(try FileSystem.readText(target) == "ifmeter_a \(value)\n")
        }
        #expect(relay.isRunning)
    }
}
