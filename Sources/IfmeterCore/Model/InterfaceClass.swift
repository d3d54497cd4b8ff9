/// The kinds of link ifmeter exists to count, and the rest.
package enum InterfaceClass: String, Sendable, CaseIterable, Hashable {
    case wifi, cellular, tunnel, wired, other

    /// The classes counted unless configured otherwise: not wired, since ifmeter exists for metered
    /// links and a LAN port rarely is (`Watch=` adds it).
    package static let watchedByDefault: Set<InterfaceClass> = [.wifi, .cellular, .tunnel]

    /// The names `Watch=` and `[Classes]` accept, in order.
    package static let spelledOut = allCases.map(\.rawValue).joined(separator: " ")

    /// A set as `Watch=` spells it, in the one order every message uses.
    package static func spelled(_ classes: Set<InterfaceClass>) -> String {
        allCases.filter(classes.contains).map(\.rawValue).joined(separator: " ")
    }

    /// How people write it ("Wi-Fi" in tables, the raw value in JSON and config).
    package var displayName: String {
        switch self {
        case .wifi: "Wi-Fi"
        case .cellular: "cellular"
        case .tunnel: "tunnel"
        case .wired: "wired"
        case .other: "other"
        }
    }
}
