/// The eight counters the kernel keeps per interface, as read at one moment.
public struct LinkCounters: Sendable, Hashable {
    public var rxBytes: UInt64
    public var txBytes: UInt64
    public var rxPackets: UInt64
    public var txPackets: UInt64
    public var rxErrors: UInt64
    public var txErrors: UInt64
    public var rxDropped: UInt64
    public var txDropped: UInt64

    public init(
        rxBytes: UInt64 = 0, txBytes: UInt64 = 0,
        rxPackets: UInt64 = 0, txPackets: UInt64 = 0,
        rxErrors: UInt64 = 0, txErrors: UInt64 = 0,
        rxDropped: UInt64 = 0, txDropped: UInt64 = 0
    ) {
        self.rxBytes = rxBytes
        self.txBytes = txBytes
        self.rxPackets = rxPackets
        self.txPackets = txPackets
        self.rxErrors = rxErrors
        self.txErrors = txErrors
        self.rxDropped = rxDropped
        self.txDropped = txDropped
    }

    public static let zero = LinkCounters()

    /// Received plus transmitted bytes (saturating: a hostile store may hold anything).
    public var totalBytes: UInt64 { .saturating(rxBytes, plus: txBytes) }

    /// The counters in a fixed order, so rules can judge each one on its own.
    public var fields: [UInt64] {
        [rxBytes, txBytes, rxPackets, txPackets, rxErrors, txErrors, rxDropped, txDropped]
    }

    /// Builds counters from `fields` order.
    public init(fields: [UInt64]) {
        precondition(fields.count == 8, "LinkCounters has eight fields")
        self.init(
            rxBytes: fields[0], txBytes: fields[1], rxPackets: fields[2], txPackets: fields[3],
            rxErrors: fields[4], txErrors: fields[5], rxDropped: fields[6], txDropped: fields[7])
    }

    /// Field-wise sum, saturating at UInt64.max: totals never come near it
    /// from real traffic, but a hostile or damaged store may hold anything,
    /// and a sum must never stop a reader or the daemon.
    public static func + (lhs: LinkCounters, rhs: LinkCounters) -> LinkCounters {
        LinkCounters(fields: zip(lhs.fields, rhs.fields).map { UInt64.saturating($0, plus: $1) })
    }

    public static func += (lhs: inout LinkCounters, rhs: LinkCounters) { lhs = lhs + rhs }

    /// Field-wise maximum: a message that arrives late never moves a counter back.
    public func fieldwiseMax(_ other: LinkCounters) -> LinkCounters {
        LinkCounters(fields: zip(fields, other.fields).map { Swift.max($0, $1) })
    }
}

/// RFC 2863 operational state, as the kernel reports it in IFLA_OPERSTATE.
public enum OperState: UInt8, Sendable {
    case unknown = 0, notPresent, down, lowerLayerDown, testing, dormant, up

    /// The spelling `ip link` uses.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .notPresent: "notpresent"
        case .down: "down"
        case .lowerLayerDown: "lowerlayerdown"
        case .testing: "testing"
        case .dormant: "dormant"
        case .up: "up"
        }
    }
}

/// How wide the source's counters are: getifaddrs copies the 32-bit
/// IFLA_STATS, which wrap at 2^32; netlink gives IFLA_STATS64.
public enum CounterWidth: Sendable {
    case bits32, bits64
}

/// One interface as a counter source saw it at one moment.
public struct LinkSample: Sendable, Hashable {
    public var ifindex: Int32
    public var name: String
    /// IFLA_INFO_KIND ("tun", "wireguard", "veth"...), empty when none.
    public var kind: String
    public var arpType: UInt16
    public var flags: UInt32
    public var operState: OperState
    public var counters: LinkCounters

    public init(
        ifindex: Int32, name: String, kind: String = "", arpType: UInt16 = 0,
        flags: UInt32 = 0, operState: OperState = .unknown, counters: LinkCounters = .zero
    ) {
        self.ifindex = ifindex
        self.name = name
        self.kind = kind
        self.arpType = arpType
        self.flags = flags
        self.operState = operState
        self.counters = counters
    }

    /// IFF_UP: administratively up.
    public var isUp: Bool { flags & 0x1 != 0 }
}

/// What the kernel announced about a link on the event socket.
public struct LinkEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// RTM_NEWLINK: created, or changed (flags, name, state).
        case new
        /// RTM_DELLINK: the device is gone; `movedToOtherNamespace` when it
        /// only left this namespace (IFLA_NEW_NETNSID / IFLA_NEW_IFINDEX).
        case deleted(movedToOtherNamespace: Bool)
    }

    public var kind: Kind
    /// The counters carried by the message itself.
    public var link: LinkSample

    public init(kind: Kind, link: LinkSample) {
        self.kind = kind
        self.link = link
    }
}

extension UInt64 {
    /// a + b, or UInt64.max when the sum does not fit.
    public static func saturating(_ a: UInt64, plus b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// A Double rounded toward zero into 0...UInt64.max; NaN is 0.
    public init(saturating value: Double) {
        if !(value > 0) { self = 0 } else if value >= 18_446_744_073_709_551_616.0 { self = .max } else { self = UInt64(value) }
    }
}

extension Int64 {
    /// A Double rounded to nearest into Int64's range; NaN is 0.
    public init(saturating value: Double) {
        let rounded = value.rounded()
        if rounded.isNaN { self = 0 } else if rounded >= 9_223_372_036_854_775_808.0 { self = .max } else if rounded <= -9_223_372_036_854_775_808.0 { self = .min } else { self = Int64(rounded) }
    }
}
