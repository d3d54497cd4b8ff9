/// The daemon's rules as a value: which links are watched, what each sample
/// and each link event adds, what waits for the next commit, and what the
/// metrics file publishes. No clock, no sockets, no files: the loop
/// (`Daemon`) reads the kernel and the time, hands them in, and writes what
/// comes out. So every rule here is a table test that needs no root.
package struct Meter {
    /// What a configuration decides about counting.
    package struct Policy {
        package var watchedClasses: Set<InterfaceClass>
        /// The class of a link, with the signal that decided it (reads sysfs
        /// in the daemon; a table in tests).
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

        /// What a configuration decides, classifying through its sysfs root
        /// and overrides: the daemon's policy, and the CLI's for "now".
        package init(_ configuration: Configuration) {
            let classifier = configuration.classifier
            self.init(
                watchedClasses: configuration.watchedClasses, maxRateBitsPerSecond: configuration.maxRateBitsPerSecond,
                classify: { classifier.classify($0) })
        }
    }

    /// What an operation tells the loop to log.
    package struct Step {
        /// Reset events, in order.
        package var events: [ResetEvent] = []
        /// Lives that started being counted.
        package var begun: [TrackedLife] = []
        /// Lives counted on under a new name.
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
    /// Each link's classification by ifindex, for the name it had when
    /// classified: sysfs is read once per link and name, not per sample.
    private var classifications: [Int32: (name: String, classification: Classification)] = [:]
    /// Lives begun, ended or renamed, and links appeared, since the last
    /// commit: until it, a crash loses them untold (or, for a rename, counts
    /// them from then on; for a link, counts its past).
    private var lifeChangesSinceCommit = 0
    private var committedPresence: IfindexTable<String>?
    /// Each open life as the store has it since the last commit, so a
    /// commit rewrites only the rows that changed: a VPN life coming and
    /// going beside fifty idle links writes its own row, not fifty-one.
    private var committedLives: [Int32: TrackedLife] = [:]
    /// The links whose life or presence may differ from what was committed:
    /// those named by the link events read since the last commit, or all of
    /// them after anything else (a dump, a start, a reload). Under churn a
    /// burst of events is journaled every two seconds beside dozens of
    /// links that did not change; comparing only these keeps that append
    /// from growing with the links present.
    private var touchedSinceCommit: Touched = .all
    enum Touched { case all, only(Set<Int32>) }

    // The ledger the metrics file publishes: the store's totals of the
    // interfaces of the last MetricsKeepGoneSec= plus every delta counted
    // since, committed or not. A name's total only ever grows; a name gone
    // for longer leaves the ledger and is adopted from the store on return.
    package private(set) var totals: [String: LinkCounters] = [:]
    package private(set) var resetCounts: [String: [String: UInt64]] = [:]
    package private(set) var interfaceInfo: [String: InterfaceInfo] = [:]
    /// Names whose class was recorded in this run.
    private var recordedNames: Set<String> = []
    /// Names whose stored totals the ledger includes.
    private var historyLoaded: Set<String> = []
    /// Names counted in this step whose stored totals the ledger does not
    /// include yet: looked up before the next commit, which would write them.
    private var namesNeedingHistory: Set<String> = []
    /// When each name last had an open life (wall clock), for dropping the
    /// series of interfaces gone for good.
    private var lastSeen: [String: Int64] = [:]
    /// Names the metrics file has shown: a new one is shown at zero first,
    /// so PromQL's increase() sees its first interval's traffic.
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

    /// Forgets what the ledger keeps of names gone longer than `keepGone`
    /// (they have left the metrics file too), so memory follows the links
    /// of the last `keepGone`, not every name ever seen. A name that comes
    /// back is `adopt`ed from the store again.
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

    /// Names counted since the last look-up that the ledger holds no
    /// history for: forgotten while gone, or never seen. The loop looks them
    /// up in the store before its next commit (after it, the store would
    /// already hold what the ledger counted, and adopting it would count it
    /// twice).
    package var namesWithoutHistory: [String] { namesNeedingHistory.sorted() }

    /// What the store holds of a name that came back (nil: nothing), added
    /// under what was counted since it came back.
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

    /// Open lives by ifindex.
    package var lives: IfindexTable<TrackedLife> { tracker.lives }

    // MARK: Operations

    /// Reconciles the store's state with every link present at start.
    /// `unread`: the events the previous process left queued in the event
    /// socket the service manager kept for it, read before `links` were
    /// listed; `overran`: some were lost to an overrun. They are applied
    /// first, to the state that process saved, as it would have applied
    /// them, when that state is theirs to follow
    /// (`CounterTracker.isContinuation(of:)`). Messages before them may be
    /// missing even without an overrun (a process read them and stopped
    /// before saving), so a link first seen with traffic is not taken for
    /// one moved in.
    package mutating func start(
        stored: StoredState, links listed: [LinkSample], at now: Instant,
        unread: [LinkEvent] = [], overran: Bool = false
    ) -> Step {
        // The listings the tracker takes, for the watch decision and the
        // record alike: the first of an ifindex listed twice.
        let links = listed.firstOfEachIfindex
        touchedSinceCommit = .all
        for entry in stored.openLives { lastSeen[entry.life.name] = max(lastSeen[entry.life.name] ?? .min, entry.life.lastSeen) }
        let sameRun = stored.lastBootID == tracker.bootID && NamespaceCookie.same(stored.lastNamespace, tracker.namespace)
        // What the store holds: the first commit writes the difference.
        committedPresence = sameRun ? stored.presentLinks : nil
        var step = Step()
        var reconciled = stored
        if !unread.isEmpty, tracker.resume(stored) {
            step = apply(events: unread, at: now, missed: overran ? .lost : .beforeStart)
            var deleted = Set<Int32>()
            for event in unread { if case .deleted = event.kind { deleted.insert(event.link.ifindex) } }
            reconciled = tracker.suspended(onto: stored, deleted: deleted)
        }
        let watched = watchedIndexes(links)
        step.append(record(
            tracker.start(stored: reconciled, links: links, at: now, isWatched: { watched.contains($0.ifindex) }), links: links, at: now,
            everyName: true))
        return step
    }

    /// Link events, in arrival order; `missed`: why messages before them
    /// may be missing (nil: none can be).
    package mutating func apply(events: [LinkEvent], at now: Instant, missed: CounterTracker.MissedMessages? = nil) -> Step {
        var logged = Step()
        // What a life ended here (renamed out of the watched set) was counted
        // up to, by ifindex: messages may be older than the last dump, and a
        // later one watching the link again (a stale rename back) must not
        // begin below what was counted already.
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
        // Open lives stay counted unless renamed: only the others need a
        // decision.
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

    /// A link appeared, watched or not: until a commit records it present,
    /// a restart would take it for one created while stopped and count its
    /// past from zero (a device moved in: another namespace's traffic), even
    /// where Watch= only now selects it. A link that goes needs no haste:
    /// left recorded, it can only make the restart count less.
    private mutating func linkAppeared() { lifeChangesSinceCommit += 1 }

    private mutating func touch(_ ifindex: Int32) {
        guard case .only(var touched) = touchedSinceCommit else { return }
        // The set's only reference is then `touched`: inserting copies nothing.
        touchedSinceCommit = .all
        touched.insert(ifindex)
        touchedSinceCommit = .only(touched)
    }

    /// Counted lives that `links` show under another name.
    private func renamedLives(_ links: [LinkSample]) -> [LinkSample] {
        links.filter { link in tracker.lives[link.ifindex].map { $0.name != link.name } ?? false }
    }

    /// Before a rename is observed: a life renamed to a name the policy does
    /// not watch (an ignore override) is counted up to the rename and ends
    /// under the name its traffic passed under, so the ignored name gets no
    /// row, event or series of its own. An event message may be older
    /// than the last dump: counters below the life's are no reset, so
    /// they never move the life back (as `CounterTracker.observe(event:)`).
    /// `at`: each ended life's link, at the counters it was counted up to.
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

    /// After a rename: the new name is committed at once (a restart would
    /// otherwise meet the ifindex under an unknown name and count it from
    /// then on).
    private mutating func renamedLivesObserved(_ renamed: [LinkSample]) {
        lifeChangesSinceCommit += renamed.count
    }

    /// A new policy (a reload) applied to a fresh dump: lives no longer
    /// watched end, links newly watched start from their current counters.
    package mutating func reconfigure(_ newPolicy: Policy, links: [LinkSample], at now: Instant) -> Step {
        touchedSinceCommit = .all
        policy = newPolicy
        tracker.settings.maxRateBitsPerSecond = newPolicy.maxRateBitsPerSecond
        classifications.removeAll()
        recordedNames.removeAll()
        let watched = watchedIndexes(links)
        return record(tracker.rewatch(links: links, at: now, isWatched: { watched.contains($0.ifindex) }), links: links, at: now, everyName: true)
    }

    /// Whether a life began or ended, or a link appeared, since the last
    /// commit: the loop commits (or journals) at once rather than at the
    /// commit interval, so a crash can lose at most a tail, and the restart
    /// can tell.
    package var hasUncommittedLifeChanges: Bool { lifeChangesSinceCommit > 0 }

    /// Everything the next commit writes.
    package var nextCommit: CommitBatch { commitBatch(comparing: touchedSinceCommit) }

    /// The next commit, comparing with what was committed the lives and
    /// links `touched` (`.all`: every one; tests hold the two equal).
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

    /// `commit` was written (to the store or the journal): its pending
    /// writes are done.
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

    /// Every interface the ledger knows, for the metrics file.
    package var metricsInterfaces: [MetricsInterface] {
        // Of two open lives under one name (the older one's RTM_DELLINK
        // still unread), the ifindex shown is the newer one's.
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

    /// What the metrics file shows now: interfaces counted now or within
    /// `keepGone` seconds, each new one at zero the first time (unless not
    /// `zeroFirst`: a last file, which must show what the store holds).
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

    /// The links among `links` that are counted. Decided before the tracker
    /// runs, so the tracker stays a pure function of its arguments.
    private mutating func watchedIndexes(_ links: [LinkSample]) -> Set<Int32> {
        var watched: Set<Int32> = []
        for link in links where isWatched(link) { watched.insert(link.ifindex) }
        return watched
    }

    /// A link is counted when its class is watched; an ignored link never is.
    private mutating func isWatched(_ link: LinkSample) -> Bool {
        guard let interfaceClass = classification(of: link).interfaceClass else { return false }
        return policy.watchedClasses.contains(interfaceClass)
    }

    private mutating func classification(of link: LinkSample) -> Classification {
        if let cached = classifications[link.ifindex], cached.name == link.name { return cached.classification }
        let classification = policy.classify(link)
        classifications[link.ifindex] = (link.name, classification)
        return classification
    }

    /// Adds an outcome to the pending writes and the ledger; returns what to log.
    /// `everyName`: `links` are every link, at start or after a reload,
    /// when any counted name may not be recorded yet.
    private mutating func record(_ outcome: AccountingOutcome, links: [LinkSample], at now: Instant, everyName: Bool = false) -> Step {
        lifeChangesSinceCommit += outcome.begunLives.count + outcome.endedLives.count
        // Most samples begin no life and count under known names: the
        // links by ifindex are only built when something needs them.
        let needsLinks = !outcome.begunLives.isEmpty || outcome.deltas.contains { !recordedNames.contains($0.name) }
        let byIndex = needsLinks ? Dictionary(links.map { ($0.ifindex, $0) }, uniquingKeysWith: { first, _ in first }) : Dictionary()
        // A name's class is recorded when a life starts under it.
        for life in outcome.begunLives { noteInterface(named: life.name, link: byIndex[life.ifindex], force: true) }
        for life in outcome.begunLives { lastSeen[life.name] = now.wall }
        for ended in outcome.endedLives { lastSeen[ended.life.name] = max(lastSeen[ended.life.name] ?? .min, ended.life.lastSeen) }
        // A counted life under a name not recorded yet: its class is
        // recorded under that name, traffic or not. After start or a reload
        // only a rename gives a counted life such a name (a begun life's was
        // noted above), so a step without one looks at no link here. The
        // life's name, not the link's: a reload's dump may show a link
        // renamed already, which only the next sample counts as a rename.
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
