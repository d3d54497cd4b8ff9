/// What an interface is, as recorded beside its totals.
public struct InterfaceInfo: Sendable, Hashable {
    public var interfaceClass: InterfaceClass
    public var signal: String
    public var kind: String

    public init(interfaceClass: InterfaceClass, signal: String, kind: String) {
        self.interfaceClass = interfaceClass
        self.signal = signal
        self.kind = kind
    }

    /// What the classifier decided for a link (an ignored link counts as other).
    public init(_ classification: Classification, of link: LinkSample) {
        self.init(interfaceClass: classification.interfaceClass ?? .other, signal: classification.signal.description, kind: link.kind)
    }
}

/// Accounting results waiting in memory for the next commit. Sampling is
/// frequent and cheap; committing is rare, so small flash is not worn.
/// Deltas are summed per interface and five-minute slot of the wall clock at
/// the time they were observed: a clock jump moves bytes between buckets,
/// never loses or duplicates them.
public struct PendingWrites: Sendable {
    public struct Slot: Hashable, Sendable {
        public var name: String
        public var start: Int64
    }

    public var deltas: [Slot: LinkCounters] = [:]
    public var interfaces: [String: InterfaceInfo] = [:]
    public var endedLives: [(ended: EndedLife, time: Int64)] = []
    public var events: [(time: Int64, event: ResetEvent)] = []

    public init() {}

    public var isEmpty: Bool { deltas.isEmpty && interfaces.isEmpty && endedLives.isEmpty && events.isEmpty }

    /// Adds one accounting outcome observed at `now`.
    public mutating func record(_ outcome: AccountingOutcome, at now: Instant) {
        let slot = TimeBuckets.start(of: .fiveMinutes, containing: now.wall)
        for delta in outcome.deltas {
            deltas[Slot(name: delta.name, start: slot), default: .zero] += delta.counters
        }
        events += outcome.events.map { (now.wall, $0) }
        endedLives += outcome.endedLives.map { ($0, now.wall) }
    }

    /// Totals by interface name (for logging and tests).
    public var totalsByName: [String: LinkCounters] {
        deltas.reduce(into: [:]) { totals, entry in totals[entry.key.name, default: .zero] += entry.value }
    }
}
