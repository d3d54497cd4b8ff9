/// Accounting results waiting for the next commit, summed per interface and five-minute
/// slot of the wall clock when observed: a clock jump moves bytes between buckets, never loses them.
package struct PendingWrites: Sendable {
    package struct Slot: Hashable, Sendable {
        package var name: String
        package var start: Int64
    }

    // `Dictionary()`, not `[:]`: an empty literal here was a run-time metadata lookup behind
    // a lock on every sample (bench/TRIES.md).
    package var deltas = [Slot: LinkCounters]()
    package var interfaces = [String: InterfaceInfo]()
    package var endedLives: [(ended: EndedLife, time: Int64)] = []
    package var events: [(time: Int64, event: ResetEvent)] = []

    package init() {}

    package var isEmpty: Bool { deltas.isEmpty && interfaces.isEmpty && endedLives.isEmpty && events.isEmpty }

    /// Adds one accounting outcome observed at `now`.
    package mutating func record(_ outcome: AccountingOutcome, at now: Instant) {
        let slot = TimeBuckets.start(of: .fiveMinutes, containing: now.wall)
        for delta in outcome.deltas {
            deltas[Slot(name: delta.name, start: slot), default: .zero] += delta.counters
        }
        events += outcome.events.map { (now.wall, $0) }
        endedLives += outcome.endedLives.map { ($0, now.wall) }
    }

    /// Dated anew after the wall clock stepped by `seconds`: what was observed at wall time W
    /// happened at W + seconds.
    package mutating func redate(by seconds: Int64) {
        var moved = [Slot: LinkCounters]()
        for (slot, counters) in deltas {
            moved[Slot(name: slot.name, start: TimeBuckets.start(of: .fiveMinutes, containing: slot.start + seconds)), default: .zero] += counters
        }
        deltas = moved
        events = events.map { ($0.time + seconds, $0.event) }
        endedLives = endedLives.map { ($0.ended, $0.time + seconds) }
    }

    /// Totals by interface name (for logging and tests).
    package var totalsByName: [String: LinkCounters] {
        deltas.reduce(into: [:]) { totals, entry in totals[entry.key.name, default: .zero] += entry.value }
    }
}

/// What one commit writes: the pending writes, the open lives whose row must be written
/// (new, renamed, or counters moved), and the links present when that changed.
package struct CommitBatch: Sendable {
    package var pending: PendingWrites
    package var changedLives: [TrackedLife]
    package var presence: PresenceUpdate?

    package init(pending: PendingWrites = PendingWrites(), changedLives: [TrackedLife] = [], presence: PresenceUpdate? = nil) {
        self.pending = pending
        self.changedLives = changedLives
        self.presence = presence
    }
}

/// The links present at a commit, as a change to what the store held: the
/// links to record (new, or under a new name) and those gone, or, when
/// this run has not written the record yet, the whole record replaced.
package struct PresenceUpdate: Sendable, Equatable {
    /// Every link present now (what the meter compares the next commit
    /// with); read back from a journal, only the links added.
    package var present: IfindexTable<String>
    /// Links to record (new, or under a new name).
    package var added: [Int32: String]
    /// Links recorded before and gone now.
    package var removed: [Int32]
    /// The whole record is replaced by `added`.
    package var replacesAll: Bool

    /// The change from `previous` (nil: unknown, replace it all) to `present`.
    package init(present: IfindexTable<String>, previous: IfindexTable<String>? = nil) {
        self.present = present
        added = Dictionary()
        for (ifindex, name) in present where previous?[ifindex] != name { added[ifindex] = name }
        removed = previous.map { $0.keys.filter { present[$0] == nil } } ?? []
        replacesAll = previous == nil
    }

    /// The change from `previous` to `present` where they can differ only
    /// at `ifindexes` (the links observed since `previous` was recorded).
    package init(present: IfindexTable<String>, previous: IfindexTable<String>, differingAt ifindexes: Set<Int32>) {
        self.present = present
        added = Dictionary()
        for ifindex in ifindexes { if let name = present[ifindex], previous[ifindex] != name { added[ifindex] = name } }
        removed = ifindexes.filter { present[$0] == nil && previous[$0] != nil }.sorted()
        replacesAll = false
    }

    /// Nothing to record.
    package var isEmpty: Bool { added.isEmpty && removed.isEmpty && !replacesAll }

    /// The change alone, as a journal holds it and reads it back.
    package var change: PresenceUpdate { PresenceUpdate(added: added, removed: removed, replacesAll: replacesAll) }

    /// A change as a journal holds it.
    package init(added: [Int32: String], removed: [Int32], replacesAll: Bool) {
        present = IfindexTable(firstOf: added.map { ($0.key, $0.value) })
        self.added = added
        self.removed = removed
        self.replacesAll = replacesAll
    }
}
