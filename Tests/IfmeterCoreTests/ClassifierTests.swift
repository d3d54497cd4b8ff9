import Foundation
import Testing
@testable import IfmeterCore

/// One interface as its driver would lay it out in sysfs.
struct FakeInterface: CustomTestStringConvertible, Sendable {
    var name: String
    var kind = ""
    var arpType: UInt16 = 1
    var deviceType: String?
    var files: [String] = []
    var directories: [String] = []
    var expected: InterfaceClass?
    var signal: ClassificationSignal

    var testDescription: String { "\(name) (\(kind.isEmpty ? "no kind" : kind))" }

    func write(under root: URL) throws {
        let directory = root.appendingPathComponent("class/net/\(name)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var uevent = "INTERFACE=\(name)\nIFINDEX=7\n"
        if let deviceType { uevent = "DEVTYPE=\(deviceType)\n" + uevent }
        try uevent.write(to: directory.appendingPathComponent("uevent"), atomically: true, encoding: .utf8)
        try "\(arpType)\n".write(to: directory.appendingPathComponent("type"), atomically: true, encoding: .utf8)
        for file in files {
            try "0x1001\n".write(to: directory.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        for subdirectory in directories {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(subdirectory), withIntermediateDirectories: true)
        }
    }

    var sample: LinkSample { LinkSample(ifindex: 7, name: name, kind: kind, arpType: arpType) }
}

@Suite struct ClassifierTests {
    static let interfaces: [FakeInterface] = [
        // Wi-Fi: cfg80211 sets DEVTYPE=wlan on every Wi-Fi netdev.
        FakeInterface(name: "wlp2s0", deviceType: "wlan", directories: ["phy80211", "wireless"], expected: .wifi, signal: .deviceType("wlan")),
        // An old driver without DEVTYPE still has the phy80211 link.
        FakeInterface(name: "eth1", directories: ["phy80211"], expected: .wifi, signal: .sysfsMarker("phy80211")),
        // qmi_wwan in Ethernet mode: usbnet FLAG_WWAN sets DEVTYPE=wwan.
        FakeInterface(name: "wwan0", deviceType: "wwan", expected: .cellular, signal: .deviceType("wwan")),
        // qmi_wwan raw-IP: ARP type NONE (ambiguous) but the qmi/ directory decides.
        FakeInterface(name: "wwp0s20u4i4", arpType: 65534, directories: ["qmi"], expected: .cellular, signal: .sysfsMarker("qmi")),
        // rmnet: link kind decides; a bare raw-IP device is decided by ARP 519.
        FakeInterface(name: "rmnet_data0", kind: "rmnet", arpType: 519, expected: .cellular, signal: .linkKind("rmnet")),
        FakeInterface(name: "mhi_hwip0", arpType: 519, expected: .cellular, signal: .arpType(519)),
        FakeInterface(name: "wwan1", kind: "wwan", arpType: 65534, expected: .cellular, signal: .linkKind("wwan")),
        // tun and tap both report kind "tun" and carry tun_flags.
        FakeInterface(name: "tun0", kind: "tun", arpType: 65534, files: ["tun_flags"], expected: .tunnel, signal: .linkKind("tun")),
        FakeInterface(name: "tap0", kind: "tun", arpType: 1, files: ["tun_flags"], expected: .tunnel, signal: .linkKind("tun")),
        // A tun whose kind was not reported (getifaddrs source) falls to tun_flags.
        FakeInterface(name: "vpn0", arpType: 65534, files: ["tun_flags"], expected: .tunnel, signal: .sysfsMarker("tun_flags")),
        FakeInterface(name: "wg0", kind: "wireguard", arpType: 65534, deviceType: "wireguard", expected: .tunnel, signal: .linkKind("wireguard")),
        FakeInterface(name: "wg1", arpType: 65534, deviceType: "wireguard", expected: .tunnel, signal: .deviceType("wireguard")),
        // ARP NONE alone does not decide: the name hint does, and says so.
        FakeInterface(name: "wg-office", arpType: 65534, expected: .tunnel, signal: .nameWithArpNone(pattern: "wg*")),
        FakeInterface(name: "mystery0", arpType: 65534, expected: .other, signal: .noSignal),
        // PPP: modem or VPN, the kernel cannot tell; defaults to cellular.
        FakeInterface(name: "ppp0", kind: "ppp", arpType: 512, deviceType: "ppp", expected: .cellular, signal: .linkKind("ppp")),
        FakeInterface(name: "ppp1", arpType: 512, expected: .cellular, signal: .arpType(512)),
        FakeInterface(name: "gre1", kind: "gre", arpType: 778, expected: .tunnel, signal: .linkKind("gre")),
        FakeInterface(name: "veth0", kind: "veth", expected: .other, signal: .linkKind("veth")),
        // A bridge named like a Wi-Fi device is still a bridge: kind beats the name.
        FakeInterface(name: "wlbridge", kind: "bridge", expected: .other, signal: .linkKind("bridge")),
        FakeInterface(name: "enp3s0", expected: .other, signal: .noSignal),
        FakeInterface(name: "lo", arpType: 772, expected: .other, signal: .arpType(772)),
        // Names are the last hint.
        FakeInterface(name: "wlan9", expected: .wifi, signal: .name(pattern: "wl*")),
        FakeInterface(name: "ccmni0", arpType: 65534, expected: .cellular, signal: .nameWithArpNone(pattern: "ccmni*")),
    ]

    @Test(arguments: interfaces)
    func classifiesFromTheStrongestSignal(_ interface: FakeInterface) throws {
        let root = try TestEnvironment.temporaryDirectory("sysfs")
        defer { try? FileManager.default.removeItem(at: root) }
        try interface.write(under: root)
        let classification = Classifier(sysfsRoot: root.path).classify(interface.sample)
        #expect(classification.interfaceClass == interface.expected)
        #expect(classification.signal == interface.signal)
    }

    static let overrideCases: [(name: String, kind: String, expected: InterfaceClass?, signal: ClassificationSignal)] = [
        ("ppp0", "ppp", .tunnel, .override(pattern: "ppp*")),  // a pptp VPN box
        ("veth7", "veth", nil, .override(pattern: "veth*")),  // ignored
        ("tun3", "tun", .cellular, .override(pattern: "tun[0-9]")),  // first match wins
        ("tun12", "tun", .tunnel, .linkKind("tun")),  // no rule matches
    ]

    @Test(arguments: overrideCases)
    func overridesComeFirstInConfiguredOrder(_ testCase: (name: String, kind: String, expected: InterfaceClass?, signal: ClassificationSignal)) {
        let classifier = Classifier(sysfsRoot: "/nonexistent", overrides: [
            InterfaceOverride(pattern: "ppp*", action: .assign(.tunnel)),
            InterfaceOverride(pattern: "veth*", action: .ignore),
            InterfaceOverride(pattern: "tun[0-9]", action: .assign(.cellular)),
            InterfaceOverride(pattern: "tun*", action: .assign(.wifi)),
        ].filter { testCase.name != "tun12" || $0.pattern != "tun*" })
        let classification = classifier.classify(LinkSample(ifindex: 3, name: testCase.name, kind: testCase.kind))
        #expect(classification.interfaceClass == testCase.expected)
        #expect(classification.signal == testCase.signal)
    }
}
