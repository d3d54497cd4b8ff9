/// Whether an interface exists now, and in what state.
package enum LinkPresence: String, Sendable {
    case up, down, gone
    /// The kernel was not read here (it failed, or this is another namespace than the daemon's).
    case unknown
    /// Not a link: the totals of a class's retired interfaces, `retired tunnel`.
    case retired
    /// Counted once, not by the configuration in force: its totals stand where counting stopped.
    case unwatched

    /// What a merge of interfaces shows: the first state any of them has.
    static let liveliestFirst: [LinkPresence] = [.up, .down, .unknown, .unwatched, .gone, .retired]

    /// Whether the daemon may be counting it now, the only time a rate or an estimate means something.
    package var mayBeCounted: Bool { self == .up || self == .down || self == .unknown }
}

/// One interface as `status` shows it: stored totals plus the same life's live kernel delta.
package struct InterfaceSnapshot: Sendable {
    package var name: String
    /// The class, or "mixed" for a merge of interfaces of several classes.
    package var interfaceClass: String
    package var signal: String
    package var presence: LinkPresence
    /// Kernel counters beyond what the store has counted (same life only).
    package var liveDelta: LinkCounters
    package var today: LinkCounters
    /// The day before today and the calendar month before this one, as vnStat's summary shows them.
    package var yesterday: LinkCounters = .zero
    package var lastMonth: LinkCounters = .zero
    package var cycle: LinkCounters
    package var sinceBoot: LinkCounters
    package var allTime: LinkCounters
    /// Bytes per second, measured by the caller over a short window.
    package var rate: (rx: Double, tx: Double)?
    /// The seconds that rate averages over, when known.
    package var rateWindow: Double?
    package var lastEvent: StoredEvent?
    package var incomplete: String?
    /// When ifmeter first counted this interface.
    package var firstSeen: Int64
    /// What `allTime` holds of history imported from another tool (`ifmeter import`).
    package var imported: ImportedInterface? = nil

    /// What the default screens show: an interface that may be counted now.
    package var isShownByDefault: Bool { presence.mayBeCounted }
}

/// What the store says about the daemon that writes it.
package struct DaemonHealth: Sendable {
    /// Whether a daemon holds the store's lock now.
    package var running: Bool
    package var lastCommit: Int64?
    package var commitInterval: Double?
    package var sampleInterval: Double?
    /// No commit for three commit intervals: the figures may be behind.
    package var stale: Bool
}

/// A budget's state in its current period.
package struct BudgetStatus: Sendable {
    package enum State: String, Sendable { case ok, projectedOver = "projected-over", exceeded }

    package var budget: Budget
    /// [start, end) of the period counted now: the hour, day, month, billing cycle or year.
    package var periodStart: Int64
    package var periodEnd: Int64
    /// The day its cycles start (`BillingDay=`, or its target's own).
    package var billingDay: Int
    package var used: UInt64
    /// A labelled linear projection of use at the end of the cycle, from the time observed.
    package var projection: BudgetProjection
    package var state: State
    /// For a budget naming an interface, whether the store has counted one of that name (it may be
    /// budgeted before it appears, or misspelt); nil for a class.
    package var interfaceCounted: Bool? = nil

    package var remaining: Int64 { Int64(clamping: budget.bytes) - Int64(clamping: used) }

    package init(
        budget: Budget, periodStart: Int64, periodEnd: Int64, billingDay: Int, used: UInt64, projection: BudgetProjection, state: State,
        interfaceCounted: Bool? = nil
    ) {
        self.budget = budget
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.billingDay = billingDay
        self.used = used
        self.projection = projection
        self.state = state
        self.interfaceCounted = interfaceCounted
    }
}

/// Everything `status`, `classes` and `check` show, read at one moment.
package struct Snapshot: Sendable {
    package var now: Int64
    package var bootID: String
    package var billingDay: Int
    package var cycleStart: Int64
    package var cycleEnd: Int64
    package var interfaces: [InterfaceSnapshot]
    package var daemon: DaemonHealth
    package var budgets: [BudgetStatus]
    /// False when the kernel could not be read: figures are the store's only.
    package var kernelRead: Bool
    /// This process counts in another network namespace than the daemon: none of its links is mixed in.
    package var foreignNamespace = false
    /// The links present now that the configuration does not count, for the hint when nothing is.
    package var unwatched: [ClassifiedLink] = []
    package var watchedClasses: Set<InterfaceClass> = InterfaceClass.watchedByDefault
    /// `[Aliases]`: display names beside interface names.
    package var aliases: [String: String] = [:]
}

/// Reads a snapshot from the store, given the kernel's links (nil when unread) and the clock.
package enum SnapshotReader {
    /// What the kernel counted that the store has not, by the same `Meter` the daemon would start now.
    /// `events`: the resets that start would record; `appeared`: names it would count on links new since
    /// the last commit (not one present then and counted only now: an edit not yet reloaded counts that).
    package static func liveDeltas(
        state: StoredState, kernel: [LinkSample], configuration: Configuration, bootID: String, now: Instant
    ) -> (deltas: [String: LinkCounters], events: [ResetEvent], appeared: Set<String>) {
        var meter = Meter(bootID: bootID, namespace: state.lastNamespace, width: .bits64, policy: Meter.Policy(configuration))
        let step = meter.start(stored: state, links: kernel, at: now)
        // A commit of another boot says nothing of this boot's ifindexes.
        let committed = state.lastBootID == bootID ? state.presentLinks : nil
        let appeared = meter.lives.values.filter { committed?[$0.ifindex] == nil }.map(\.name)
        return (meter.pending.totalsByName, step.events, Set(appeared))
    }

    /// An interface's state: retired for an aggregate; gone when the kernel, read, lacks it; unwatched when
    /// the configuration does not count it, whatever its link; else the link's (unknown if the kernel was not read).
    static func presence(of name: String, kernelRead: Bool, link: LinkSample?, counted: Bool) -> LinkPresence {
        if InterfaceName.isRetired(name) { return .retired }
        if kernelRead && link == nil { return .gone }
        if !counted { return .unwatched }
        guard let link else { return .unknown }
        return link.isUp && (link.operState == .up || link.operState == .unknown) ? .up : .down
    }

    /// The links of `kernel` only when read in the namespace the daemon last committed from (`namespace`
    /// is the caller's, 0 unknown): another namespace's links never mix into the daemon's figures.
    static func inDaemonNamespace(
        _ kernel: [LinkSample]?, store: CounterStore, namespace: NamespaceCookie
    ) throws(StoreError) -> (links: [LinkSample]?, foreign: Bool) {
        let daemonNamespace = try store.meta("netns").flatMap { UInt64($0) } ?? 0
        let foreign = kernel != nil && !NamespaceCookie.same(namespace, daemonNamespace)
        return (foreign ? nil : kernel, foreign)
    }

    package static func read(
        store: CounterStore, configuration: Configuration, bootID: String, now instant: Instant,
        kernel allLinks: [LinkSample]?, rates: [Int32: (rx: Double, tx: Double)] = [:], daemonRunning: Bool,
        namespace: NamespaceCookie = 0
    ) throws(StoreError) -> Snapshot {
        let (kernel, foreign) = try inDaemonNamespace(allLinks, store: store, namespace: namespace)
        var configuration = configuration
        configuration.chosen = try store.chosenWatches()
        let now = instant.wall
        let (cycleStart, cycleEnd) = BillingCycle.bounds(billingDay: configuration.billingDay, containing: now)
        let todayStart = TimeBuckets.start(of: .day, containing: now)
        var stored = try store.interfaces()
        let imports = try store.importedInterfaces()
        for entry in imports {
            if let index = stored.firstIndex(where: { $0.name == entry.name }) {
                stored[index].totals += entry.totals
            } else {
                stored.append(StoredInterface(
                    name: entry.name, interfaceClass: entry.interfaceClass, signal: "imported", kind: "",
                    firstSeen: entry.importedAt, lastSeen: entry.importedAt, totals: entry.totals, incomplete: nil))
            }
        }
        let importsByName = Dictionary(imports.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let yesterdayStart = TimeBuckets.start(of: .day, 1, before: now)
        let daysFrom = min(cycleStart, yesterdayStart)
        let days = try store.buckets(.day, from: daysFrom)
        let thisMonthStart = TimeBuckets.start(of: .month, containing: now)
        let lastMonths = try store.buckets(.month, from: TimeBuckets.start(of: .month, 1, before: now), to: thisMonthStart)
        let counted = try store.counted(bootID: bootID)
        var lastEvents = try store.lastEvents()
        let kernelByName = Dictionary((kernel ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var live: [String: LinkCounters] = [:]
        var appeared: Set<String> = []
        if let kernel, !bootID.isEmpty {
            let start = liveDeltas(state: try store.loadState(), kernel: kernel, configuration: configuration, bootID: bootID, now: instant)
            live = start.deltas
            appeared = start.appeared
            // With the daemon stopped, a reset its next start will record is shown as the last one: the
            // totals above already follow it. A running daemon records it itself.
            if !daemonRunning {
                for event in start.events { lastEvents[event.name] = StoredEvent(pending: event, at: now) }
            }
        }
        // Interfaces that appeared since the last commit, counted now with or without traffic yet.
        let classifier = configuration.classifier
        let storedNames = Set(stored.map(\.name))
        for name in appeared.union(live.keys).sorted() where !storedNames.contains(name) {
            guard let link = kernelByName[name] else { continue }
            let classification = classifier.classify(link)
            stored.append(StoredInterface(
                name: name, interfaceClass: classification.interfaceClass ?? .other, signal: classification.signal.description,
                kind: link.kind, firstSeen: now, lastSeen: now, totals: .zero, incomplete: nil))
        }

        // In the order every view shows names: tun2 before tun10.
        stored.sort { NaturalOrder.less($0.name, $1.name) }
        let interfaces = stored.map { interface -> InterfaceSnapshot in
            let delta = live[interface.name] ?? .zero
            func sum(from start: Int64) -> LinkCounters {
                days.filter { $0.name == interface.name && $0.start >= start }.reduce(LinkCounters.zero) { $0 + $1.counters } + delta
            }
            let link = kernelByName[interface.name]
            let presence = Self.presence(
                of: interface.name, kernelRead: kernel != nil, link: link,
                counted: configuration.counts(interface.name, stored: interface.interfaceClass, classification: link.map(classifier.classify)))
            var snapshot = InterfaceSnapshot(
                name: interface.name, interfaceClass: interface.interfaceClass.rawValue, signal: interface.signal, presence: presence,
                liveDelta: delta, today: sum(from: todayStart), cycle: sum(from: cycleStart),
                sinceBoot: (counted[interface.name] ?? .zero) + delta, allTime: interface.totals + delta,
                rate: presence.mayBeCounted ? link.flatMap { rates[$0.ifindex] } : nil, rateWindow: nil,
                lastEvent: lastEvents[interface.name], incomplete: interface.incomplete, firstSeen: interface.firstSeen,
                imported: importsByName[interface.name])
            snapshot.yesterday = days.filter { $0.name == interface.name && $0.start >= yesterdayStart && $0.start < todayStart }
                .reduce(LinkCounters.zero) { $0 + $1.counters }
            snapshot.lastMonth = lastMonths.filter { $0.name == interface.name }.reduce(LinkCounters.zero) { $0 + $1.counters }
            return snapshot
        }
        let lastCommit = try store.meta("last_commit").flatMap { Int64($0) }
        let commitInterval = try store.meta("commit_interval").flatMap { Double($0) }
        let sampleInterval = try store.meta("sample_interval").flatMap { Double($0) }
        var stale = true
        if let lastCommit, let commitInterval { stale = Double(now - lastCommit) > 3 * max(commitInterval, 1) }
        let daemon = DaemonHealth(
            running: daemonRunning, lastCommit: lastCommit, commitInterval: commitInterval, sampleInterval: sampleInterval, stale: stale)

        let members = interfaces.map { BudgetMember(name: $0.name, interfaceClass: $0.interfaceClass, firstSeen: $0.firstSeen, uncommitted: $0.liveDelta) }
        let budgets = try BudgetUse.statuses(configuration, members: members, now: now) { granularity, start throws(StoreError) in
            granularity == .day && start >= daysFrom ? days : try store.buckets(granularity, from: start)
        }
        return Snapshot(
            now: now, bootID: bootID, billingDay: configuration.billingDay, cycleStart: cycleStart, cycleEnd: cycleEnd,
            interfaces: interfaces, daemon: daemon, budgets: budgets, kernelRead: kernel != nil, foreignNamespace: foreign,
            unwatched: (kernel ?? []).map { ClassifiedLink(sample: $0, classification: classifier.classify($0)) }
                .filter { !configuration.watches($0.sample.name, $0.classification.interfaceClass) },
            watchedClasses: configuration.watchedClasses, aliases: configuration.aliases)
    }
}

/// What a history view adds to the stored buckets: live deltas (as `status`) and every known interface's class.
package struct LiveAdditions: Sendable {
    package var deltas: [String: LinkCounters]
    package var classes: [String: InterfaceClass]
    package var firstSeen: [String: Int64]
    /// The links present in the daemon's namespace now; nil where the kernel was not read there.
    package var present: Set<String>? = nil
    /// The names the configuration does not count (`Configuration.counts`).
    package var unwatched: Set<String> = []
}

extension SnapshotReader {
    /// Reads only what a history view needs: the open lives and the stored classes.
    package static func liveAdditions(
        store: CounterStore, configuration: Configuration, bootID: String, now: Instant, kernel allLinks: [LinkSample]?,
        namespace: NamespaceCookie = 0
    ) throws(StoreError) -> LiveAdditions {
        let kernel = try inDaemonNamespace(allLinks, store: store, namespace: namespace).links
        let stored = try store.interfaces()
        var classes = Dictionary(stored.map { ($0.name, $0.interfaceClass) }, uniquingKeysWith: { first, _ in first })
        for entry in try store.importedInterfaces() where classes[entry.name] == nil { classes[entry.name] = entry.interfaceClass }
        let firstSeen = Dictionary(stored.map { ($0.name, $0.firstSeen) }, uniquingKeysWith: { first, _ in first })
        let classifier = configuration.classifier
        let kernelByName = Dictionary((kernel ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // As status judges them: stored names only; a link the store lacks is counted below or shown nowhere.
        let unwatched = Set(classes.filter { name, interfaceClass in
            !configuration.counts(name, stored: interfaceClass, classification: kernelByName[name].map(classifier.classify))
        }.keys)
        guard let kernel, !bootID.isEmpty else {
            return LiveAdditions(deltas: [:], classes: classes, firstSeen: firstSeen, unwatched: unwatched)
        }
        let live = liveDeltas(state: try store.loadState(), kernel: kernel, configuration: configuration, bootID: bootID, now: now)
        let deltas = live.deltas
        // Named as status names them: a link counted since it appeared is the daemon's, traffic or not.
        for link in kernel where (deltas[link.name] != nil || live.appeared.contains(link.name)) && classes[link.name] == nil {
            classes[link.name] = classifier.classify(link).interfaceClass ?? .other
        }
        return LiveAdditions(deltas: deltas, classes: classes, firstSeen: firstSeen, present: Set(kernel.map(\.name)), unwatched: unwatched)
    }
}

extension Snapshot {
    /// Each budget naming an interface never counted, said once on stderr: its row alone would read
    /// as room left, and `check` would exit 0 on it for good.
    package var budgetWarnings: [String] {
        budgets.filter { $0.interfaceCounted == false }.map { "budget \($0.budget.label): no interface of that name has been counted yet" }
    }
}

/// `check`'s verdict, as monitoring plugins exit: 0 within every budget, 1 one projected over, 2 one exceeded.
package enum CheckVerdict: Int32, Sendable {
    case ok = 0, atRisk = 1, exceeded = 2

    package init(_ snapshot: Snapshot) {
        if snapshot.budgets.contains(where: { $0.state == .exceeded }) {
            self = .exceeded
        } else if snapshot.budgets.contains(where: { $0.state == .projectedOver }) {
            self = .atRisk
        } else {
            self = .ok
        }
    }
}

extension Snapshot {
    /// Rates with no waiting: the live delta since the daemon's last commit over the seconds since, only
    /// while commits are on time and over at least `minimum` seconds; else the window is not "now".
    package mutating func setRatesSinceLastCommit(minimum: Double = 5) {
        guard let last = daemon.lastCommit, !daemon.stale, kernelRead else { return }
        let window = Double(now - last)
        guard window >= minimum else { return }
        for index in interfaces.indices where interfaces[index].presence.mayBeCounted {
            let delta = interfaces[index].liveDelta
            interfaces[index].rate = (Double(delta.rxBytes) / window, Double(delta.txBytes) / window)
            interfaces[index].rateWindow = window
        }
    }
}
