/// Whether an interface exists now, and in what state.
public enum LinkPresence: String, Sendable {
    case up, down, gone
}

/// One interface as `status` shows it: stored totals plus the live kernel
/// delta of the same life, so "now" is up to the second between commits.
public struct InterfaceSnapshot: Sendable {
    public var name: String
    public var interfaceClass: String
    public var signal: String
    public var presence: LinkPresence
    /// Kernel counters beyond what the store has counted (same life only).
    public var liveDelta: LinkCounters
    public var today: LinkCounters
    public var cycle: LinkCounters
    public var sinceBoot: LinkCounters
    public var allTime: LinkCounters
    /// Bytes per second, measured by the caller over a short window.
    public var rate: (rx: Double, tx: Double)?
    public var lastEvent: StoredEvent?
    public var incomplete: String?
}

/// What the store says about the daemon that writes it.
public struct DaemonHealth: Sendable {
    /// Whether a daemon holds the store's lock now.
    public var running: Bool
    public var lastCommit: Int64?
    public var commitInterval: Double?
    public var sampleInterval: Double?
    /// No commit for three commit intervals: the figures may be behind.
    public var stale: Bool
}

/// A budget's state in the current billing cycle.
public struct BudgetStatus: Sendable {
    public enum State: String, Sendable { case ok, projectedOver = "projected-over", exceeded }

    public var budget: Budget
    public var used: UInt64
    /// A labelled linear projection of use at the end of the cycle.
    public var projected: UInt64
    public var state: State

    public var remaining: Int64 { Int64(clamping: budget.bytes) - Int64(clamping: used) }
}

/// Everything `status`, `classes` and `check` show, read at one moment.
public struct Snapshot: Sendable {
    public var now: Int64
    public var bootID: String
    public var billingDay: Int
    public var cycleStart: Int64
    public var cycleEnd: Int64
    public var interfaces: [InterfaceSnapshot]
    public var daemon: DaemonHealth
    public var budgets: [BudgetStatus]
    /// False when the kernel could not be read: figures are the store's only.
    public var kernelRead: Bool
}

/// The billing cycle containing a moment: from `billingDay` 00:00 local
/// time to the same day of the next month.
public enum BillingCycle {
    public static func bounds(billingDay: Int, containing time: Int64) -> (start: Int64, end: Int64) {
        let monthStart = TimeBuckets.start(of: .month, containing: time)
        var start = monthStart + Int64(billingDay - 1) * 86_400
        start = TimeBuckets.start(of: .day, containing: start + 43_200)  // DST-safe midnight
        if start > time {
            let previous = TimeBuckets.start(of: .month, 1, before: time)
            start = TimeBuckets.start(of: .day, containing: previous + Int64(billingDay - 1) * 86_400 + 43_200)
        }
        let nextMonth = TimeBuckets.start(of: .month, -1, before: start)
        let end = TimeBuckets.start(of: .day, containing: nextMonth + Int64(billingDay - 1) * 86_400 + 43_200)
        return (start, end)
    }
}

/// Reads a snapshot from the store, given what the caller read from the
/// kernel (nil when it could not) and the clock.
public enum SnapshotReader {
    /// What the kernel counted that the store has not: the deltas the
    /// daemon itself would count if it started now, computed by the same
    /// pure accounting from the store's state and the watched links. So a
    /// life created since the last commit counts from zero, a recreated or
    /// rebooted one by the same rules, and a life the store knows by the
    /// difference from its baseline.
    public static func liveDeltas(
        state: StoredState, kernel: [LinkSample], configuration: Configuration, bootID: String, now: Instant
    ) -> [String: LinkCounters] {
        let classifier = configuration.classifier
        let watched = kernel.filter { link in
            classifier.classify(link).interfaceClass.map(configuration.watchedClasses.contains) ?? false
        }
        var tracker = CounterTracker(bootID: bootID, settings: .init(width: .bits64, maxRateBitsPerSecond: configuration.maxRateBitsPerSecond))
        let outcome = tracker.start(stored: state, links: watched, at: now)
        return outcome.deltas.reduce(into: [:]) { sums, delta in sums[delta.name, default: .zero] += delta.counters }
    }

    public static func read(
        store: CounterStore, configuration: Configuration, bootID: String, now instant: Instant,
        kernel: [LinkSample]?, rates: [Int32: (rx: Double, tx: Double)] = [:], daemonRunning: Bool
    ) throws(StoreError) -> Snapshot {
        let now = instant.wall
        let (cycleStart, cycleEnd) = BillingCycle.bounds(billingDay: configuration.billingDay, containing: now)
        let todayStart = TimeBuckets.start(of: .day, containing: now)
        var stored = try store.interfaces()
        let days = try store.buckets(.day, from: min(cycleStart, todayStart))
        let counted = try store.counted(bootID: bootID)
        let lastEvents = try store.lastEvents()
        let kernelByName = Dictionary((kernel ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var live: [String: LinkCounters] = [:]
        if let kernel, !bootID.isEmpty {
            live = liveDeltas(state: try store.loadState(), kernel: kernel, configuration: configuration, bootID: bootID, now: instant)
        }
        // Interfaces that appeared since the daemon's last commit.
        let classifier = configuration.classifier
        for name in live.keys.sorted() where !stored.contains(where: { $0.name == name }) {
            guard let link = kernelByName[name] else { continue }
            let classification = classifier.classify(link)
            stored.append(StoredInterface(
                name: name, interfaceClass: classification.interfaceClass?.rawValue ?? "other", signal: classification.signal.description,
                kind: link.kind, firstSeen: now, lastSeen: now, totals: .zero, incomplete: nil))
        }

        let interfaces = stored.map { interface -> InterfaceSnapshot in
            let delta = live[interface.name] ?? .zero
            func sum(from start: Int64) -> LinkCounters {
                days.filter { $0.name == interface.name && $0.start >= start }.reduce(LinkCounters.zero) { $0 + $1.counters } + delta
            }
            let presence: LinkPresence
            if let link = kernelByName[interface.name] {
                presence = link.isUp && (link.operState == .up || link.operState == .unknown) ? .up : .down
            } else {
                presence = .gone
            }
            return InterfaceSnapshot(
                name: interface.name, interfaceClass: interface.interfaceClass, signal: interface.signal, presence: presence,
                liveDelta: delta, today: sum(from: todayStart), cycle: sum(from: cycleStart),
                sinceBoot: (counted[interface.name] ?? .zero) + delta, allTime: interface.totals + delta,
                rate: kernelByName[interface.name].flatMap { rates[$0.ifindex] },
                lastEvent: lastEvents[interface.name], incomplete: interface.incomplete)
        }
        let lastCommit = try store.meta("last_commit").flatMap { Int64($0) }
        let commitInterval = try store.meta("commit_interval").flatMap { Double($0) }
        let sampleInterval = try store.meta("sample_interval").flatMap { Double($0) }
        var stale = true
        if let lastCommit, let commitInterval { stale = Double(now - lastCommit) > 3 * max(commitInterval, 1) }
        let daemon = DaemonHealth(
            running: daemonRunning, lastCommit: lastCommit, commitInterval: commitInterval, sampleInterval: sampleInterval, stale: stale)

        let elapsed = Double(max(now - cycleStart, 1))
        let length = Double(cycleEnd - cycleStart)
        let budgets = configuration.budgets.map { budget -> BudgetStatus in
            let members = interfaces.filter { snapshot in
                switch budget.target {
                case .interfaceClass(let interfaceClass): snapshot.interfaceClass == interfaceClass.rawValue
                case .interface(let name): snapshot.name == name
                }
            }
            let used = members.reduce(UInt64(0)) { .saturating($0, plus: .saturating($1.cycle.rxBytes, plus: $1.cycle.txBytes)) }
            let projected = UInt64(saturating: Double(used) / elapsed * length)
            let state: BudgetStatus.State = used > budget.bytes ? .exceeded : projected > budget.bytes ? .projectedOver : .ok
            return BudgetStatus(budget: budget, used: used, projected: projected, state: state)
        }
        return Snapshot(
            now: now, bootID: bootID, billingDay: configuration.billingDay, cycleStart: cycleStart, cycleEnd: cycleEnd,
            interfaces: interfaces, daemon: daemon, budgets: budgets, kernelRead: kernel != nil)
    }
}
