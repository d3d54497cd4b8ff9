import Glibc

/// A configured rule for names matching a glob: a class, or "ignore".
package struct InterfaceOverride: Sendable, Hashable {
    package enum Action: Sendable, Hashable {
        case assign(InterfaceClass)
        case ignore
    }

    /// An fnmatch(3) pattern over the interface name, like `ppp*` or `wwan[0-9]`.
    package var pattern: String
    package var action: Action

    package init(pattern: String, action: Action) {
        self.pattern = pattern
        self.action = action
    }

    package func matches(_ name: String) -> Bool {
        globMatches(pattern, name)
    }
}

/// fnmatch(3) over the whole encoded name: `*`, `?` and `[...]`. A
/// backslash is literal (FNM_NOESCAPE): in an encoded name it starts `\xNN`.
func globMatches(_ pattern: String, _ name: String) -> Bool {
    fnmatch(pattern, name, FNM_NOESCAPE) == 0
}

/// The evidence that decided a classification, so users can see why.
package enum ClassificationSignal: Sendable, Hashable, CustomStringConvertible {
    case override(pattern: String)
    case linkKind(String)
    case deviceType(String)
    case sysfsMarker(String)
    case arpType(UInt16)
    case name(pattern: String)
    /// The name hint together with ARP type NONE, which alone is ambiguous.
    case nameWithArpNone(pattern: String)
    /// ARPHRD_LOOPBACK: traffic that never leaves the machine, never counted.
    case loopback
    /// A USB driver that only phones (and cellular dongles) use for tethering.
    case tetheringDriver(String)
    /// A USB Ethernet-class driver on a device with a locally administered MAC: what a phone's USB
    /// tethering hands out, where an Ethernet adapter carries its maker's address.
    case tetheringDriverLocalAddress(String)
    /// A real device (sysfs `device` link) of ARP type Ethernet, not a virtual kind.
    case ethernetDevice(driver: String)
    case noSignal

    package var description: String {
        switch self {
        case .override(let pattern): "override \(pattern)"
        case .linkKind(let kind): "kind \(kind)"
        case .deviceType(let type): "DEVTYPE=\(type)"
        case .sysfsMarker(let marker): "sysfs \(marker)"
        case .arpType(let type): "ARP type \(type)"
        case .name(let pattern): "name \(pattern)"
        case .nameWithArpNone(let pattern): "name \(pattern) + ARP type NONE"
        case .loopback: "loopback, never counted"
        case .tetheringDriver(let driver): "driver \(driver): USB tethering"
        case .tetheringDriverLocalAddress(let driver): "driver \(driver) + local MAC: USB tethering"
        case .ethernetDevice(let driver): "Ethernet device (driver \(driver))"
        case .noSignal: "no signal"
        }
    }
}

/// What an interface is and why ifmeter thinks so.
package struct Classification: Sendable, Hashable {
    /// The class, or nil when an override says to ignore the interface.
    package var interfaceClass: InterfaceClass?
    package var signal: ClassificationSignal

    package init(_ interfaceClass: InterfaceClass?, by signal: ClassificationSignal) {
        self.interfaceClass = interfaceClass
        self.signal = signal
    }
}
