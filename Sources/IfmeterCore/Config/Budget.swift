/// What a budget counts: received, transmitted, or both (as carriers count plans).
package enum BudgetDirection: String, Sendable, Hashable, CaseIterable {
    case rx, tx, total

    package func bytes(_ counters: LinkCounters) -> UInt64 {
        switch self {
        case .rx: counters.rxBytes
        case .tx: counters.txBytes
        case .total: counters.totalBytes
        }
    }

    /// As the budget table's heading says it.
    package var phrase: String {
        switch self {
        case .rx: "rx"
        case .tx: "tx"
        case .total: "rx + tx"
        }
    }
}

/// The span a budget's use is counted over, cut in the local calendar; `cycle` starts on a billing day.
package enum BudgetPeriod: String, Sendable, Hashable, CaseIterable {
    case hour, day, month, cycle, year

    /// The bucket size whose rows add up to the period exactly.
    package var granularity: Granularity {
        switch self {
        case .hour: .hour
        case .day, .cycle: .day
        case .month: .month
        case .year: .year
        }
    }

    /// [start, end) of the period containing `time`.
    package func bounds(containing time: Int64, billingDay: Int) -> (start: Int64, end: Int64) {
        switch self {
        case .cycle: return BillingCycle.bounds(billingDay: billingDay, containing: time)
        case .hour, .day, .month, .year:
            return (TimeBuckets.start(of: granularity, containing: time), TimeBuckets.start(of: granularity, -1, before: time))
        }
    }
}

/// A data budget: a limit on received, transmitted or total bytes per hour, day, month, billing cycle or year.
package struct Budget: Sendable, Hashable {
    package enum Target: Sendable, Hashable {
        case interfaceClass(InterfaceClass)
        case interface(String)
    }

    package var target: Target
    package var bytes: UInt64
    /// Written in 1000-based units (`20GB`) as carriers sell plans, and shown in them unless asked otherwise.
    package var decimal: Bool
    package var period: BudgetPeriod
    package var direction: BudgetDirection

    package init(target: Target, bytes: UInt64, decimal: Bool = false, period: BudgetPeriod = .cycle, direction: BudgetDirection = .total) {
        self.target = target
        self.bytes = bytes
        self.decimal = decimal
        self.period = period
        self.direction = direction
    }

    /// The name as configured: a class (`cellular`) or an interface (`wwan0`).
    package var label: String {
        switch target {
        case .interfaceClass(let interfaceClass): interfaceClass.rawValue
        case .interface(let name): name
        }
    }

    /// What tells two budgets of one target apart: `per day rx`; empty for a cycle's total, the default.
    package var qualifier: String {
        [period == .cycle ? nil : "per \(period.rawValue)", direction == .total ? nil : direction.rawValue].compactMap { $0 }.joined(separator: " ")
    }
}
