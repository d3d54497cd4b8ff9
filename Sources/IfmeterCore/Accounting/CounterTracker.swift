/// One interface life being counted: (boot id, namespace, ifindex). The name
/// is a label that can change; totals go under the current name.
public struct TrackedLife: Sendable, Hashable {
    public var ifindex: Int32
    public var name: String
    /// The kernel counters already accounted for.
    public var counters: LinkCounters
    /// When `counters` were read (CLOCK_BOOTTIME seconds), for rates.
    public var sinceBoot: Double
    public var firstSeen: Int64
    public var lastSeen: Int64

    public init(ifindex: Int32, name: String, counters: LinkCounters, sinceBoot: Double, firstSeen: Int64, lastSeen: Int64) {
        self.ifindex = ifindex
        self.name = name
        self.counters = counters
        self.sinceBoot = sinceBoot
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// What the store remembers when the daemon starts.
public struct StoredState: Sendable {
    /// The boot id of the last commit; nil for a new store.
    public var lastBootID: String?
    /// Lives still open at the last commit, each with the boot it belongs to.
    public var openLives: [(bootID: String, life: TrackedLife)]
    /// Every interface name the store has totals for.
    public var knownNames: Set<String>

    public init(lastBootID: String? = nil, openLives: [(bootID: String, life: TrackedLife)] = [], knownNames: Set<String> = []) {
        self.lastBootID = lastBootID
        self.openLives = openLives
        self.knownNames = knownNames
    }
}

/// Bytes and packets to add to an interface's totals.
public struct Delta: Sendable, Hashable {
    public var name: String
    public var ifindex: Int32
    public var counters: LinkCounters
}

/// Why a life stopped being counted.
public enum LifeEnd: String, Sendable {
    case removed, movedAway = "moved-away", removedWhileStopped = "removed-while-stopped"
    case reboot, eventsLost = "events-lost"
}

/// A life that stopped being counted, with the boot it belongs to (a life
/// ended by a reboot belongs to the boot before).
public struct EndedLife: Sendable, Hashable {
    public var life: TrackedLife
    public var end: LifeEnd
    public var bootID: String
}

/// The result of one accounting step: what to add, what to log, which lives ended.
public struct AccountingOutcome: Sendable {
    public var deltas: [Delta] = []
    public var events: [ResetEvent] = []
    public var endedLives: [EndedLife] = []

    public init() {}

    mutating func append(_ other: AccountingOutcome) {
        deltas += other.deltas
        events += other.events
        endedLives += other.endedLives
    }
}

/// The counter rules of ACCOUNTING.md as a value type: (state, observation)
/// -> (deltas, events, new state). No clock, no I/O: every input, including
/// the time, is an argument, so each rule is a table test.
public struct CounterTracker: Sendable {
    public struct Settings: Sendable {
        /// The source's counter width, which decides the wrap rule.
        public var width: CounterWidth
        /// Faster deltas are implausible (rule 8).
        public var maxRateBitsPerSecond: UInt64

        public init(width: CounterWidth = .bits64, maxRateBitsPerSecond: UInt64 = 10_000_000_000) {
            self.width = width
            self.maxRateBitsPerSecond = maxRateBitsPerSecond
        }
    }

    public let bootID: String
    public var settings: Settings
    /// Open lives by ifindex.
    public private(set) var lives: [Int32: TrackedLife] = [:]

    public init(bootID: String, settings: Settings = Settings()) {
        self.bootID = bootID
        self.settings = settings
    }

    // MARK: Start (rules 2 to 5)

    /// Reconciles what the store remembers with the links present now.
    public mutating func start(stored: StoredState, links: [LinkSample], at now: Instant) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        let byIndex = Dictionary(links.map { ($0.ifindex, $0) }, uniquingKeysWith: { first, _ in first })
        let byName = Dictionary(links.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var handled: Set<Int32> = []

        for (lifeBoot, life) in stored.openLives {
            if lifeBoot != bootID {
                // Rule 4: the successor (same name) is counted from zero below.
                outcome.endedLives.append(EndedLife(life: life, end: .reboot, bootID: lifeBoot))
                outcome.events.append(ResetEvent(
                    .reboot, name: life.name, old: life.ifindex, new: byName[life.name]?.ifindex, loss: .unknown,
                    detail: "rebooted; traffic between the last save and the reboot is unknown; counted from zero since boot"))
            } else if let current = byIndex[life.ifindex] {
                // Rule 2: the same life; count what passed while we were stopped.
                handled.insert(current.ifindex)
                var continued = life
                outcome.append(advance(&continued, to: current, at: now, detectResets: true))
                lives[current.ifindex] = continued
            } else if let successor = byName[life.name], !handled.contains(successor.ifindex) {
                // Rule 3: recreated under the same name while we were stopped.
                handled.insert(successor.ifindex)
                outcome.endedLives.append(EndedLife(life: life, end: .removedWhileStopped, bootID: bootID))
                outcome.events.append(ResetEvent(
                    .recreated, name: life.name, old: life.ifindex, new: successor.ifindex, loss: .unknown,
                    detail: "recreated while the daemon was stopped; the old life's traffic after the last save is unknown"))
                outcome.append(beginFromZero(successor, at: now))
            } else {
                outcome.endedLives.append(EndedLife(life: life, end: .removedWhileStopped, bootID: bootID))
                outcome.events.append(ResetEvent(
                    .removedWhileStopped, name: life.name, old: life.ifindex, new: nil, loss: .unknown,
                    detail: "removed while the daemon was stopped; its traffic after the last save is unknown"))
            }
        }

        for link in links where !handled.contains(link.ifindex) {
            if stored.lastBootID == bootID {
                // Rule 5: absent at our last save in this boot, so it was
                // created while we were stopped: all of its counters are new.
                outcome.events.append(ResetEvent(
                    .appearedWhileStopped, name: link.name, old: nil, new: link.ifindex, loss: .none,
                    detail: "appeared while the daemon was stopped; counted from zero"))
                outcome.append(beginFromZero(link, at: now))
            } else if stored.knownNames.contains(link.name) {
                // Rule 4: a known interface after a reboot counts since boot.
                outcome.append(beginFromZero(link, at: now))
            } else {
                // Rule 5: first sight; never count what happened before we could know it.
                outcome.events.append(ResetEvent(
                    .historyUnknown, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
                    detail: "first seen now; traffic before this moment is not counted"))
                lives[link.ifindex] = TrackedLife(
                    ifindex: link.ifindex, name: link.name, counters: link.counters, sinceBoot: now.sinceBoot,
                    firstSeen: now.wall, lastSeen: now.wall)
            }
        }
        return outcome
    }

    // MARK: While running

    /// A fresh dump of every watched link (rules 6, 8 and, after an event
    /// overrun, 9). A life missing from an ordinary dump is left open: its
    /// RTM_DELLINK, with the final counters, is still to be read.
    public mutating func observe(dump links: [LinkSample], at now: Instant, eventsWereLost: Bool) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        var present: Set<Int32> = []
        for link in links {
            present.insert(link.ifindex)
            if var life = lives[link.ifindex] {
                outcome.append(advance(&life, to: link, at: now, detectResets: true))
                lives[link.ifindex] = life
            } else {
                // Created while we ran and its RTM_NEWLINK not read yet (or lost):
                // a new device, so all of its counters are new.
                outcome.append(beginFromZero(link, at: now))
            }
        }
        if eventsWereLost {
            for (ifindex, life) in lives where !present.contains(ifindex) {
                lives[ifindex] = nil
                outcome.endedLives.append(EndedLife(life: life, end: .eventsLost, bootID: bootID))
                outcome.events.append(ResetEvent(
                    .eventsLost, name: life.name, old: ifindex, new: nil, loss: .unknown,
                    detail: "link events were lost and the interface was gone at the re-dump; its traffic after the last sample is unknown"))
            }
        }
        return outcome
    }

    /// A link event from the kernel (rules 1 and 7). Event messages may be
    /// older than the last dump, so they never move a counter back and never
    /// signal a reset: only dumps judge resets.
    public mutating func observe(event: LinkEvent, at now: Instant) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        let link = event.link
        switch event.kind {
        case .new:
            if var life = lives[link.ifindex] {
                outcome.append(advance(&life, to: link, at: now, detectResets: false))
                lives[link.ifindex] = life
            } else {
                // Rule 1: created under our eyes. The message's counters are
                // the baseline: zero for a new device, the unseen past of one
                // moved in from another namespace.
                lives[link.ifindex] = TrackedLife(
                    ifindex: link.ifindex, name: link.name, counters: link.counters, sinceBoot: now.sinceBoot,
                    firstSeen: now.wall, lastSeen: now.wall)
            }
        case .deleted(let moved):
            guard var life = lives[link.ifindex] else { return outcome }
            // Rule 7: the message carries the final counters. veth clears its
            // peer before the snapshot (final rx reads 0): the guard keeps it.
            outcome.append(advance(&life, to: link, at: now, detectResets: false))
            lives[link.ifindex] = nil
            outcome.endedLives.append(EndedLife(life: life, end: moved ? .movedAway : .removed, bootID: bootID))
            if !moved {
                outcome.events.append(ResetEvent(
                    .removed, name: life.name, old: life.ifindex, new: nil, loss: .none,
                    detail: "deleted; its final counters were counted"))
            }
        }
        return outcome
    }

    // MARK: Rules shared by every path

    /// Starts a life whose counters all happened after boot or creation.
    private mutating func beginFromZero(_ link: LinkSample, at now: Instant) -> AccountingOutcome {
        var life = TrackedLife(
            ifindex: link.ifindex, name: link.name, counters: .zero, sinceBoot: 0, firstSeen: now.wall, lastSeen: now.wall)
        let outcome = advance(&life, to: link, at: now, detectResets: true)
        lives[link.ifindex] = life
        return outcome
    }

    /// Moves `life` to `sample`'s counters and returns what that adds.
    /// With `detectResets` a counter that went down is a wrap or a reset
    /// (rule 6); without it (event messages) it is a late message and the
    /// counter keeps its higher value.
    private func advance(_ life: inout TrackedLife, to sample: LinkSample, at now: Instant, detectResets: Bool) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        let target = detectResets ? sample.counters : sample.counters.fieldwiseMax(life.counters)
        let steps = zip(life.counters.fields, target.fields).map { CounterStep.between($0, $1, width: settings.width) }
        var delta = LinkCounters(fields: steps.map(\.delta))
        let resetFields = steps.indices.filter { if case .reset = steps[$0] { true } else { false } }
        if !resetFields.isEmpty {
            outcome.events.append(ResetEvent(
                .counterReset, name: sample.name, old: life.ifindex, new: sample.ifindex, loss: .unknown,
                detail: "counters went down within one life (\(resetFields.map { Self.fieldNames[$0] }.joined(separator: ", "))): driver reset; traffic just before it is unknown"))
        }
        // Rule 8: faster than the configured maximum is a counter glitch.
        let elapsed = max(now.sinceBoot - life.sinceBoot, 1)
        let allowedBytes = Double(settings.maxRateBitsPerSecond) / 8 * elapsed
        if Double(delta.rxBytes) > allowedBytes || Double(delta.txBytes) > allowedBytes {
            outcome.events.append(ResetEvent(
                .implausible, name: sample.name, old: life.ifindex, new: sample.ifindex,
                loss: .discarded(rxBytes: delta.rxBytes, txBytes: delta.txBytes),
                detail: "delta faster than MaxRate over \(Int(elapsed)) s discarded"))
            delta = .zero
        }
        life.counters = target
        life.sinceBoot = now.sinceBoot
        life.lastSeen = now.wall
        life.name = sample.name
        if delta != .zero {
            outcome.deltas.append(Delta(name: sample.name, ifindex: sample.ifindex, counters: delta))
        }
        return outcome
    }

    static let fieldNames = ["rx bytes", "tx bytes", "rx packets", "tx packets", "rx errors", "tx errors", "rx drops", "tx drops"]
}
