/// Decides Wi-Fi, cellular, tunnel or other for a link. The first signal
/// that decides wins, in this order: configured override, link kind, uevent
/// DEVTYPE, sysfs markers, ARP type, name. sysfs is read below `sysfsRoot`
/// so tests can hand it a fake tree.
public struct Classifier: Sendable {
    public var sysfsRoot: String
    public var overrides: [InterfaceOverride]

    public init(sysfsRoot: String = "/sys", overrides: [InterfaceOverride] = []) {
        self.sysfsRoot = sysfsRoot
        self.overrides = overrides
    }

    /// PPP carries modem bearers (ModemManager) and VPNs (pptp, l2tp, sstp,
    /// PPPoE) alike and the kernel cannot tell them apart. It defaults to
    /// cellular, because the people who meter links meter LTE: an override
    /// decides otherwise.
    public static let pppDefault = InterfaceClass.cellular

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
        772: .other,  // loopback
    ]

    /// ARPHRD_NONE: tun and WireGuard, but also qmi_wwan raw-IP.
    static let arpNone: UInt16 = 65534

    static let namePatterns: [(pattern: String, class: InterfaceClass)] = [
        ("wl*", .wifi),
        ("ww*", .cellular), ("rmnet*", .cellular), ("ccmni*", .cellular),
        ("tun*", .tunnel), ("tap*", .tunnel), ("wg*", .tunnel), ("utun*", .tunnel),
    ]

    public func classify(_ link: LinkSample) -> Classification {
        if let rule = overrides.first(where: { $0.matches(link.name) }) {
            switch rule.action {
            case .assign(let interfaceClass): return Classification(interfaceClass, by: .override(pattern: rule.pattern))
            case .ignore: return Classification(nil, by: .override(pattern: rule.pattern))
            }
        }
        if let decided = Self.kindClasses[link.kind] {
            return Classification(decided, by: .linkKind(link.kind))
        }
        // A name whose bytes are not UTF-8 cannot be spelt as a Swift path:
        // its sysfs signals are skipped, the others still decide.
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
        if let decided = Self.arpTypeClasses[link.arpType] {
            return Classification(decided, by: .arpType(link.arpType))
        }
        if let hint = Self.namePatterns.first(where: { globMatches($0.pattern, link.name) }) {
            let signal: ClassificationSignal =
                link.arpType == Self.arpNone ? .nameWithArpNone(pattern: hint.pattern) : .name(pattern: hint.pattern)
            return Classification(hint.class, by: signal)
        }
        return Classification(.other, by: .noSignal)
    }

    /// The DEVTYPE= value of a uevent file's text.
    static func deviceType(inUevent text: String?) -> String? {
        guard let text else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
            return String(line.dropFirst("DEVTYPE=".count))
        }
        return nil
    }
}
