import Foundation
import Testing
@testable import IfmeterCore

/// The kernel layer against the real kernel, in namespaces these tests make.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct KernelSourceTests {
    @Test func netlinkReportsExactTunBytes() throws {
        let namespace = try NetworkNamespace()
        try namespace.tunTraffic(name: "tun0", rxPackets: 7, txPackets: 11, size: 300, persist: true)
        let links = try namespace.inside { try NetlinkLinkSource().links() }
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
            (try NetlinkLinkSource().links(), try InterfaceAddressesLinkSource().links())
        }
        // The tun has no hardware address (ifa_addr == NULL) and is still listed.
        let tun = try #require(fallback.first { $0.name == "tun0" })
        let truth = try #require(netlink.first { $0.name == "tun0" })
        #expect(tun.ifindex == truth.ifindex)
        #expect(tun.counters == truth.counters)
        #expect(tun.counters.rxBytes == 5000)
        #expect(tun.counters.txBytes == 3000)
        #expect(InterfaceAddressesLinkSource().counterWidth == .bits32)
    }

    /// Ethernet-framed devices count the 14-byte header: a UDP datagram of
    /// IP length S crosses a veth as S + 14 bytes.
    @Test func netlinkReportsExactVethBytes() throws {
        let near = try NetworkNamespace()
        let far = try NetworkNamespace()
        try near.vethPair("veth-near", to: far, "veth-far")
        let before = try near.inside { try NetlinkLinkSource().links() }.first { $0.name == "veth-near" }
        // A bound receiver in the far namespace: no ICMP port-unreachable back.
        try near.sendOverVeth(to: far, count: 9, size: 500)
        let near2 = try #require(try near.inside { try NetlinkLinkSource().links() }.first { $0.name == "veth-near" })
        let far2 = try #require(try far.inside { try NetlinkLinkSource().links() }.first { $0.name == "veth-far" })
        let sentBefore = before?.counters.txBytes ?? 0
        #expect(near2.kind == "veth")
        #expect(near2.counters.txBytes - sentBefore == 9 * 514)
        #expect(far2.counters.rxBytes == 9 * 514)
        #expect(near2.counters.rxBytes == 0)
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
