import Glibc

/// The kinds of link ifmeter exists to count, and the rest.
public enum InterfaceClass: String, Sendable, CaseIterable, Hashable {
    case wifi, cellular, tunnel, other

    /// The classes counted unless the configuration says otherwise.
    public static let watchedByDefault: Set<InterfaceClass> = [.wifi, .cellular, .tunnel]

    /// How people write it ("Wi-Fi" in tables, the raw value in JSON and config).
    public var displayName: String {
        switch self {
        case .wifi: "Wi-Fi"
        case .cellular: "cellular"
        case .tunnel: "tunnel"
        case .other: "other"
        }
    }
}

/// A configured rule for names matching a glob: a class, or "ignore".
public struct InterfaceOverride: Sendable, Hashable {
    public enum Action: Sendable, Hashable {
        case assign(InterfaceClass)
        case ignore
    }

    /// An fnmatch(3) pattern over the interface name, like `ppp*` or `wwan[0-9]`.
    public var pattern: String
    public var action: Action

    public init(pattern: String, action: Action) {
        self.pattern = pattern
        self.action = action
    }

    /// Whether this rule covers the name.
    public func matches(_ name: String) -> Bool {
        globMatches(pattern, name)
    }
}

/// fnmatch(3) over the whole encoded name: `*`, `?` and `[...]`. A
/// backslash is literal (FNM_NOESCAPE): in an encoded name it starts `\xNN`.
func globMatches(_ pattern: String, _ name: String) -> Bool {
    fnmatch(pattern, name, FNM_NOESCAPE) == 0
}

/// The evidence that decided a classification, so users can see why.
public enum ClassificationSignal: Sendable, Hashable, CustomStringConvertible {
    case override(pattern: String)
    case linkKind(String)
    case deviceType(String)
    case sysfsMarker(String)
    case arpType(UInt16)
    case name(pattern: String)
    /// The name hint together with ARP type NONE, which alone is ambiguous.
    case nameWithArpNone(pattern: String)
    case noSignal

    public var description: String {
        switch self {
        case .override(let pattern): "override \(pattern)"
        case .linkKind(let kind): "kind \(kind)"
        case .deviceType(let type): "DEVTYPE=\(type)"
        case .sysfsMarker(let marker): "sysfs \(marker)"
        case .arpType(let type): "ARP type \(type)"
        case .name(let pattern): "name \(pattern)"
        case .nameWithArpNone(let pattern): "name \(pattern) + ARP type NONE"
        case .noSignal: "no signal"
        }
    }
}

/// What an interface is and why ifmeter thinks so.
public struct Classification: Sendable, Hashable {
    /// The class, or nil when an override says to ignore the interface.
    public var interfaceClass: InterfaceClass?
    public var signal: ClassificationSignal

    public init(_ interfaceClass: InterfaceClass?, by signal: ClassificationSignal) {
        self.interfaceClass = interfaceClass
        self.signal = signal
    }
}
