/// One interface life being counted: (boot id, namespace, ifindex); the name is only its label.
package struct TrackedLife: Sendable, Hashable {
    package var ifindex: Int32
    package var name: String
    /// The kernel counters already accounted for.
    package var counters: LinkCounters
    /// When `counters` were read (CLOCK_BOOTTIME seconds), for rates.
    package var sinceBoot: Double
    package var firstSeen: Int64
    package var lastSeen: Int64

    package init(ifindex: Int32, name: String, counters: LinkCounters, sinceBoot: Double, firstSeen: Int64, lastSeen: Int64) {
        self.ifindex = ifindex
        self.name = name
        self.counters = counters
        self.sinceBoot = sinceBoot
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// A network namespace, named by its netns cookie (SO_NETNS_COOKIE): unique within a boot,
/// never reused. Zero is "not known" (a kernel before 5.14, an older store) and matches any.
package typealias NamespaceCookie = UInt64

extension NamespaceCookie {
    /// Whether two cookies name the same namespace; 0 (unknown) matches any.
    package static func same(_ a: NamespaceCookie, _ b: NamespaceCookie) -> Bool { a == 0 || b == 0 || a == b }
}

/// A life the store still had open at its last commit.
package struct StoredLife: Sendable, Hashable {
    package var bootID: String
    package var namespace: NamespaceCookie
    package var life: TrackedLife

    package init(bootID: String, namespace: NamespaceCookie = 0, life: TrackedLife) {
        self.bootID = bootID
        self.namespace = namespace
        self.life = life
    }
}

/// A daemon's stop with its final sample committed: what the next boot did not see is bounded.
package struct CleanStop: Sendable, Equatable {
    package var bootID: String
    package var at: Int64
    package var linksUp: Set<Int32>

    package init(bootID: String, at: Int64, linksUp: Set<Int32>) {
        self.bootID = bootID
        self.at = at
        self.linksUp = linksUp
    }

    /// As the store's meta keeps it: "BOOT TIME IFINDEX,IFINDEX".
    package var text: String { "\(bootID) \(at) \(linksUp.sorted().map(String.init).joined(separator: ","))" }

    package init?(text: String) {
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 3, !words[0].isEmpty, let at = Int64(words[1]) else { return nil }
        var up: Set<Int32> = []
        for index in words[2].split(separator: ",") {
            guard let ifindex = Int32(index) else { return nil }
            up.insert(ifindex)
        }
        self.init(bootID: String(words[0]), at: at, linksUp: up)
    }
}

/// What the store remembers when the daemon starts.
package struct StoredState: Sendable {
    /// The boot id of the last commit; nil for a new store.
    package var lastBootID: String?
    /// The namespace of the last commit (0: not recorded).
    package var lastNamespace: NamespaceCookie
    package var openLives: [StoredLife]
    package var knownNames: Set<String>
    /// Every link present at the last commit, watched or not, by ifindex; nil when the store
    /// lacks the record, and then absence cannot be told from "present but not watched".
    package var presentLinks: IfindexTable<String>?
    /// The ifindexes of lives that ended in the last commit's boot and namespace.
    package var endedIndexes: Set<Int32>
    /// The last commit was a daemon's clean stop: when, and which links were up then.
    package var cleanStop: CleanStop?

    package init(
        lastBootID: String? = nil, lastNamespace: NamespaceCookie = 0, openLives: [StoredLife] = [],
        knownNames: Set<String> = [], presentLinks: IfindexTable<String>? = nil,
        endedIndexes: Set<Int32> = [], cleanStop: CleanStop? = nil
    ) {
        self.cleanStop = cleanStop
        self.lastBootID = lastBootID
        self.lastNamespace = lastNamespace
        self.openLives = openLives
        self.knownNames = knownNames
        self.presentLinks = presentLinks
        self.endedIndexes = endedIndexes
    }
}

/// Bytes and packets to add to an interface's totals.
package struct Delta: Sendable, Hashable {
    package var name: String
    package var ifindex: Int32
    package var counters: LinkCounters

    package init(name: String, ifindex: Int32, counters: LinkCounters) {
        self.name = name
        self.ifindex = ifindex
        self.counters = counters
    }
}

/// Why a life stopped being counted.
package enum LifeEnd: String, Sendable, CaseIterable {
    case removed, movedAway = "moved-away", removedWhileStopped = "removed-while-stopped"
    case reboot, eventsLost = "events-lost"
    /// Watch= or an override no longer selects it; the link lives on.
    case unwatched
    /// The daemon now runs in another network namespace.
    case namespaceChanged = "namespace-changed"
    /// Its ifindex came back under another name after a stop.
    case renamedOrReplaced = "renamed-or-replaced"
}

/// A life that stopped being counted, with its boot (one ended by a reboot belongs to the boot before).
package struct EndedLife: Sendable, Hashable {
    package var life: TrackedLife
    package var end: LifeEnd
    package var bootID: String
    package var namespace: NamespaceCookie

    package init(life: TrackedLife, end: LifeEnd, bootID: String, namespace: NamespaceCookie) {
        self.life = life
        self.end = end
        self.bootID = bootID
        self.namespace = namespace
    }
}

/// One accounting step's result: what to add, what to log, which lives began and ended.
package struct AccountingOutcome: Sendable {
    package var deltas: [Delta] = []
    package var events: [ResetEvent] = []
    package var endedLives: [EndedLife] = []
    /// Lives begun: until a commit records them, a crash would lose them without a trace.
    package var begunLives: [TrackedLife] = []
    /// Lives counted on under a new name: no reset, but why one name's totals stop and another's start.
    package var renames: [Rename] = []

    package struct Rename: Sendable, Equatable {
        package var ifindex: Int32
        package var from: String
        package var to: String
    }

    package init() {}

    mutating func append(_ other: AccountingOutcome) {
        deltas += other.deltas
        events += other.events
        endedLives += other.endedLives
        begunLives += other.begunLives
        renames += other.renames
    }
}
