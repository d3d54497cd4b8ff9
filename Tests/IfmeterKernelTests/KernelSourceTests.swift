import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The kernel layer against the real kernel, in namespaces these tests make.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct KernelSourceTests {
    /// Both dumps: the first `links()` is a full link dump, the next a
    /// statistics dump joined to it; each must carry the exact bytes.
    @Test(arguments: [NetlinkLinkSource.Pass.full, .statistics])
    func netlinkReportsExactTunBytes(pass: NetlinkLinkSource.Pass) throws {
        let namespace = try NetworkNamespace()
        try namespace.tunTraffic(name: "tun0", rxPackets: 7, txPackets: 11, size: 300, persist: true)
        let source = try namespace.inside { try NetlinkLinkSource() }
        var links = try source.links()
        if pass == .statistics { links = try source.links() }
        #expect(source.lastPass == pass)
        let tun = try #require(links.first { $0.name == "tun0" })
        #expect(tun.kind == "tun")
        #expect(tun.arpType == 65534)
        #expect(tun.counters.rxBytes == 7 * 300)
        #expect(tun.counters.txBytes == 11 * 300)
        #expect(tun.counters.rxPackets == 7)
        #expect(tun.counters.txPackets == 11)
        #expect(links.contains { $0.name == "lo" })
    }

    @Test func getifaddrsListsTheTunAndAgrees() throws {
        let namespace = try NetworkNamespace()
        try namespace.tunTraffic(name: "tun0", rxPackets: 5, txPackets: 3, size: 1000, persist: true)
        let (netlink, fallback) = try namespace.inside {
            (try NetlinkLinkSource().links(), try InterfaceAddresses.links())
        }
        // The tun has no hardware address (ifa_addr == NULL) and is still listed.
        let tun = try #require(fallback.first { $0.name == "tun0" })
        let truth = try #require(netlink.first { $0.name == "tun0" })
        #expect(tun.ifindex == truth.ifindex)
        #expect(tun.counters == truth.counters)
        #expect(tun.counters.rxBytes == 5000)
        #expect(tun.counters.txBytes == 3000)
    }

    /// Ethernet-framed devices count the 14-byte header: a UDP datagram of
    /// IP length S crosses a veth as S + 14 bytes.
    @Test func netlinkReportsExactVethBytes() throws {
        let near = try NetworkNamespace()
        let far = try NetworkNamespace()
        try near.vethPair("veth-near", to: far, "veth-far")
        // Sources opened before the traffic read it through statistics dumps.
        let nearSource = try near.inside { try NetlinkLinkSource() }
        let farSource = try far.inside { try NetlinkLinkSource() }
        let before = try nearSource.links().first { $0.name == "veth-near" }
        _ = try farSource.links()
        // A bound receiver in the far namespace: no ICMP port-unreachable back.
        try near.sendOverVeth(to: far, count: 9, size: 500)
        let near2 = try #require(try nearSource.links().first { $0.name == "veth-near" })
        let far2 = try #require(try farSource.links().first { $0.name == "veth-far" })
        #expect(nearSource.lastPass == .statistics && farSource.lastPass == .statistics)
        let sentBefore = before?.counters.txBytes ?? 0
        #expect(near2.kind == "veth")
        #expect(near2.counters.txBytes - sentBefore == 9 * 514)
        #expect(far2.counters.rxBytes == 9 * 514)
        #expect(near2.counters.rxBytes == 0)
    }

    /// The statistics path, kept current by link events as the daemon
    /// keeps it, says exactly what a full dump says: names (after a rename),
    /// kinds, flags, operstate and counters of tun and veth links.
    @Test func statisticsPathAgreesWithAFullDump() throws {
        let near = try NetworkNamespace()
        let far = try NetworkNamespace()
        try near.vethPair("veth-near", to: far, "veth-far")
        try near.tunTraffic(name: "tun0", rxPackets: 3, txPackets: 2, size: 200, persist: true)
        try near.tunTraffic(name: "tun1", subnet: 1, rxPackets: 1, persist: true)
        // Their writers are gone: the carrier-off must be settled before the
        // first dump, or one of the two dumps compared sees it and the other not.
        for tun in ["tun0", "tun1"] { try near.awaitLinkWatcher(tun, operstate: "down") }
        let (source, events) = try near.inside { (try NetlinkLinkSource(), try LinkEventSocket()) }
        _ = try source.links()
        #expect(source.lastPass == .full)
        try near.sendOverVeth(to: far, count: 4, size: 700)
        try far.sendOverVethBack(to: near, count: 2, size: 300)
        try near.exec(["ip", "link", "set", "tun1", "name", "renamed1"])
        try near.exec(["ip", "link", "set", "tun0", "down"])
        let batch = try events.read()
        #expect(!batch.events.isEmpty)
        source.note(events: batch.events, overrun: batch.overrun)
        let statistics = try source.links()
        #expect(source.lastPass == .statistics)
        let full = try near.inside { try NetlinkLinkSource().links() }
        #expect(Set(statistics) == Set(full))
        #expect(statistics.contains { $0.name == "renamed1" && $0.kind == "tun" })
        #expect(statistics.first { $0.name == "veth-near" }?.counters.rxBytes == 2 * 314)
    }

    /// Link events carry the whole link as a dump does: kind, ARP type,
    /// flags, operstate, and the final counters of a deleted link; a move
    /// to another namespace is told apart from a deletion.
    @Test func linkEventsCarryTheWholeLink() throws {
        let near = try NetworkNamespace()
        let far = try NetworkNamespace()
        let events = try near.inside { try LinkEventSocket() }
        try near.tunTraffic(name: "tun0", rxPackets: 3, txPackets: 2, size: 200, persist: true)
        try near.tunTraffic(name: "tun1", subnet: 1, persist: true)
        try near.vethPair("veth-near", to: far, "veth-far")
        let dumped = try #require(try near.inside { try NetlinkLinkSource().links() }.first { $0.name == "veth-near" })
        try near.exec(["ip", "link", "del", "tun0"])
        try near.exec(["ip", "link", "set", "tun1", "netns", far.name])
        let batch = try events.read()
        #expect(!batch.overrun)
        let created = try #require(batch.events.first { $0.link.name == "tun0" })
        #expect(created.kind == .new)
        #expect(created.link.kind == "tun" && created.link.arpType == 65534)
        let deleted = try #require(batch.events.last { $0.link.name == "tun0" })
        #expect(deleted.kind == .deleted(movedToOtherNamespace: false))
        #expect(deleted.link.ifindex == created.link.ifindex && deleted.link.kind == "tun")
        #expect(deleted.link.counters.rxBytes == 3 * 200 && deleted.link.counters.txBytes == 2 * 200)
        #expect(deleted.link.counters.rxPackets == 3 && deleted.link.counters.txPackets == 2)
        #expect(batch.events.last { $0.link.name == "tun1" }?.kind == .deleted(movedToOtherNamespace: true))
        let veth = try #require(batch.events.last { $0.link.name == "veth-near" })
        #expect(veth.kind == .new && veth.link.operState == .up && veth.link.isUp)
        #expect(veth.link == dumped)
    }

    /// An event message larger than the read buffer (64 KiB; a link with
    /// hundreds of long altnames) is never taken cut short: it is lost as
    /// an overrun is, and the next one is read whole.
    @Test func anEventTooLargeToReadIsAnOverrunNotACutShortLink() throws {
        let namespace = try NetworkNamespace()
        try namespace.exec(["ip", "tuntap", "add", "dev", "d1", "mode", "tun"])
        // As many as the kernel takes (it refuses the rest): 64 KiB of them.
        let batch = (1...600).map { String(format: "link property add dev d1 altname a%03d%@", $0, String(repeating: "0", count: 120)) }
        try namespace.exec(["sh", "-c", "ip -force -batch - 2>/dev/null || true"], input: batch.joined(separator: "\n") + "\n")
        let altnames = try namespace.exec(["sh", "-c", "ip link show d1 | grep -c altname"])
        #expect((Int(altnames.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 450)
        let events = try namespace.inside { try LinkEventSocket() }
        try namespace.exec(["ip", "link", "set", "d1", "mtu", "1400"])
        let lost = try events.read()
        #expect(lost.overrun)
        #expect(!lost.events.contains { $0.link.name == "d1" })
        try namespace.exec(["ip", "link", "set", "d1", "mtu", "1300"])
        let whole = try events.read()
        #expect(!whole.overrun)
        let d1 = try #require(whole.events.last)
        #expect(d1.link.name == "d1" && d1.link.kind == "tun" && d1.kind == .new)
    }

    /// A link the source has not heard of, or one gone without an event
    /// read: the answer is still every link, exactly.
    @Test func unknownAndVanishedLinksWithoutEvents() throws {
        let namespace = try NetworkNamespace()
        try namespace.tunTraffic(name: "tun0", rxPackets: 2, persist: true)
        let source = try namespace.inside { try NetlinkLinkSource() }
        _ = try source.links()
        try namespace.tunTraffic(name: "tun1", subnet: 1, txPackets: 5, size: 100, persist: true)
        let grown = try source.links()
        #expect(source.lastPass == .full)
        #expect(grown.first { $0.name == "tun1" }?.counters.txBytes == 500)
        try namespace.exec(["ip", "link", "del", "tun0"])
        let shrunk = try source.links()
        #expect(source.lastPass == .statistics)
        #expect(Set(shrunk.map(\.name)) == ["lo", "tun1"])
        source.note(events: [], overrun: true)
        _ = try source.links()
        #expect(source.lastPass == .full)
    }

    /// A dump of many links spans many datagrams (the kernel fills each to
    /// about 32 KiB, walked in place by CKernel): both passes list every
    /// link once, with its counters, and agree.
    @Test func dumpsSpanningManyDatagramsListEveryLinkOnce() throws {
        let namespace = try NetworkNamespace()
        try namespace.exec(["ip", "-batch", "-"], input: (0..<600).map { "tuntap add dev m\($0) mode tun\n" }.joined())
        try namespace.tunTraffic(name: "tun0", rxPackets: 3, txPackets: 5, size: 400, persist: true)
        try namespace.awaitLinkWatcher("tun0", operstate: "down")
        let source = try namespace.inside { try NetlinkLinkSource() }
        let full = try source.links()
        let statistics = try source.links()
        #expect(source.lastPass == .statistics)
        #expect(full.count == 602)  // m0 ... m599, tun0, lo
        #expect(Set(full.map(\.ifindex)).count == full.count)
        #expect(Set(full.map(\.name)) == Set((0..<600).map { "m\($0)" } + ["tun0", "lo"]))
        #expect(Set(statistics) == Set(full))
        let tun = try #require(statistics.first { $0.name == "tun0" })
        #expect(tun.counters.rxBytes == 3 * 400 && tun.counters.txBytes == 5 * 400)
    }

    /// Links created and deleted while dumps run: every dump that answers
    /// lists each link that stayed, and almost every one answers (a dump
    /// the kernel flags interrupted, its links changed while it was being
    /// filled, is run again rather than used or reported at once).
    @Test func dumpsDuringChurnNeverMissALinkThatStayed() throws {
        let namespace = try NetworkNamespace()
        try namespace.exec(["ip", "-batch", "-"], input: (0..<400).map { "tuntap add dev m\($0) mode tun\n" }.joined())
        let stayed = Set((0..<400).map { "m\($0)" } + ["lo"])
        let stop = FileManager.default.temporaryDirectory.appendingPathComponent("churn-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        let churn = Process()
        churn.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        churn.arguments = ["ip", "netns", "exec", namespace.name, "sh", "-c",
                           "while [ ! -e \(stop) ]; do ip tuntap add dev churn mode tun; ip link del churn; done"]
        try churn.run()
        defer {
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            churn.waitUntilExit()
            unlink(stop)
        }
        let source = try namespace.inside { try NetlinkLinkSource() }
        var answered = 0
        for round in 0..<200 {
            if round % 2 == 0 { source.note(events: [], overrun: true) }  // every other one a full dump
            guard let links = try? source.links() else { continue }
            answered += 1
            let missing = stayed.subtracting(links.map(\.name))
            #expect(missing.isEmpty, "round \(round), \(source.lastPass): \(missing.sorted().prefix(5))")
            #expect(Set(links.map(\.ifindex)).count == links.count)
        }
        // Without the retry of an interrupted dump, 37 and 53 of the 200
        // failed in two runs; with it, none in three. The kernel did flag
        // some (since Linux 6.7 a link dump resumes by ifindex, so one that
        // was used anyway would not miss a link that stayed: only this
        // count tells a build that ignores the flag apart).
        // 180 leaves room for a slower machine, where more of each dump's
        // attempts are interrupted, and still fails without the retry.
        #expect(answered >= 180, "\(200 - answered) of 200 dumps failed")
        #expect(source.interruptedDumps > 0)
    }

    @Test func interfacesCommandShowsTheTunAsATunnelWithExactBytes() throws {
        let namespace = try NetworkNamespace()
        try namespace.tunTraffic(name: "tun7", subnet: 7, rxPackets: 4, txPackets: 6, size: 128, persist: true)
        let output = try namespace.exec([TestEnvironment.binary("ifmeter"), "interfaces", "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(document["schema"] as? String == "ifmeter.interfaces/1")
        #expect(document["estimate"] as? Bool == true)
        let interfaces = try #require(document["interfaces"] as? [[String: Any]])
        // lo is not watched: only the tunnel is listed without --all.
        #expect(interfaces.count == 1)
        let tun = try #require(interfaces.first)
        #expect(tun["name"] as? String == "tun7")
        #expect(tun["class"] as? String == "tunnel")
        #expect(tun["signal"] as? String == "kind tun")
        let counters = try #require(tun["counters"] as? [String: Any])
        #expect(number(counters["rx_bytes"]) == 4 * 128)
        #expect(number(counters["tx_bytes"]) == 6 * 128)

        let table = try namespace.exec([TestEnvironment.binary("ifmeter"), "interfaces", "--all"])
        #expect(table.contains("tun7"))
        #expect(table.contains("lo "))
        #expect(table.contains("estimate from kernel interface counters"))
    }
}
