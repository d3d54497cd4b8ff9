/// Decides Wi-Fi, cellular, tunnel, wired or other for a link; loopback is never counted. Otherwise the
/// first deciding signal wins: override, link kind, uevent DEVTYPE, sysfs markers, the driver (USB
/// tethering), ARP type, a real Ethernet device, name. sysfs is read below `sysfsRoot` for tests.
package struct Classifier: Sendable {
    package var sysfsRoot: String
    package var overrides: [InterfaceOverride]

    package init(sysfsRoot: String = "/sys", overrides: [InterfaceOverride] = []) {
        self.sysfsRoot = sysfsRoot
        self.overrides = overrides
    }

    /// PPP carries modem bearers and VPNs (pptp, l2tp, sstp, PPPoE) alike, which the kernel cannot tell
    /// apart: cellular by default, since people meter LTE; an override decides otherwise.
    package static let pppDefault = InterfaceClass.cellular

    static let kindClasses: [String: InterfaceClass] = [
        "tun": .tunnel, "wireguard": .tunnel, "ovpn": .tunnel,
        "gre": .tunnel, "gretap": .tunnel, "ip6gre": .tunnel, "ip6gretap": .tunnel,
        "ipip": .tunnel, "sit": .tunnel, "ip6tnl": .tunnel,
        "vti": .tunnel, "vti6": .tunnel, "xfrm": .tunnel,
        "wwan": .cellular, "rmnet": .cellular,
        "ppp": pppDefault,
        "veth": .other, "bridge": .other, "bond": .other, "team": .other, "vlan": .other,
        "macvlan": .other, "macvtap": .other, "ipvlan": .other, "vxlan": .other,
        "geneve": .other, "dummy": .other, "ifb": .other, "vrf": .other, "nlmon": .other,
    ]

    static let deviceTypeClasses: [String: InterfaceClass] = [
        "wlan": .wifi, "wwan": .cellular, "wireguard": .tunnel, "ppp": pppDefault,
    ]

    static let arpTypeClasses: [UInt16: InterfaceClass] = [
        519: .cellular,  // ARPHRD_RAWIP: rmnet, ipa, mhi
        512: pppDefault,  // ARPHRD_PPP
        768: .tunnel, 769: .tunnel, 776: .tunnel, 778: .tunnel, 823: .tunnel,  // IPIP, IP6, SIT, GRE, IP6GRE
    ]

    static let arpLoopback: UInt16 = 772
    static let arpEthernet: UInt16 = 1
    /// IFF_LOOPBACK.
    static let loopbackFlag: UInt32 = 0x8

    /// Drivers a phone's USB tethering binds (RNDIS: Android and most cellular dongles; ipheth: iPhone),
    /// carrying the phone's cellular link whatever the interface is named.
    static let tetheringDrivers: Set<String> = ["rndis_host", "ipheth"]
    /// CDC Ethernet and NCM serve phones (Android 11+ tethers over NCM) and USB Ethernet adapters alike:
    /// only a locally administered MAC, which phones make up and adapters do not, says phone.
    static let ethernetClassUSBDrivers: Set<String> = ["cdc_ncm", "cdc_ether"]

    /// ARPHRD_NONE: tun and WireGuard, but also qmi_wwan raw-IP.
    static let arpNone: UInt16 = 65534

    static let namePatterns: [(pattern: String, class: InterfaceClass)] = [
        ("wl*", .wifi),
        ("ww*", .cellular), ("rmnet*", .cellular), ("ccmni*", .cellular),
        ("tun*", .tunnel), ("tap*", .tunnel), ("wg*", .tunnel), ("utun*", .tunnel),
    ]

    /// What the first `[Classes]` override matching `name` decides: its class, or nil for an ignore; nil
    /// when none matches. One rule for a link the kernel shows and for a stored name without one.
    package func override(for name: String) -> Classification? {
        guard let rule = overrides.first(where: { $0.matches(name) }) else { return nil }
        switch rule.action {
        case .assign(let interfaceClass): return Classification(interfaceClass, by: .override(pattern: rule.pattern))
        case .ignore: return Classification(nil, by: .override(pattern: rule.pattern))
        }
    }

    /// A name with no link to look at (history imported from another tool): overrides, then the name.
    package func classify(name: String) -> InterfaceClass {
        if let overridden = override(for: name) { return overridden.interfaceClass ?? .other }
        return Self.namePatterns.first(where: { globMatches($0.pattern, name) })?.class ?? .other
    }

    package func classify(_ link: LinkSample) -> Classification {
        // Loopback traffic never crosses a link: no override or Watch= counts it.
        if link.arpType == Self.arpLoopback || link.flags & Self.loopbackFlag != 0 {
            return Classification(nil, by: .loopback)
        }
        if let overridden = override(for: link.name) { return overridden }
        if let decided = Self.kindClasses[link.kind] {
            return Classification(decided, by: .linkKind(link.kind))
        }
        // A name not UTF-8 cannot be spelt as a Swift path: its sysfs signals are skipped, others decide.
        let directory = InterfaceName.pathComponent(link.name).map { "\(sysfsRoot)/class/net/\($0)" } ?? "/nonexistent"
        if let deviceType = Self.deviceType(inUevent: (try? FileSystem.readText("\(directory)/uevent")) ?? nil),
            let decided = Self.deviceTypeClasses[deviceType]
        {
            return Classification(decided, by: .deviceType(deviceType))
        }
        for (marker, decided) in [("phy80211", InterfaceClass.wifi), ("wireless", .wifi), ("tun_flags", .tunnel), ("qmi", .cellular)]
        where FileSystem.exists("\(directory)/\(marker)") {
            return Classification(decided, by: .sysfsMarker(marker))
        }
        let driver = Self.driverName(FileSystem.symbolicLinkTarget("\(directory)/device/driver"))
        if let driver, Self.tetheringDrivers.contains(driver) {
            return Classification(.cellular, by: .tetheringDriver(driver))
        }
        if let driver, Self.ethernetClassUSBDrivers.contains(driver),
            Self.isLocallyAdministered((try? FileSystem.readText("\(directory)/address")) ?? nil)
        {
            return Classification(.cellular, by: .tetheringDriverLocalAddress(driver))
        }
        if let decided = Self.arpTypeClasses[link.arpType] {
            return Classification(decided, by: .arpType(link.arpType))
        }
        // A virtual link (veth, bridge...) has no `device`; its kind decided above.
        if link.arpType == Self.arpEthernet, link.kind.isEmpty, FileSystem.exists("\(directory)/device") {
            return Classification(.wired, by: .ethernetDevice(driver: driver ?? "none"))
        }
        if let hint = Self.namePatterns.first(where: { globMatches($0.pattern, link.name) }) {
            let signal: ClassificationSignal =
                link.arpType == Self.arpNone ? .nameWithArpNone(pattern: hint.pattern) : .name(pattern: hint.pattern)
            return Classification(hint.class, by: signal)
        }
        return Classification(.other, by: .noSignal)
    }

    /// The driver's name: the last component of the `device/driver` link.
    static func driverName(_ target: String?) -> String? {
        guard let last = target?.split(separator: "/").last, !last.isEmpty else { return nil }
        return String(last)
    }

    /// Whether a sysfs `address` ("02:1a:...") has the locally administered bit (0x02 of the first octet).
    static func isLocallyAdministered(_ address: String?) -> Bool {
        guard let first = address?.split(separator: ":").first, let octet = UInt8(first, radix: 16) else { return false }
        return octet & 0x02 != 0
    }

    static func deviceType(inUevent text: String?) -> String? {
        guard let text else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }
}
