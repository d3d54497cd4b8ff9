/// Budget use for the metrics file without a store query per sample: what the store held at the last
/// read (after each commit, and when a period ends) plus what each interface's running total grew since.
package struct BudgetLedger: Sendable {
    /// As `check` judges them, at the last read.
    package private(set) var statuses: [BudgetStatus] = []
    /// Each stored interface's all-time total at that read: the base its growth is measured from.
    package private(set) var baseline: [String: LinkCounters] = [:]
    /// When the soonest period ends, after which the statuses are of a period gone by.
    package private(set) var validUntil = Int64.min

    package init() {}

    /// As a read would leave it (tests, the bench).
    package init(statuses: [BudgetStatus], baseline: [String: LinkCounters]) {
        self.statuses = statuses
        self.baseline = baseline
        validUntil = statuses.map(\.periodEnd).min() ?? .max
    }

    package func needsRead(at now: Int64) -> Bool { now >= validUntil }

    /// The configuration changed: the next publication reads again.
    package mutating func invalidate() { validUntil = .min }

    package mutating func read(_ configuration: Configuration, store: CounterStore, now: Int64) throws(StoreError) {
        let stored = try store.interfaces()
        let storedNames = Set(stored.map(\.name))
        let members = stored.map { BudgetMember(name: $0.name, interfaceClass: $0.interfaceClass.rawValue, firstSeen: $0.firstSeen) }
            + (try store.importedInterfaces()).filter { !storedNames.contains($0.name) }
            .map { BudgetMember(name: $0.name, interfaceClass: $0.interfaceClass.rawValue, firstSeen: $0.importedAt) }
        statuses = try BudgetUse.statuses(configuration, members: members, now: now) { granularity, start throws(StoreError) in
            try store.buckets(granularity, from: start)
        }
        baseline = Dictionary(stored.map { ($0.name, $0.totals) }, uniquingKeysWith: { first, _ in first })
        validUntil = statuses.map(\.periodEnd).min() ?? .max
    }

    /// Each budget's use now: what the store held plus the growth of the interfaces it covers.
    package func current(_ interfaces: [MetricsInterface]) -> [MetricsBudget] {
        statuses.map { status in
            let budget = status.budget
            var grown: UInt64 = 0
            for interface in interfaces {
                // Per sample: the class compared as a value, not spelt out.
                let covered = switch budget.target {
                case .interfaceClass(let wanted): interface.info.interfaceClass == wanted
                case .interface(let wanted): interface.device == wanted
                }
                guard covered else { continue }
                let (now, base) = (budget.direction.bytes(interface.totals), budget.direction.bytes(baseline[interface.device] ?? .zero))
                grown = .saturating(grown, plus: now > base ? now - base : 0)
            }
            return MetricsBudget(budget: budget, used: .saturating(status.used, plus: grown), periodStart: status.periodStart, periodEnd: status.periodEnd)
        }
    }
}
