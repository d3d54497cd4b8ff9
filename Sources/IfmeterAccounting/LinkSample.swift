/// The eight counters the kernel keeps per interface, as read at one moment.
package struct LinkCounters: Sendable, Hashable {
    package var rxBytes: UInt64
    package var txBytes: UInt64
    package var rxPackets: UInt64
    package var txPackets: UInt64
    package var rxErrors: UInt64
    package var txErrors: UInt64
    package var rxDropped: UInt64
    package var txDropped: UInt64

    package init(
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

    package static let zero = LinkCounters()

    /// Received plus transmitted bytes (saturating: a hostile store may hold anything).
    package var totalBytes: UInt64 { .saturating(rxBytes, plus: txBytes) }

    /// The counters in a fixed order, so rules can judge each one on its own.
    package var fields: [UInt64] {
        [rxBytes, txBytes, rxPackets, txPackets, rxErrors, txErrors, rxDropped, txDropped]
    }

    /// Builds counters from `fields` order.
    package init(fields: [UInt64]) {
        precondition(fields.count == 8, "LinkCounters has eight fields")
        self.init(
            rxBytes: fields[0], txBytes: fields[1], rxPackets: fields[2], txPackets: fields[3],
            rxErrors: fields[4], txErrors: fields[5], rxDropped: fields[6], txDropped: fields[7])
    }

    /// `combine` applied field by field with `other`'s, in `fields` order and with no array: run per link per sample.
    package func combined(with other: LinkCounters, _ combine: (UInt64, UInt64) -> UInt64) -> LinkCounters {
        // Arguments are evaluated left to right: `combine` sees `fields` order.
        LinkCounters(
            rxBytes: combine(rxBytes, other.rxBytes), txBytes: combine(txBytes, other.txBytes),
            rxPackets: combine(rxPackets, other.rxPackets), txPackets: combine(txPackets, other.txPackets),
            rxErrors: combine(rxErrors, other.rxErrors), txErrors: combine(txErrors, other.txErrors),
            rxDropped: combine(rxDropped, other.rxDropped), txDropped: combine(txDropped, other.txDropped))
    }

    /// Field-wise sum, saturating at UInt64.max: a damaged store may hold anything, and a sum must never trap.
    package static func + (lhs: LinkCounters, rhs: LinkCounters) -> LinkCounters {
        lhs.combined(with: rhs) { UInt64.saturating($0, plus: $1) }
    }

    package static func += (lhs: inout LinkCounters, rhs: LinkCounters) { lhs = lhs + rhs }

    /// Each field's later of these counters and `read`, a message that may be older (rule 6): a late
    /// message never moves a counter back. On a 64-bit source the later is the larger; on a 32-bit one
    /// a fall of more than 2^31 went round and is ahead, and a rise of more predates that wrap.
    package func later(_ read: LinkCounters, width: CounterWidth) -> LinkCounters {
        combined(with: read) { counted, read in
            switch (CounterStep.between(counted, read, width: width), CounterStep.between(read, counted, width: width)) {
            case (.reset, _), (_, .wrapped): counted
            default: read
            }
        }
    }

    /// Each counter's low 32 bits: what getifaddrs shows of it.
    package var low32: LinkCounters { combined(with: self) { counter, _ in counter & 0xffff_ffff } }
}

/// RFC 2863 operational state, as the kernel reports it in IFLA_OPERSTATE.
package enum OperState: UInt8, Sendable {
    case unknown = 0, notPresent, down, lowerLayerDown, testing, dormant, up

    /// The spelling `ip link` uses.
    package var name: String {
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

/// How wide the source's counters are: getifaddrs copies the 32-bit IFLA_STATS; netlink gives IFLA_STATS64.
package enum CounterWidth: Int, Sendable {
    case bits32 = 32, bits64 = 64
}

/// One interface as a counter source saw it at one moment.
package struct LinkSample: Sendable, Hashable {
    package var ifindex: Int32
    package var name: String
    /// IFLA_INFO_KIND ("tun", "wireguard", "veth"...), empty when none.
    package var kind: String
    package var arpType: UInt16
    package var flags: UInt32

    /// Whether it can carry traffic: administratively up (IFF_UP) and not reported down. A tun reports
    /// its operational state unknown however busy it is.
    package var canCarryTraffic: Bool { flags & 1 != 0 && operState != .down && operState != .lowerLayerDown && operState != .notPresent }
    package var operState: OperState
    package var counters: LinkCounters

    package init(
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
    package var isUp: Bool { flags & 0x1 != 0 }
}

/// What the kernel announced about a link on the event socket.
package struct LinkEvent: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        /// RTM_NEWLINK: created, or changed (flags, name, state).
        case new
        /// RTM_DELLINK: gone, or with `movedToOtherNamespace` only left this namespace (IFLA_NEW_NETNSID / IFLA_NEW_IFINDEX).
        case deleted(movedToOtherNamespace: Bool)
    }

    package var kind: Kind
    /// The counters carried by the message itself.
    package var link: LinkSample

    package init(kind: Kind, link: LinkSample) {
        self.kind = kind
        self.link = link
    }
}

extension UInt64 {
    /// a + b, or UInt64.max when the sum does not fit.
    package static func saturating(_ a: UInt64, plus b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// A Double rounded toward zero into 0...UInt64.max; NaN is 0.
    package init(saturating value: Double) {
        if !(value > 0) { self = 0 } else if value >= 18_446_744_073_709_551_616.0 { self = .max } else { self = UInt64(value) }
    }
}

extension Int64 {
    /// A Double rounded to nearest into Int64's range; NaN is 0.
    package init(saturating value: Double) {
        let rounded = value.rounded()
        if rounded.isNaN { self = 0 } else if rounded >= 9_223_372_036_854_775_808.0 { self = .max } else if rounded <= -9_223_372_036_854_775_808.0 { self = .min } else { self = Int64(rounded) }
    }
}
