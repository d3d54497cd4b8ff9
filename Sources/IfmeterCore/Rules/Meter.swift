/// The daemon's rules as a value: which links are watched, what each sample and event adds, what
/// waits for the commit, what the metrics file publishes. No clock, sockets or files, so every rule
/// here is a table test that needs no root.
package struct Meter {
    package struct Policy {
        package var watchedClasses: Set<InterfaceClass>
        /// Names `ifmeter watch` and `unwatch` chose: they win over the class.
        package var chosen: [String: Bool] = [:]
        /// The class of a link, with the signal that decided it (sysfs in the daemon, a table in tests).
        package var classify: (LinkSample) -> Classification
        package var maxRateBitsPerSecond: UInt64

        package init(
            watchedClasses: Set<InterfaceClass>, maxRateBitsPerSecond: UInt64,
            classify: @escaping (LinkSample) -> Classification
        ) {
            self.watchedClasses = watchedClasses
            self.maxRateBitsPerSecond = maxRateBitsPerSecond
            self.classify = classify
        }

        /// The daemon's policy, and the CLI's for "now": classifying through the sysfs root and overrides.
        package init(_ configuration: Configuration) {
            let classifier = configuration.classifier
            self.init(
                watchedClasses: configuration.watchedClasses, maxRateBitsPerSecond: configuration.maxRateBitsPerSecond,
                classify: { classifier.classify($0) })
            chosen = configuration.chosen
        }
    }

    /// What an operation tells the loop to log.
    package struct Step {
        package var events: [ResetEvent] = []
        package var begun: [TrackedLife] = []
        package var renamed: [AccountingOutcome.Rename] = []

        mutating func append(_ other: Step) {
            events += other.events
            begun += other.begun
            renamed += other.renamed
        }
    }

    package private(set) var tracker: CounterTracker
    package private(set) var pending = PendingWrites()
    private var policy: Policy
    /// Classification by ifindex, for the name it had: sysfs is read once per link and name.
    private var classifications: [Int32: (name: String, classification: Classification)] = [:]
    /// Lives begun, ended or renamed and links appeared since the last commit, which a crash would lose
    /// untold (a rename counted from then on, an appeared link's past counted).
    private var lifeChangesSinceCommit = 0
    private var committedPresence: IfindexTable<String>?
    /// Each open life as last committed, so a commit rewrites only the rows that changed.
    private var committedLives: [Int32: TrackedLife] = [:]
    /// The links whose life or presence may differ from the commit: those named by the events since, or
    /// all after a dump, start or reload, so a journaled burst does not grow with the links present.
    private var touchedSinceCommit: Touched = .all
    enum Touched { case all, only(Set<Int32>) }

    // The ledger the metrics file publishes: the store's totals of names seen within MetricsKeepGoneSec= plus every
    // delta since, committed or not. A name's total only grows; one gone longer leaves, adopted from the store on return.
    package private(set) var totals: [String: LinkCounters] = [:]
    package private(set) var resetCounts: [String: [String: UInt64]] = [:]
    package private(set) var interfaceInfo: [String: InterfaceInfo] = [:]
    /// Names whose class was recorded in this run.
    private var recordedNames: Set<String> = []
    private var historyLoaded: Set<String> = []
    /// Names counted whose stored totals the ledger lacks: looked up before the next commit writes them.
    private var namesNeedingHistory: Set<String> = []
    /// When each name last had an open life (wall clock), to drop the series of interfaces gone for good.
    private var lastSeen: [String: Int64] = [:]
    /// A new name is shown at zero first, so PromQL's increase() sees its first interval's traffic.
    private var publishedNames: Set<String> = []

    package init(
        bootID: String, namespace: NamespaceCookie, width: CounterWidth = .bits64, policy: Policy,
        storedInterfaces: [StoredInterface] = [], storedResetCounts: [String: [String: UInt64]] = [:]
    ) {
        tracker = CounterTracker(
            bootID: bootID, namespace: namespace, settings: .init(width: width, maxRateBitsPerSecond: policy.maxRateBitsPerSecond))
        self.policy = policy
        for interface in storedInterfaces {
            historyLoaded.insert(interface.name)
            totals[interface.name] = interface.totals
            lastSeen[interface.name] = interface.lastSeen
            publishedNames.insert(interface.name)
            interfaceInfo[interface.name] = InterfaceInfo(
                interfaceClass: interface.interfaceClass, signal: interface.signal, kind: interface.kind)
        }
        resetCounts = storedResetCounts
    }

    /// Forgets names gone longer than `keepGone` (metrics file too); one that comes back is `adopt`ed from the store.
    package mutating func forgetGone(at now: Int64, keepGone: Double) {
        let oldest = now - Int64(min(keepGone, 1e12))
        // A name with writes still pending is kept whatever its age.
        let current = Set(tracker.lives.values.map(\.name)).union(pending.deltas.keys.map(\.name))
        let gone = totals.keys.filter { !current.contains($0) && (lastSeen[$0] ?? .min) < oldest }
        for name in gone {
            totals[name] = nil
            interfaceInfo[name] = nil
            resetCounts[name] = nil
            lastSeen[name] = nil
            publishedNames.remove(name)
            recordedNames.remove(name)
            historyLoaded.remove(name)
        }
    }

    /// What waits for the commit, dated anew after the wall clock stepped by `seconds`.
    package mutating func redatePending(by seconds: Int64) { pending.redate(by: seconds) }

    /// The store's totals of `name` after `ifmeter forget|rename|merge` changed them, right after a commit
    /// (nothing pending): the ledger takes them again. A moved name's series ends; a target's jumps.
    package mutating func storeEdited(_ name: String, stored: StoredInterface?, resets: [String: UInt64]) {
        guard let stored else {
            totals[name] = nil
            interfaceInfo[name] = nil
            resetCounts[name] = nil
            publishedNames.remove(name)
            historyLoaded.remove(name)
            return
        }
        totals[name] = stored.totals
        resetCounts[name] = resets.isEmpty ? nil : resets
        interfaceInfo[name] = InterfaceInfo(interfaceClass: stored.interfaceClass, signal: stored.signal, kind: stored.kind)
        historyLoaded.insert(name)
        namesNeedingHistory.remove(name)
    }

    /// Names counted with no history in the ledger, looked up before the next commit: after it the store
    /// would hold what the ledger counted, and adopting it would count it twice.
    package var namesWithoutHistory: [String] { namesNeedingHistory.sorted() }

    /// What the store holds of a name that came back (nil: nothing), added under what was counted since.
    package mutating func adopt(_ name: String, stored: StoredInterface?, resets: [String: UInt64]) {
        historyLoaded.insert(name)
        namesNeedingHistory.remove(name)
        guard let stored else { return }
        totals[name, default: .zero] += stored.totals
        for (reason, count) in resets { resetCounts[name, default: [:]][reason, default: 0] += count }
        if interfaceInfo[name] == nil {
            interfaceInfo[name] = InterfaceInfo(interfaceClass: stored.interfaceClass, signal: stored.signal, kind: stored.kind)
        }
        publishedNames.insert(name)
    }

    package var lives: IfindexTable<TrackedLife> { tracker.lives }

    // MARK: Operations

    /// Reconciles the stored state with every link present at start. `unread` (the previous process's queued
    /// events; `overran`: some lost) is applied first to the state it saved, if `CounterTracker.isContinuation(of:)`.
    /// `readAfterDump`: the events read right after the dump (`split(afterDump:present:)`).
    package mutating func start(
        stored: StoredState, links listed: [LinkSample], at now: Instant,
        unread: [LinkEvent] = [], overran: Bool = false, readAfterDump: [LinkEvent] = []
    ) -> Step {
        // The first of an ifindex listed twice, for the watch decision and the record alike.
        let links = listed.firstOfEachIfindex
        touchedSinceCommit = .all
        for entry in stored.openLives { lastSeen[entry.life.name] = max(lastSeen[entry.life.name] ?? .min, entry.life.lastSeen) }
        let sameRun = stored.lastBootID == tracker.bootID && NamespaceCookie.same(stored.lastNamespace, tracker.namespace)
        // What the store holds: the first commit writes the difference.
        committedPresence = sameRun ? stored.presentLinks : nil
        let (deletedBeforeDump, afterDump) = Self.split(afterDump: readAfterDump, present: Set(links.map(\.ifindex)))
        let beforeDump = unread + deletedBeforeDump
        var step = Step()
        var reconciled = stored
        if !beforeDump.isEmpty, tracker.resume(stored) {
            step = apply(events: beforeDump, at: now, missed: overran ? .lost : .beforeStart)
            var deleted = Set<Int32>()
            for event in beforeDump { if case .deleted = event.kind { deleted.insert(event.link.ifindex) } }
            reconciled = tracker.suspended(onto: stored, deleted: deleted)
        }
        let watched = watchedIndexes(links)
        step.append(record(
            tracker.start(stored: reconciled, links: links, at: now, isWatched: { watched.contains($0.ifindex) }), links: links, at: now,
            everyName: true))
        if !afterDump.isEmpty { step.append(apply(events: afterDump, at: now, missed: overran ? .lost : .beforeStart)) }
        return step
    }

    /// Splits the events read right after the start-up dump at it. A link the dump misses was gone
    /// before it: its messages up to its deletion come before the dump, so a life that ended between
    /// the first read and the dump is counted to its final counters, not ended as unknown.
    package static func split(afterDump events: [LinkEvent], present: Set<Int32>) -> (beforeDump: [LinkEvent], afterDump: [LinkEvent]) {
        var deletion: [Int32: Int] = [:]
        for (position, event) in events.enumerated() where !present.contains(event.link.ifindex) && deletion[event.link.ifindex] == nil {
            if case .deleted = event.kind { deletion[event.link.ifindex] = position }
        }
        var before: [LinkEvent] = []
        var after: [LinkEvent] = []
        for (position, event) in events.enumerated() {
            if let end = deletion[event.link.ifindex], position <= end { before.append(event) } else { after.append(event) }
        }
        return (before, after)
    }

    /// Link events, in arrival order; `missed`: why messages before them may be missing (nil: none can).
    package mutating func apply(events: [LinkEvent], at now: Instant, missed: CounterTracker.MissedMessages? = nil) -> Step {
        var logged = Step()
        // What a life ended here by a rename out of watch was counted up to: messages may predate the last
        // dump, and a stale rename back must not begin below it.
        var countedUpTo = [Int32: LinkCounters]()  // not `[:]`: see `PendingWrites.deltas`
        for var event in events {
            touch(event.link.ifindex)
            switch event.kind {
            case .deleted:
                let link = event.link
                countedUpTo[link.ifindex] = nil
                // Only a new link needs a class: a deleted one's is dropped, not read again.
                classifications[link.ifindex] = nil
                logged.append(record(tracker.observe(event: event, at: now), links: [link], at: now))
            case .new:
                if let counted = countedUpTo[event.link.ifindex] { event.link.counters = counted.later(event.link.counters, width: tracker.settings.width) }
                let link = event.link
                // An ifindex not present is a new device, whatever was cached under it.
                let appeared = tracker.presentLinks[link.ifindex] == nil
                if appeared { classifications[link.ifindex] = nil }
                let renamed = renamedLives([link])
                let watched = isWatched(link)
                let ending = endLivesRenamedOutOfWatch(renamed, fromEvent: true, at: now)
                logged.append(ending.step)
                for ended in ending.at { countedUpTo[ended.ifindex] = ended.counters }
                logged.append(record(tracker.observe(event: event, at: now, isWatched: { _ in watched }, missed: missed), links: [link], at: now))
                renamedLivesObserved(renamed)
                if appeared { linkAppeared() }
            }
        }
        return logged
    }

    /// A dump of every link; `eventsWereLost` after an event overrun.
    package mutating func apply(dump links: [LinkSample], eventsWereLost: Bool, at now: Instant) -> Step {
        touchedSinceCommit = .all
        if eventsWereLost {
            let present = Set(links.map(\.ifindex))
            classifications = classifications.filter { present.contains($0.key) }
        }
        // Open lives stay counted unless renamed: only the others need a decision.
        var renamed: [LinkSample] = []
        var uncounted: [LinkSample] = []
        var cursor = IfindexTable<TrackedLife>.Cursor()
        for link in links {
            guard let slot = tracker.lives.slot(of: link.ifindex, from: &cursor) else { uncounted.append(link); continue }
            if tracker.lives[slot: slot].name != link.name { renamed.append(link) }
        }
        let ending = endLivesRenamedOutOfWatch(renamed, fromEvent: false, at: now)
        var logged = ending.step
        // A life just ended by its rename: its link is uncounted now.
        if !ending.at.isEmpty { uncounted += renamed.filter { tracker.lives[$0.ifindex] == nil } }
        let appeared = eventsWereLost && links.contains { tracker.presentLinks[$0.ifindex] == nil }
        let watched = watchedIndexes(uncounted)
        let outcome = tracker.observe(dump: links, at: now, eventsWereLost: eventsWereLost, isWatched: { watched.contains($0.ifindex) })
        logged.append(record(outcome, links: links, at: now))
        renamedLivesObserved(renamed)
        if appeared { linkAppeared() }
        return logged
    }

    /// Until a commit records a link present, a restart would take it for one created while stopped and
    /// count its past (another namespace's traffic), watched or not. A link that goes needs no haste.
    private mutating func linkAppeared() { lifeChangesSinceCommit += 1 }

    private mutating func touch(_ ifindex: Int32) {
        guard case .only(var touched) = touchedSinceCommit else { return }
        // The set's only reference is then `touched`: inserting copies nothing.
        touchedSinceCommit = .all
        touched.insert(ifindex)
        touchedSinceCommit = .only(touched)
    }

    private func renamedLives(_ links: [LinkSample]) -> [LinkSample] {
        links.filter { link in tracker.lives[link.ifindex].map { $0.name != link.name } ?? false }
    }

    /// A life renamed to a name the policy does not watch ends under the name its traffic passed under,
    /// so the ignored name gets no row, event or series. An event may be older than the last dump: lower
    /// counters never move the life back. Returns each ended life's link at what it was counted up to.
    private mutating func endLivesRenamedOutOfWatch(_ renamed: [LinkSample], fromEvent: Bool, at now: Instant) -> (step: Step, at: [LinkSample]) {
        let asBefore = renamed.filter { !isWatched($0) }.compactMap { link -> LinkSample? in
            guard let life = tracker.lives[link.ifindex] else { return nil }
            var before = link
            before.name = life.name
            if fromEvent { before.counters = life.counters.later(link.counters, width: tracker.settings.width) }
            return before
        }
        guard !asBefore.isEmpty else { return (Step(), []) }
        return (record(tracker.rewatch(links: asBefore, at: now, isWatched: { _ in false }), links: asBefore, at: now), asBefore)
    }

    /// A rename is committed at once, or a restart would meet the ifindex under an unknown name.
    private mutating func renamedLivesObserved(_ renamed: [LinkSample]) {
        lifeChangesSinceCommit += renamed.count
    }

    /// A reload's policy on a fresh dump: lives no longer watched end, newly watched links start now.
    package mutating func reconfigure(_ newPolicy: Policy, links: [LinkSample], at now: Instant) -> Step {
        touchedSinceCommit = .all
        policy = newPolicy
        tracker.settings.maxRateBitsPerSecond = newPolicy.maxRateBitsPerSecond
        classifications.removeAll()
        recordedNames.removeAll()
        let watched = watchedIndexes(links)
        return record(tracker.rewatch(links: links, at: now, isWatched: { watched.contains($0.ifindex) }), links: links, at: now, everyName: true)
    }

    /// The loop commits or journals a life change at once, so a crash loses at most a tail the restart can tell.
    package var hasUncommittedLifeChanges: Bool { lifeChangesSinceCommit > 0 }

    package var nextCommit: CommitBatch { commitBatch(comparing: touchedSinceCommit) }

    /// The next commit, comparing only the lives and links `touched` (`.all`: every one; tests hold both equal).
    func commitBatch(comparing touched: Touched) -> CommitBatch {
        let present = tracker.presentLinks
        // A life that ended since then may have left its ifindex to a new one.
        let ended = Set(pending.endedLives.map(\.ended.life.ifindex))
        func changed(_ life: TrackedLife) -> Bool {
            guard let stored = committedLives[life.ifindex], !ended.contains(life.ifindex) else { return true }
            return stored.counters != life.counters || stored.name != life.name || stored.firstSeen != life.firstSeen
        }
        let lives = switch touched {
        case .all: tracker.lives.values.filter(changed)
        case .only(let touched): touched.sorted().compactMap { tracker.lives[$0] }.filter(changed)
        }
        let presence = switch (touched, committedPresence) {
        case (.only(let touched), let previous?): PresenceUpdate(present: present, previous: previous, differingAt: touched)
        default: PresenceUpdate(present: present, previous: committedPresence)
        }
        return CommitBatch(pending: pending, changedLives: lives, presence: presence.isEmpty ? nil : presence)
    }

    /// `commit` was written (to the store or the journal): its pending writes are done.
    package mutating func committed(_ commit: CommitBatch) {
        pending = PendingWrites()
        touchedSinceCommit = .only([])
        lifeChangesSinceCommit = 0
        if let presence = commit.presence { committedPresence = presence.present }
        for life in commit.changedLives { committedLives[life.ifindex] = life }
        // A life leaves the tracker only by ending: its row is closed now.
        for (ended, _) in commit.pending.endedLives where tracker.lives[ended.life.ifindex] == nil {
            committedLives[ended.life.ifindex] = nil
        }
    }

    package var metricsInterfaces: [MetricsInterface] {
        // Of two open lives under one name (the older's RTM_DELLINK unread), the newer's ifindex is shown.
        var newest: [String: TrackedLife] = [:]
        for life in tracker.lives.values where newest[life.name].map({ ($0.firstSeen, $0.ifindex) < (life.firstSeen, life.ifindex) }) ?? true {
            newest[life.name] = life
        }
        let current = newest.mapValues(\.ifindex)
        return totals.keys.sorted().map { name in
            MetricsInterface(
                device: name, info: interfaceInfo[name] ?? InterfaceInfo(interfaceClass: .other, signal: "unknown", kind: ""),
                ifindex: current[name], totals: totals[name] ?? .zero, resets: resetCounts[name] ?? [:])
        }
    }

    /// Interfaces counted within `keepGone` s, each new one at zero first unless not `zeroFirst` (for a last file).
    package mutating func publication(at now: Int64, keepGone: Double, zeroFirst: Bool = true) -> [MetricsInterface] {
        for life in tracker.lives.values { lastSeen[life.name] = now }
        let oldest = now - Int64(min(keepGone, 1e12))
        return metricsInterfaces.filter { (lastSeen[$0.device] ?? .min) >= oldest || $0.ifindex != nil }.map { interface in
            guard zeroFirst, !publishedNames.contains(interface.device) else { return interface }
            publishedNames.insert(interface.device)
            var first = interface
            first.totals = .zero
            first.resets = [:]
            return first
        }
    }

    // MARK: Rules

    /// Decided before the tracker runs, so it stays a pure function of its arguments.
    private mutating func watchedIndexes(_ links: [LinkSample]) -> Set<Int32> {
        var watched: Set<Int32> = []
        for link in links where isWatched(link) { watched.insert(link.ifindex) }
        return watched
    }

    /// A link is counted when its name was chosen (`ifmeter watch`), else when its class is watched.
    private mutating func isWatched(_ link: LinkSample) -> Bool {
        if let chosen = policy.chosen[link.name] { return chosen }
        return classification(of: link).interfaceClass.map(policy.watchedClasses.contains) ?? false
    }

    private mutating func classification(of link: LinkSample) -> Classification {
        if let cached = classifications[link.ifindex], cached.name == link.name { return cached.classification }
        let classification = policy.classify(link)
        classifications[link.ifindex] = (link.name, classification)
        return classification
    }

    /// Adds an outcome to the pending writes and the ledger; returns what to log. `everyName`: `links` are
    /// every link (start, reload), when any counted name may not be recorded yet.
    private mutating func record(_ outcome: AccountingOutcome, links: [LinkSample], at now: Instant, everyName: Bool = false) -> Step {
        lifeChangesSinceCommit += outcome.begunLives.count + outcome.endedLives.count
        // Most samples begin no life and count under known names: the links by ifindex are built only if needed.
        let needsLinks = !outcome.begunLives.isEmpty || outcome.deltas.contains { !recordedNames.contains($0.name) }
        let byIndex = needsLinks ? Dictionary(links.map { ($0.ifindex, $0) }, uniquingKeysWith: { first, _ in first }) : Dictionary()
        for life in outcome.begunLives { noteInterface(named: life.name, link: byIndex[life.ifindex], force: true) }
        for life in outcome.begunLives { lastSeen[life.name] = now.wall }
        for ended in outcome.endedLives { lastSeen[ended.life.name] = max(lastSeen[ended.life.name] ?? .min, ended.life.lastSeen) }
        // A counted life under a name not recorded yet (after start or a reload, only a rename's) gets its class
        // recorded. The life's name, not the link's: a reload's dump may show a rename only the next sample counts.
        if everyName || !outcome.renames.isEmpty {
            let renamed = Set(outcome.renames.map(\.ifindex))
            for link in links where everyName || renamed.contains(link.ifindex) {
                guard let countedName = tracker.lives[link.ifindex]?.name, !recordedNames.contains(countedName) else { continue }
                var asCounted = link
                asCounted.name = countedName
                noteInterface(named: countedName, link: asCounted, force: false)
            }
        }
        for delta in outcome.deltas where !recordedNames.contains(delta.name) {
            noteInterface(named: delta.name, link: byIndex[delta.ifindex], force: false)
        }
        for event in outcome.events {
            resetCounts[event.name, default: [:]][event.reason.rawValue, default: 0] += 1
        }
        for delta in outcome.deltas { totals[delta.name, default: .zero] += delta.counters }
        pending.record(outcome, at: now)
        return Step(events: outcome.events, begun: outcome.begunLives, renamed: outcome.renames)
    }

    private mutating func noteInterface(named name: String, link: LinkSample?, force: Bool) {
        if !historyLoaded.contains(name) { namesNeedingHistory.insert(name) }
        guard let link, force || !recordedNames.contains(name) else { return }
        let info = InterfaceInfo(classification(of: link), of: link)
        recordedNames.insert(name)
        pending.interfaces[name] = info
        interfaceInfo[name] = info
        if totals[name] == nil { totals[name] = .zero }
    }
}
