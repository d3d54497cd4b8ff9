/// The counter rules of docs/ACCOUNTING.md as a pure value; time and the watch policy are arguments.
/// It follows every link of its namespace, watched or not (`presentLinks`): a link that starts
/// being watched was already there, so its past is not counted; a link never there counts from zero.
package struct CounterTracker: Sendable {
    package struct Settings: Sendable {
        /// The source's counter width, which decides the wrap rule.
        package var width: CounterWidth
        /// Faster deltas on a 32-bit source are a wrong wrap guess (rule 8).
        package var maxRateBitsPerSecond: UInt64

        package init(width: CounterWidth = .bits64, maxRateBitsPerSecond: UInt64 = 10_000_000_000) {
            self.width = width
            self.maxRateBitsPerSecond = maxRateBitsPerSecond
        }
    }

    /// Decides whether a link that is not counted yet should be.
    package typealias WatchPolicy = (LinkSample) -> Bool

    package let bootID: String
    package let namespace: NamespaceCookie
    package var settings: Settings
    package private(set) var lives = IfindexTable<TrackedLife>()
    package private(set) var presentLinks = IfindexTable<String>()

    package init(bootID: String, namespace: NamespaceCookie = 0, settings: Settings = Settings()) {
        self.bootID = bootID
        self.namespace = namespace
        self.settings = settings
    }

    private func isOurs(_ other: NamespaceCookie) -> Bool { NamespaceCookie.same(other, namespace) }
    /// A stored life of this boot and namespace: one the tracker may go on counting.
    private func isOurs(_ entry: StoredLife) -> Bool { entry.bootID == bootID && isOurs(entry.namespace) }

    // MARK: Start (rules 2 to 5)

    /// Rule 4's loss: after a kill or a power cut, what passed since the last commit is unknown; after
    /// a clean stop, nothing for a link that was down then, else at most the time from the stop to this boot.
    package static func rebootLoss(of life: TrackedLife, stop: CleanStop?, now: Instant) -> (loss: ResetEvent.Loss, detail: String) {
        let fromZero = "counted from zero since boot"
        guard let stop else { return (.unknown, "rebooted; traffic between the last save and the reboot is unknown; \(fromZero)") }
        guard stop.linksUp.contains(life.ifindex) else { return (.none, "rebooted after the daemon's stop, the link down then: nothing lost; \(fromZero)") }
        let unseen = now.wall - Int64(now.sinceBoot) - stop.at
        guard unseen >= 0 else { return (.unknown, "rebooted after the daemon's stop, the clock since moved back: what the link carried after the stop is unknown; \(fromZero)") }
        return (.unseen(seconds: UInt64(unseen)), "rebooted after the daemon's stop: not seen, the \(unseen) s between the stop and this boot; \(fromZero)")
    }

    /// Reconciles what the store remembers with every link present now.
    package mutating func start(
        stored: StoredState, links listed: [LinkSample], at now: Instant, isWatched: WatchPolicy = { _ in true }
    ) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        let links = listed.firstOfEachIfindex
        let byIndex = Dictionary(firstOf: links.map { ($0.ifindex, $0) })
        let byName = Dictionary(firstOf: links.map { ($0.name, $0) })
        // Ran earlier in this boot and namespace: its last commit tells "appeared while stopped" from "unwatched".
        let sameRun = stored.lastBootID == bootID && isOurs(stored.lastNamespace)
        let earlierPresence = sameRun ? stored.presentLinks : nil
        // A device created while stopped gets an ifindex never used here (handed out cyclically); one absent
        // at the last save on an ended life's ifindex moved in, counters and all (docs/ACCOUNTING.md: the exception).
        func movedIn(_ link: LinkSample) -> Bool {
            guard let earlierPresence, earlierPresence[link.ifindex] == nil else { return false }
            return stored.endedIndexes.contains(link.ifindex)
        }
        let ourStored = stored.openLives.filter(isOurs)
        let storedIndexes = Set(ourStored.map { $0.life.ifindex })
        var claimed: Set<Int32> = []
        presentLinks = IfindexTable(firstOf: links.map { ($0.ifindex, $0.name) })

        for entry in stored.openLives {
            let life = entry.life
            if entry.bootID != bootID {
                // Rule 4: the successor (same name) is counted from zero below.
                outcome.ended(life, .reboot, bootID: entry.bootID, namespace: entry.namespace)
                let loss = Self.rebootLoss(of: life, stop: stored.cleanStop?.bootID == entry.bootID ? stored.cleanStop : nil, now: now)
                outcome.events.append(ResetEvent(
                    .reboot, name: life.name, old: life.ifindex, new: byName[life.name]?.ifindex, loss: loss.loss, detail: loss.detail))
            } else if !isOurs(entry.namespace) {
                // Not our namespace: whatever carries its ifindex or name here is another device.
                outcome.ended(life, .namespaceChanged, bootID: bootID, namespace: entry.namespace)
                outcome.events.append(ResetEvent(
                    .namespaceChanged, name: life.name, old: life.ifindex, new: nil, loss: .unknown,
                    detail: "the daemon now runs in another network namespace; this interface's traffic after the last save is unknown"))
            } else if let current = byIndex[life.ifindex] {
                claimed.insert(current.ifindex)
                if current.name == life.name {
                    // Rule 2: the same life; count what passed while we were stopped.
                    var continued = life
                    advance(&continued, to: current, at: now, detectResets: true, into: &outcome)
                    if isWatched(current) {
                        lives[current.ifindex] = continued
                    } else {
                        outcome.append(unwatch(continued))
                    }
                } else {
                    // A rename while stopped, or another device on the free ifindex: no kernel trace tells
                    // them apart, so count only what is certain, from the current counters on.
                    let watched = isWatched(current)
                    outcome.ended(life, .renamedOrReplaced, bootID: bootID, namespace: namespace)
                    outcome.events.append(ResetEvent(
                        .renamedOrReplaced, name: life.name, old: life.ifindex, new: current.ifindex, loss: .unknown,
                        detail: "ifindex \(life.ifindex) is now named \(current.name): renamed while the daemon was stopped, or another device in its place; traffic after the last save is unknown, "
                            + (watched ? "\(current.name) is counted from now" : "\(current.name) is not counted (not watched)")))
                    if watched { outcome.append(begin(current, at: now, baseline: current.counters)) }
                }
            } else if let successor = byName[life.name], !storedIndexes.contains(successor.ifindex),
                      !claimed.contains(successor.ifindex), isWatched(successor)
            {
                // Rule 3: recreated under the same name while stopped; a name match never takes a stored life's link.
                claimed.insert(successor.ifindex)
                outcome.ended(life, .removedWhileStopped, bootID: bootID, namespace: namespace)
                outcome.events.append(ResetEvent(
                    .recreated, name: life.name, old: life.ifindex, new: successor.ifindex, loss: .unknown,
                    detail: "recreated while the daemon was stopped; the old life's traffic after the last save is unknown"))
                if earlierPresence?[successor.ifindex] != nil {
                    // There at the last save under another name, unwatched: its past is not ours to count.
                    outcome.append(begin(successor, at: now, baseline: successor.counters))
                } else if movedIn(successor) {
                    outcome.events.append(Self.movedInWhileStopped(successor))
                    outcome.append(begin(successor, at: now, baseline: successor.counters))
                } else {
                    outcome.append(begin(successor, at: now, baseline: .zero))
                }
            } else {
                outcome.ended(life, .removedWhileStopped, bootID: bootID, namespace: namespace)
                outcome.events.append(ResetEvent(
                    .removedWhileStopped, name: life.name, old: life.ifindex, new: nil, loss: .unknown,
                    detail: "removed while the daemon was stopped; its traffic after the last save is unknown"))
            }
        }

        for link in links where !claimed.contains(link.ifindex) && lives[link.ifindex] == nil && isWatched(link) {
            if sameRun {
                if let earlierPresence, earlierPresence[link.ifindex] != nil {
                    // Rule 5: present at the last save but not watched: its past is not counted.
                    outcome.events.append(ResetEvent(
                        .historyUnknown, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
                        detail: "watched from now on; it was present but not watched before, and that traffic is not counted"))
                    outcome.append(begin(link, at: now, baseline: link.counters))
                } else if movedIn(link) {
                    outcome.events.append(Self.movedInWhileStopped(link))
                    outcome.append(begin(link, at: now, baseline: link.counters))
                } else {
                    // Rule 5: absent at our last save in this boot, so created while stopped: counted from zero.
                    outcome.events.append(ResetEvent(
                        .appearedWhileStopped, name: link.name, old: nil, new: link.ifindex, loss: .none,
                        detail: "appeared while the daemon was stopped; counted from zero"))
                    outcome.append(begin(link, at: now, baseline: .zero))
                }
            } else if stored.lastBootID != nil, stored.lastBootID != bootID, stored.knownNames.contains(link.name) {
                // Rule 4: a known interface after a reboot counts since boot.
                outcome.append(begin(link, at: now, baseline: .zero))
            } else {
                // Rule 5: first sight in this boot and namespace; never count what came before we could know it.
                outcome.events.append(ResetEvent(
                    .historyUnknown, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
                    detail: "first seen now; traffic before this moment is not counted"))
                outcome.append(begin(link, at: now, baseline: link.counters))
            }
        }
        return outcome
    }

    private static func movedInWhileStopped(_ link: LinkSample) -> ResetEvent {
        ResetEvent(
            .movedIn, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
            detail: "appeared while the daemon was stopped on ifindex \(link.ifindex), which an earlier life here had: moved in from another network namespace, so its counters are not counted; its traffic here before this moment is unknown")
    }

    // MARK: While running

    /// Records a link as present, only when its name changes: the table is shared with the last commit's copy.
    private mutating func notePresent(_ link: LinkSample) {
        if presentLinks[link.ifindex] != link.name { presentLinks[link.ifindex] = link.name }
    }

    // MARK: Events a stopped daemon left unread

    /// Takes up the state the previous process saved in this boot and namespace, so that the events queued
    /// in the socket it left are observed as it would have; false, and nothing taken, unless `isContinuation(of:)`.
    package mutating func resume(_ stored: StoredState) -> Bool {
        guard isContinuation(of: stored), let presence = stored.presentLinks else { return false }
        let ours = stored.openLives.filter(isOurs)
        lives = IfindexTable(firstOf: ours.map { ($0.life.ifindex, $0.life) })
        presentLinks = presence
        return true
    }

    /// Whether events read after `stored` was saved apply to it: same boot and namespace, with a presence record.
    package func isContinuation(of stored: StoredState) -> Bool {
        stored.lastBootID == bootID && isOurs(stored.lastNamespace) && stored.presentLinks != nil
    }

    /// The state after the events observed since `resume`, as the previous process would have saved it; empties the tracker.
    /// - Parameter deleted: The ifindexes those events deleted (earlier lives, for `start`).
    package mutating func suspended(onto stored: StoredState, deleted: Set<Int32>) -> StoredState {
        var state = stored
        state.openLives = stored.openLives.filter { !isOurs($0) }
        for (_, life) in lives {
            state.openLives.append(StoredLife(bootID: bootID, namespace: namespace, life: life))
            state.knownNames.insert(life.name)
        }
        state.presentLinks = presentLinks
        state.endedIndexes.formUnion(deleted)
        lives = IfindexTable()
        presentLinks = IfindexTable()
        return state
    }

    /// A fresh dump of every link (rules 6, 8 and, after lost events, 9). A life missing from an
    /// ordinary dump stays open for its RTM_DELLINK's final counters; a new link is left to its
    /// queued RTM_NEWLINK, whose counters tell a new device from one moved in.
    package mutating func observe(
        dump links: [LinkSample], at now: Instant, eventsWereLost: Bool, isWatched: WatchPolicy = { _ in true }
    ) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        // Only a dump after lost events ends what it does not show.
        var present: Set<Int32> = []
        if eventsWereLost { present.reserveCapacity(links.count) }
        // A dump lists links in ifindex order, as the tables keep them.
        var livesCursor = IfindexTable<TrackedLife>.Cursor()
        var presentCursor = IfindexTable<String>.Cursor()
        for link in links {
            if eventsWereLost { present.insert(link.ifindex) }
            let presentSlot = presentLinks.slot(of: link.ifindex, from: &presentCursor)
            if let presentSlot, presentLinks[slot: presentSlot] != link.name { presentLinks[slot: presentSlot] = link.name }
            if let slot = lives.slot(of: link.ifindex, from: &livesCursor) {
                var life = lives[slot: slot]
                advance(&life, to: link, at: now, detectResets: true, into: &outcome)
                lives[slot: slot] = life
                if presentSlot == nil { notePresent(link) }
            } else if presentSlot != nil {
                // Known but not counted; renamed into a watched name maybe.
                if isWatched(link) { outcome.append(startWatching(link, at: now)) }
            } else if eventsWereLost {
                notePresent(link)
                guard isWatched(link) else { continue }
                // Created or moved in while events were lost: no message says which, so count what is certain.
                outcome.events.append(ResetEvent(
                    .eventsLost, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
                    detail: Self.appearedWhileEventsWereLost))
                outcome.append(begin(link, at: now, baseline: link.counters))
            }
        }
        if eventsWereLost {
            // In one sweep: removing lives one by one moves the table's tail each time.
            var gone: [TrackedLife] = []
            lives.removeAll { ifindex, life in
                guard !present.contains(ifindex) else { return false }
                gone.append(life)
                return true
            }
            for life in gone {
                outcome.ended(life, .eventsLost, bootID: bootID, namespace: namespace)
                outcome.events.append(ResetEvent(
                    .eventsLost, name: life.name, old: life.ifindex, new: nil, loss: .unknown,
                    detail: "link events were lost and the interface was gone at the re-dump; its traffic after the last sample is unknown"))
            }
            presentLinks.removeAll { ifindex, _ in !present.contains(ifindex) }
        }
        return outcome
    }

    /// Why the messages read may lack a link's creation, so its first message with traffic need not be a move.
    package enum MissedMessages: Sendable {
        /// The socket overran: some messages before them were lost.
        case lost
        /// Read at start: the socket opened while links existed, or came from a process that may have read unsaved.
        case beforeStart
    }

    /// A link event from the kernel (rules 1 and 7). Event messages may be older than the last
    /// dump, so they never move a counter back nor signal a reset: only dumps judge resets.
    /// - Parameter missed: Why earlier messages may be missing (nil: none can be).
    package mutating func observe(
        event: LinkEvent, at now: Instant, isWatched: WatchPolicy = { _ in true }, missed: MissedMessages? = nil
    ) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        let link = event.link
        switch event.kind {
        case .new:
            let wasPresent = presentLinks[link.ifindex] != nil
            notePresent(link)
            if var life = lives[link.ifindex] {
                advance(&life, to: link, at: now, detectResets: false, into: &outcome)
                lives[link.ifindex] = life
            } else if wasPresent {
                if isWatched(link) { outcome.append(startWatching(link, at: now)) }
            } else if isWatched(link) {
                // Rule 1: created under our eyes. The message's counters are the baseline: zero for a new
                // device, the unseen past of one moved in from another namespace.
                if link.counters.bytesOrPacketsMoved { outcome.events.append(Self.arrivedWithTraffic(link, missed: missed)) }
                outcome.append(begin(link, at: now, baseline: link.counters))
            }
        case .deleted(let moved):
            presentLinks[link.ifindex] = nil
            guard var life = lives[link.ifindex] else { return outcome }
            // Rule 7: the message carries the final counters. veth clears its peer before the snapshot
            // (rx reads 0): the guard keeps the counter, and the loss since the last sample is said.
            let finalUnknown = link.kind == "veth" || zip(link.counters.fields, life.counters.fields).contains { $0 < $1 }
            advance(&life, to: link, at: now, detectResets: false, into: &outcome)
            lives[link.ifindex] = nil
            outcome.ended(life, moved ? .movedAway : .removed, bootID: bootID, namespace: namespace)
            if !moved {
                outcome.events.append(ResetEvent(
                    .removed, name: life.name, old: life.ifindex, new: nil, loss: finalUnknown ? .unknown : .none,
                    detail: finalUnknown
                        ? "deleted; its final message read counters below the last sample (a veth reads rx 0), so what those counted since that sample is unknown"
                        : ResetEvent.countedRemovalDetail))
            }
        }
        return outcome
    }

    /// A link first seen in a message with traffic already counted: moved in, when no earlier message
    /// can be missing; else its creation may be among those missed, and its traffic here is lost.
    private static func arrivedWithTraffic(_ link: LinkSample, missed: MissedMessages?) -> ResetEvent {
        switch missed {
        case nil:
            ResetEvent(
                .movedIn, name: link.name, old: nil, new: link.ifindex, loss: .none,
                detail: "arrived with traffic already counted, from another network namespace; that traffic is not this namespace's")
        case .lost:
            ResetEvent(
                .eventsLost, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
                detail: Self.appearedWhileEventsWereLost)
        case .beforeStart:
            ResetEvent(
                .historyUnknown, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
                detail: "first seen at start in a link message with traffic already counted: created while the daemon was stopped, or moved in from another network namespace; that traffic is not counted")
        }
    }

    /// A reload's policy on a fresh dump: lives no longer watched are counted to now and closed; new ones start now.
    package mutating func rewatch(links: [LinkSample], at now: Instant, isWatched: WatchPolicy) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        for link in links {
            notePresent(link)
            if var life = lives[link.ifindex] {
                guard !isWatched(link) else { continue }
                advance(&life, to: link, at: now, detectResets: true, into: &outcome)
                lives[link.ifindex] = nil
                outcome.append(unwatch(life))
            } else if isWatched(link) {
                outcome.append(startWatching(link, at: now))
            }
        }
        return outcome
    }

    // MARK: Rules shared by every path

    /// Starts a life whose counters up to `baseline` are not ours to count.
    private mutating func begin(_ link: LinkSample, at now: Instant, baseline: LinkCounters) -> AccountingOutcome {
        var life = TrackedLife(
            ifindex: link.ifindex, name: link.name, counters: baseline, sinceBoot: baseline == .zero ? 0 : now.sinceBoot,
            firstSeen: now.wall, lastSeen: now.wall)
        var outcome = AccountingOutcome()
        advance(&life, to: link, at: now, detectResets: true, into: &outcome)
        lives[link.ifindex] = life
        outcome.begunLives.append(life)
        return outcome
    }

    private mutating func startWatching(_ link: LinkSample, at now: Instant) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        outcome.events.append(ResetEvent(
            .historyUnknown, name: link.name, old: nil, new: link.ifindex, loss: .unknown,
            detail: "watched from now on; it was present but not watched before, and that traffic is not counted"))
        outcome.append(begin(link, at: now, baseline: link.counters))
        return outcome
    }

    private func unwatch(_ life: TrackedLife) -> AccountingOutcome {
        var outcome = AccountingOutcome()
        outcome.ended(life, .unwatched, bootID: bootID, namespace: namespace)
        outcome.events.append(ResetEvent(
            .unwatched, name: life.name, old: life.ifindex, new: nil, loss: .none,
            detail: "no longer watched (Watch=, an override or its name changed); counted up to now"))
        return outcome
    }

    /// Moves `life` to `sample`'s counters in place and adds to `outcome` what that adds. With
    /// `detectResets` a counter that went down is a wrap or a reset (rule 6); without it (event
    /// messages) it is a late message and the counter keeps its later value.
    private func advance(
        _ life: inout TrackedLife, to sample: LinkSample, at now: Instant, detectResets: Bool, width: CounterWidth? = nil,
        into outcome: inout AccountingOutcome
    ) {
        let width = width ?? settings.width
        let target = detectResets ? sample.counters : life.counters.later(sample.counters, width: width)
        var field = 0
        var resetFields: [Int] = []
        var delta = life.counters.combined(with: target) { counted, read in
            defer { field += 1 }
            let step = CounterStep.between(counted, read, width: width)
            if case .reset = step { resetFields.append(field) }
            return step.delta
        }
        if !resetFields.isEmpty {
            outcome.events.append(ResetEvent(
                .counterReset, name: sample.name, old: life.ifindex, new: sample.ifindex, loss: .unknown,
                detail: "counters went down within one life (\(resetFields.map { Self.fieldNames[$0] }.joined(separator: ", "))): driver reset; traffic just before it is unknown"))
        }
        // Rule 8: only a 32-bit source can lie upwards (a wrong wrap guess); on 64 bits a rise is real traffic.
        if width == .bits32 {
            let elapsed = max(now.sinceBoot - life.sinceBoot, 1)
            let allowedBytes = Double(settings.maxRateBitsPerSecond) / 8 * elapsed
            if Double(delta.rxBytes) > allowedBytes || Double(delta.txBytes) > allowedBytes {
                outcome.events.append(ResetEvent(
                    .implausible, name: sample.name, old: life.ifindex, new: sample.ifindex,
                    loss: .discarded(rxBytes: delta.rxBytes, txBytes: delta.txBytes),
                    detail: "delta faster than MaxRate over \(Int(elapsed)) s on a 32-bit counter source discarded"))
                delta = .zero
            }
        }
        // A rename's message carries the counters at the rename: what they add passed under the old name.
        let countedUnder = life.name
        if sample.name != life.name { outcome.renames.append(.init(ifindex: sample.ifindex, from: life.name, to: sample.name)) }
        life.counters = target
        life.sinceBoot = now.sinceBoot
        life.lastSeen = now.wall
        life.name = sample.name
        if delta != .zero {
            outcome.deltas.append(Delta(name: countedUnder, ifindex: sample.ifindex, counters: delta))
        }
    }

    static let appearedWhileEventsWereLost = "appeared while link events were lost; its traffic before this moment is not counted"

    static let fieldNames = ["rx bytes", "tx bytes", "rx packets", "tx packets", "rx errors", "tx errors", "rx drops", "tx drops"]
}

extension AccountingOutcome {
    fileprivate mutating func ended(_ life: TrackedLife, _ end: LifeEnd, bootID: String, namespace: NamespaceCookie) {
        endedLives.append(EndedLife(life: life, end: end, bootID: bootID, namespace: namespace))
    }
}

extension [LinkSample] {
    /// Only each ifindex's first listing (getifaddrs can race a rename): the one every rule takes alike.
    package var firstOfEachIfindex: [LinkSample] {
        var seen = Set<Int32>()
        return filter { seen.insert($0.ifindex).inserted }
    }
}

extension LinkCounters {
    /// Whether any byte or packet was counted (errors and drops aside).
    var bytesOrPacketsMoved: Bool { rxBytes | txBytes | rxPackets | txPackets != 0 }
}

// The counter rules also build in Embedded Swift (bench/embedded): no key paths, and no
// Dictionary(_:uniquingKeysWith:), whose rethrowing path is a dynamic cast it cannot compile.
extension Dictionary {
    /// The pairs as a dictionary; of equal keys the first wins.
    init(firstOf pairs: [(Key, Value)]) {
        self.init(minimumCapacity: pairs.count)
        for (key, value) in pairs where self[key] == nil { self[key] = value }
    }
}
