import Foundation
import IfmeterTestSupport
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
    /// The bound driver: a `device` link to a device directory whose
    /// `driver` links to the driver, as sysfs lays out a real device.
    var driver: String?
    /// A `device` link with no driver bound.
    var unboundDevice = false
    var address = "00:1b:21:3a:4f:10"
    var flags: UInt32 = 0
    var expected: InterfaceClass?
    var signal: ClassificationSignal

    var testDescription: String { "\(name) (\(kind.isEmpty ? "no kind" : kind)\(driver.map { ", driver " + $0 } ?? ""))" }

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
        try "\(address)\n".write(to: directory.appendingPathComponent("address"), atomically: true, encoding: .utf8)
        if driver != nil || unboundDevice {
            let device = root.appendingPathComponent("devices/\(name)-device")
            try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("device").path, withDestinationPath: "../../../devices/\(name)-device")
            if let driver {
                try FileManager.default.createDirectory(at: root.appendingPathComponent("bus/usb/drivers/\(driver)"), withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: device.appendingPathComponent("driver").path, withDestinationPath: "../../bus/usb/drivers/\(driver)")
            }
        }
    }

    var sample: LinkSample { LinkSample(ifindex: 7, name: name, kind: kind, arpType: arpType, flags: flags) }
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
        // No device link: a virtual link of no known kind.
        FakeInterface(name: "enp3s0", expected: .other, signal: .noSignal),
        // Physical Ethernet: a real device, ARP type Ethernet, no virtual kind.
        FakeInterface(name: "enp3s0", driver: "e1000e", expected: .wired, signal: .ethernetDevice(driver: "e1000e")),
        FakeInterface(name: "eth0", unboundDevice: true, expected: .wired, signal: .ethernetDevice(driver: "none")),
        // A USB Ethernet adapter in CDC mode carries its maker's MAC: wired.
        FakeInterface(name: "enx00e04c680001", driver: "cdc_ether", address: "00:e0:4c:68:00:01", expected: .wired,
                      signal: .ethernetDevice(driver: "cdc_ether")),
        FakeInterface(name: "enx001b213a4f10", driver: "r8152", expected: .wired, signal: .ethernetDevice(driver: "r8152")),
        // Phones tethered over USB: the driver decides, whatever the name.
        FakeInterface(name: "usb0", driver: "rndis_host", address: "02:5a:1c:33:9e:01", expected: .cellular, signal: .tetheringDriver("rndis_host")),
        FakeInterface(name: "enp0s20u2", driver: "rndis_host", expected: .cellular, signal: .tetheringDriver("rndis_host")),
        FakeInterface(name: "eth1", driver: "ipheth", address: "ba:2f:11:00:7c:01", expected: .cellular, signal: .tetheringDriver("ipheth")),
        FakeInterface(name: "enx7a3c10e2d401", driver: "cdc_ncm", address: "7a:3c:10:e2:d4:01", expected: .cellular,
                      signal: .tetheringDriverLocalAddress("cdc_ncm")),
        FakeInterface(name: "usb1", driver: "cdc_ether", address: "46:8a:00:10:20:30", expected: .cellular,
                      signal: .tetheringDriverLocalAddress("cdc_ether")),
        // A bridge has no device, and its kind decides before the driver would.
        FakeInterface(name: "br0", kind: "bridge", driver: "rndis_host", expected: .other, signal: .linkKind("bridge")),
        // DEVTYPE=wwan (usbnet FLAG_WWAN) decides before the driver.
        FakeInterface(name: "wwan2", deviceType: "wwan", driver: "cdc_ether", expected: .cellular, signal: .deviceType("wwan")),
        // Loopback is never counted, by ARP type or by flag.
        FakeInterface(name: "lo", arpType: 772, expected: nil, signal: .loopback),
        FakeInterface(name: "lo2", arpType: 1, flags: 0x8, expected: nil, signal: .loopback),
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
        ("lo", "", nil, .loopback),  // no override counts loopback
    ]

    @Test(arguments: overrideCases)
    func overridesComeFirstInConfiguredOrder(_ testCase: (name: String, kind: String, expected: InterfaceClass?, signal: ClassificationSignal)) {
        let classifier = Classifier(sysfsRoot: "/nonexistent", overrides: [
            InterfaceOverride(pattern: "ppp*", action: .assign(.tunnel)),
            InterfaceOverride(pattern: "veth*", action: .ignore),
            InterfaceOverride(pattern: "tun[0-9]", action: .assign(.cellular)),
            InterfaceOverride(pattern: "tun*", action: .assign(.wifi)),
            InterfaceOverride(pattern: "lo", action: .assign(.other)),
        ].filter { testCase.name != "tun12" || $0.pattern != "tun*" })
        let classification = classifier.classify(
            LinkSample(ifindex: 3, name: testCase.name, kind: testCase.kind, arpType: testCase.name == "lo" ? 772 : 1))
        #expect(classification.interfaceClass == testCase.expected)
        #expect(classification.signal == testCase.signal)
    }
}
