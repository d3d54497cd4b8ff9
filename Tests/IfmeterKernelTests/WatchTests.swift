import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// What is counted and what `status` says when nothing is, with the real
/// daemon and kernel in a private namespace.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct WatchTests {
    func ifmeter(_ daemon: DaemonHarness, _ arguments: [String]) throws -> ProcessResult {
        try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
    }

    /// Loopback traffic never crosses a link: Watch=other counts a veth pair
    /// but never lo, however much passes over it.
    @Test func loopbackIsNeverCountedEvenWithWatchOther() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Interfaces]\nWatch=other\n")
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        try daemon.runOnce()
        try daemon.namespace.inside {
            let receiver = try UDPSocket(bindTo: "127.0.0.1", port: 9999)
            let sender = try UDPSocket(bindTo: nil, port: 0)
            for _ in 0..<20 { try sender.send(bytes: 1000, to: "127.0.0.1", port: 9999) }
            _ = receiver
        }
        #expect(try daemon.kernelCounters("lo").rxBytes >= 20_000)
        try daemon.runOnce()
        let names = try daemon.store().interfaces().map(\.name)
        #expect(names.sorted() == ["v0", "v1"])
        let listed = try ifmeter(daemon, ["interfaces", "--all"])
        let lo = listed.standardOutput.split(separator: "\n").first { $0.hasPrefix("lo ") }
        #expect(lo.map { $0.contains(" ignored ") && $0.hasSuffix(" loopback, never counted") } == true, "\(listed.standardOutput)")
    }

    /// With nothing counted, status lists what is there and the Watch= line
    /// that would count it.
    @Test func statusNamesTheWatchLineThatWouldCount() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        try daemon.runOnce()
        let status = try ifmeter(daemon, ["status"])
        #expect(status.status == 0)
        #expect(status.standardOutput.contains("""

            No interface counted yet.
            Watch=wifi cellular tunnel counts none of the interfaces here:
              v0  other  kind veth
              v1  other  kind veth
            To count v0 v1, set in \(daemon.configPath) and reload the daemon (systemctl reload ifmeterd, or SIGHUP to ifmeterd):
              [Interfaces]
              Watch=wifi cellular tunnel other
            or count one by name, as vnStat's --add: ifmeter watch v0

            """), "\(status.standardOutput)")
        // The line it offers does count them.
        try daemon.writeConfiguration("[Interfaces]\nWatch=wifi cellular tunnel other\n")
        try daemon.runOnce()
        #expect(try daemon.store().interfaces().map(\.name).sorted() == ["v0", "v1"])
    }

    /// `[Aliases]` names an interface on the screens; the store and -i keep
    /// the kernel's name.
    @Test func aliasesAreShownBesideTheName() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Aliases]\ntun0=office vpn\n")
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 4, size: 500, persist: true)
        try daemon.runOnce()
        let summary = try ifmeter(daemon, ["status"])
        #expect(summary.standardOutput.contains("\ntun0 (office vpn)  tunnel"), "\(summary.standardOutput)")
        let detail = try ifmeter(daemon, ["status", "-i", "tun0"])
        // up or down: a persistent tun with no writer loses its carrier a
        // moment after the writer exits (linkwatch), so either may show.
        #expect(detail.standardOutput.contains("\ntun0 (office vpn)  tunnel (kind tun), "), "\(detail.standardOutput)")
        let json = try ifmeter(daemon, ["status", "--json"])
        #expect(json.standardOutput.contains("\"name\": \"tun0\",\n      \"alias\": \"office vpn\""), "\(json.standardOutput)")
        let graph = try ifmeter(daemon, ["graph", "--svg", "-", "-i", "tun0"])
        #expect(graph.standardOutput.contains(">tun0 (office vpn)</text>"))
        #expect(try daemon.store().interfaces().map(\.name) == ["tun0"])
    }

    /// A link counted and then no longer (its class dropped from Watch=, or
    /// a [Classes] override ignoring it) is not passed off as live: its
    /// state is `unwatched`, not the kernel's up, its rate `-` rather than
    /// 0 while traffic passes uncounted, plain status leaves it out as it
    /// leaves out a gone one, and no history view projects it. Its totals
    /// stay as counted. The CLI's clock stands at half past an hour and the
    /// daemon's runs before it in that hour: the running hour has a rate
    /// to project whenever the test runs.
    @Test(arguments: ["[Interfaces]\nWatch=wifi cellular\n", "[Classes]\ntun*=ignore\n"])
    func aLinkNoLongerCountedShowsAsUnwatched(_ uncounting: String) throws {
        let wall = Int64(Date().timeIntervalSince1970)
        let offset = (wall / 3600 + 1) * 3600 + 1800 - wall
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        try daemon.runOnce(clockOffset: Double(offset - 900))
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 4, size: 1000)
        try daemon.runOnce(clockOffset: Double(offset - 600))
        #expect(try daemon.totals("tun0").rxBytes == 4000)
        try daemon.writeConfiguration(uncounting)
        try daemon.runOnce(clockOffset: Double(offset - 10))
        #expect(try daemon.reasons("tun0").last == "unwatched")
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 52, size: 1000)
        #expect(try daemon.kernelCounters("tun0").rxBytes == 56_000)

        func ifmeter(_ arguments: [String]) throws -> ProcessResult {
            let result = try daemon.namespace.run(
                ["env", "IFMETER_TEST_CLOCK_OFFSET=\(offset)", TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory,
                 "--config", daemon.configPath] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
            return result
        }
        let plain = try ifmeter(["status"]).standardOutput
        #expect(!plain.contains("\ntun0 "), "\(plain)")
        #expect(plain.contains("\n1 unwatched interface not shown (--all shows them).\n"), "\(plain)")
        let all = try ifmeter(["status", "--all"]).standardOutput
        let row = try #require(all.split(separator: "\n").first { $0.hasPrefix("tun0 ") }, "\(all)")
        #expect(row.split(separator: " ").map(String.init) == ["tun0", "tunnel", "unwatched", "3.91", "KiB", "3.91", "KiB", "3.91", "KiB", "-"], "\(row)")
        let oneline = try ifmeter(["status", "--all", "--oneline"]).standardOutput
        #expect(oneline == "tun0;tunnel;unwatched;4000;0;4000;0;4000;0;;\n", "\(oneline)")
        let detail = try ifmeter(["status", "-i", "tun0"]).standardOutput
        #expect(detail.contains("\ntun0  tunnel (kind tun), unwatched\n"), "\(detail)")
        #expect(!detail.contains("  rate "), "\(detail)")

        let document = try #require(try JSONSerialization.jsonObject(with: Data(try ifmeter(["status", "--json"]).standardOutput.utf8)) as? [String: Any])
        let tun0 = try #require((document["interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "tun0" })
        #expect(tun0["state"] as? String == "unwatched")
        #expect(tun0["rate"] is NSNull, "\(tun0)")
        #expect(number((tun0["all_time"] as? [String: Any])?["rx_bytes"]) == 4000)

        for view in ["hours", "days", "fiveminutes"] {
            let text = try ifmeter([view]).standardOutput
            #expect(!text.contains("estimated"), "\(view): \(text)")
            let history = try #require(try JSONSerialization.jsonObject(with: Data(try ifmeter([view, "--json"]).standardOutput.utf8)) as? [String: Any])
            let rows = try #require(history["rows"] as? [[String: Any]])
            #expect(rows.allSatisfy { $0["estimated"] is NSNull }, "\(view): \(rows)")
        }
    }

    /// `live --all` shows the links Watch= leaves out, never loopback.
    @Test func liveAllShowsUnwatchedLinks() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.exec(["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        let all = try ifmeter(daemon, ["live", "--all", "--count", "1", "--interval", "0.1"])
        #expect(all.status == 0)
        #expect(all.standardOutput.contains("\nv0 ") && all.standardOutput.contains("\nv1 "), "\(all.standardOutput)")
        #expect(!all.standardOutput.contains("\nlo "))
        let watched = try ifmeter(daemon, ["live", "-i", "v0", "--count", "1", "--interval", "0.1"])
        #expect(watched.status == 64)
        let chosen = try ifmeter(daemon, ["live", "--all", "-i", "v0", "--count", "1", "--interval", "0.1"])
        #expect(chosen.status == 0 && chosen.standardOutput.contains("\nv0 ") && !chosen.standardOutput.contains("\nv1 "))
    }
}

/// What "counted" means for an interface the store knows, and the state
/// `status` gives it: the pure parts of `WatchTests.aLinkNoLongerCountedShowsAsUnwatched`.
@Suite struct CountedInterfaceTests {
    struct Counting: Sendable, CustomTestStringConvertible {
        var rule: String
        var configuration: String
        var name: String
        var stored: InterfaceClass
        /// The kernel link's class now; nil: no link (gone, or not read).
        var classification: Classification?
        var counted: Bool
        var testDescription: String { rule }
    }

    static let tun = ClassificationSignal.linkKind("tun")

    static let countings: [Counting] = [
        Counting(rule: "watched by default", configuration: "", name: "tun0", stored: .tunnel,
                 classification: Classification(.tunnel, by: tun), counted: true),
        Counting(rule: "its class dropped from Watch=", configuration: "[Interfaces]\nWatch=wifi cellular\n", name: "tun0", stored: .tunnel,
                 classification: Classification(.tunnel, by: tun), counted: false),
        Counting(rule: "wired is not watched by default", configuration: "", name: "eth0", stored: .wired,
                 classification: Classification(.wired, by: .ethernetDevice(driver: "e1000")), counted: false),
        Counting(rule: "ignored by an override", configuration: "[Classes]\ntun*=ignore\n", name: "tun0", stored: .tunnel,
                 classification: Classification(nil, by: .override(pattern: "tun*")), counted: false),
        Counting(rule: "assigned a watched class by an override", configuration: "[Classes]\nveth*=tunnel\n", name: "veth0", stored: .other,
                 classification: Classification(.tunnel, by: .override(pattern: "veth*")), counted: true),
        // The link decides over the stored class: the daemon classifies it now.
        Counting(rule: "stored as tunnel, classified other now", configuration: "", name: "x0", stored: .tunnel,
                 classification: Classification(.other, by: .noSignal), counted: false),
        // No link: the stored class, under the override the name matches.
        Counting(rule: "no link, stored class watched", configuration: "", name: "tun0", stored: .tunnel, classification: nil, counted: true),
        Counting(rule: "no link, stored class unwatched", configuration: "[Interfaces]\nWatch=cellular\n", name: "tun0", stored: .tunnel,
                 classification: nil, counted: false),
        Counting(rule: "no link, name ignored", configuration: "[Classes]\ntun*=ignore\n", name: "tun0", stored: .tunnel,
                 classification: nil, counted: false),
        Counting(rule: "no link, the first matching override wins", configuration: "[Classes]\ntun1=cellular\ntun*=ignore\n", name: "tun1",
                 stored: .tunnel, classification: nil, counted: true),
        Counting(rule: "no link, an override to an unwatched class", configuration: "[Classes]\ntun*=wired\n", name: "tun0", stored: .tunnel,
                 classification: nil, counted: false),
    ]

    @Test(arguments: countings)
    func counts(_ testCase: Counting) throws {
        let configuration = try ConfigurationFile.parse(testCase.configuration, path: "counted.conf")
        #expect(configuration.counts(testCase.name, stored: testCase.stored, classification: testCase.classification) == testCase.counted)
    }

    static let up = LinkSample(ifindex: 4, name: "tun0", kind: "tun", flags: 0x1, operState: .up)
    static let down = LinkSample(ifindex: 4, name: "tun0", kind: "tun", flags: 0x1, operState: .down)

    static let presences: [(name: String, kernelRead: Bool, link: LinkSample?, counted: Bool, presence: LinkPresence)] = [
        ("tun0", true, up, true, .up),
        ("tun0", true, down, true, .down),
        ("tun0", true, up, false, .unwatched),  // the kernel's up, but nobody counts it
        ("tun0", true, down, false, .unwatched),
        ("tun0", true, nil, true, .gone),
        ("tun0", true, nil, false, .gone),  // gone says more: no link at all
        ("tun0", false, nil, true, .unknown),
        ("tun0", false, nil, false, .unwatched),  // known from the configuration alone
        ("retired tunnel", true, nil, false, .retired),
        ("retired tunnel", false, nil, true, .retired),
    ]

    @Test(arguments: presences)
    func presence(_ testCase: (name: String, kernelRead: Bool, link: LinkSample?, counted: Bool, presence: LinkPresence)) {
        #expect(SnapshotReader.presence(of: testCase.name, kernelRead: testCase.kernelRead, link: testCase.link, counted: testCase.counted)
            == testCase.presence)
    }

    static func interface(_ name: String, _ presence: LinkPresence) -> InterfaceSnapshot {
        InterfaceSnapshot(
            name: name, interfaceClass: "tunnel", signal: "", presence: presence, liveDelta: .zero, today: LinkCounters(rxBytes: 1_000),
            cycle: LinkCounters(rxBytes: 1_000), sinceBoot: .zero, allTime: LinkCounters(rxBytes: 1_000), rate: nil, rateWindow: nil,
            lastEvent: nil, incomplete: nil, firstSeen: 0)
    }

    /// Plain status lists what is counted now, and says what it leaves out.
    static let summaries: [(presences: [LinkPresence], listed: [String], note: String?)] = [
        ([.up, .down], ["tun0", "tun1"], nil),
        ([.up, .unwatched], ["tun0"], "1 unwatched interface not shown (--all shows them)."),
        ([.unwatched, .unwatched], [], "2 unwatched interfaces not shown (--all shows them)."),
        ([.gone, .unwatched], [], "1 gone interface and 1 unwatched interface not shown (--all shows them)."),
        ([.gone, .unwatched, .retired], [], "1 gone interface, 1 unwatched interface and 1 retired total not shown (--all shows them)."),
        ([.unknown, .unwatched], ["tun0"], "1 unwatched interface not shown (--all shows them)."),
    ]

    @Test(arguments: summaries)
    func plainStatusLeavesOutWhatIsNotCounted(_ testCase: (presences: [LinkPresence], listed: [String], note: String?)) {
        let interfaces = testCase.presences.enumerated().map { index, presence in
            Self.interface(presence == .retired ? "retired tunnel" : "tun\(index)", presence)
        }
        let snapshot = Snapshot(
            now: 1_000, bootID: "b", billingDay: 1, cycleStart: 0, cycleEnd: 2_000, interfaces: interfaces,
            daemon: DaemonHealth(running: true, lastCommit: 990, commitInterval: 300, sampleInterval: 15, stale: false),
            budgets: [], kernelRead: true)
        let lines = StatusReport.summary(snapshot, units: Units(), all: false).split(separator: "\n").map(String.init)
        let listed = lines.compactMap { line in interfaces.map(\.name).first { line.hasPrefix($0 + " ") } }
        #expect(listed == testCase.listed, "\(lines)")
        #expect(lines.first { $0.hasSuffix("(--all shows them).") } == testCase.note, "\(lines)")
        let all = StatusReport.summary(snapshot, units: Units(), all: true)
        #expect(interfaces.allSatisfy { all.contains("\n" + $0.name + " ") }, "\(all)")
        #expect(!all.contains("--all shows them"))
    }
}
