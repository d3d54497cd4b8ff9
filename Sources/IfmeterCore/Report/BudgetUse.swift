/// Each budget's use in its period: the stored buckets of its members plus what the kernel counted since
/// the last commit, shared by `status`, `check` and the daemon's metrics so all three say the same.
package enum BudgetUse {
    /// `buckets(granularity, start)`: the store's rows of that size from `start` on, asked once per pair.
    package static func statuses(
        _ configuration: Configuration, members interfaces: [BudgetMember], now: Int64,
        buckets: (Granularity, Int64) throws(StoreError) -> [StoredBucket]
    ) throws(StoreError) -> [BudgetStatus] {
        var read: [Granularity: [Int64: [StoredBucket]]] = [:]
        var statuses: [BudgetStatus] = []
        for budget in configuration.budgets {
            let billingDay = configuration.billingDay(for: budget)
            let (start, end) = budget.period.bounds(containing: now, billingDay: billingDay)
            let granularity = budget.period.granularity
            let rows: [StoredBucket]
            if let known = read[granularity]?[start] {
                rows = known
            } else {
                rows = try buckets(granularity, start)
                read[granularity, default: [:]][start] = rows
            }
            let members = interfaces.filter { budget.covers(name: $0.name, interfaceClass: $0.interfaceClass) }
            let names = Set(members.map(\.name))
            let stored = rows.filter { $0.start >= start && names.contains($0.name) }.map(\.counters)
            let used = (stored + members.map(\.uncommitted)).reduce(UInt64(0)) { .saturating($0, plus: budget.direction.bytes($1)) }
            var interfaceCounted: Bool?
            if case .interface = budget.target { interfaceCounted = !members.isEmpty }
            // With no member yet, counting for it begins now.
            let countingSince = members.map(\.firstSeen).min() ?? now
            let projection = BudgetProjection(used: used, cycleStart: start, cycleEnd: end, countingSince: countingSince, now: now)
            statuses.append(BudgetStatus(
                budget: budget, periodStart: start, periodEnd: end, billingDay: billingDay, used: used, projection: projection,
                state: state(used: used, projection: projection, limit: budget.bytes), interfaceCounted: interfaceCounted))
        }
        return statuses
    }

    /// Exceeded once over; at risk only on a projection made from enough of the period.
    package static func state(used: UInt64, projection: BudgetProjection, limit: UInt64) -> BudgetStatus.State {
        used > limit ? .exceeded : projection.isTrusted && projection.projected > limit ? .projectedOver : .ok
    }
}

/// An interface as a budget sees it: what it is, since when it is counted, what the store lacks of it yet.
package struct BudgetMember: Sendable {
    package var name: String
    package var interfaceClass: String
    package var firstSeen: Int64
    package var uncommitted: LinkCounters

    package init(name: String, interfaceClass: String, firstSeen: Int64, uncommitted: LinkCounters = .zero) {
        self.name = name
        self.interfaceClass = interfaceClass
        self.firstSeen = firstSeen
        self.uncommitted = uncommitted
    }
}

extension Budget {
    /// Whether an interface's traffic counts against this budget: its name, or its class (`mixed` is none).
    package func covers(name: String, interfaceClass: String) -> Bool {
        switch target {
        case .interfaceClass(let wanted): interfaceClass == wanted.rawValue
        case .interface(let wanted): name == wanted
        }
    }
}
