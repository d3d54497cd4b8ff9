import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The daemon's rules without the daemon: what is watched, when a commit
/// is due, what a reload changes, what the metrics file publishes. No root,
/// no kernel, no store: the loop's inputs as values.
@Suite struct MeterTests {
    /// Classes by kind, like the real classifier's second signal; "ignored"
    /// stands for an override that ignores the link.
    final class CountingClassifier: @unchecked Sendable {
        var calls = 0
        func classify(_ link: LinkSample) -> Classification {
            calls += 1
            switch link.kind {
            case "tun": return Classification(.tunnel, by: .linkKind("tun"))
            case "veth": return Classification(.other, by: .linkKind("veth"))
            case "ignored": return Classification(nil, by: .override(pattern: link.name))
            default: return Classification(.wifi, by: .name(pattern: "wl*"))
            }
        }
    }

    private func link(_ name: String, _ ifindex: Int32, kind: String = "tun", rx: UInt64 = 0) -> LinkSample {
        LinkSample(ifindex: ifindex, name: name, kind: kind, counters: LinkCounters(rxBytes: rx, rxPackets: rx / 100))
    }

    private func at(_ seconds: Double) -> Instant { Instant(wall: 1_800_000_000 + Int64(seconds), sinceBoot: 100 + seconds) }

    private func meter(
        watching classes: Set<InterfaceClass> = InterfaceClass.watchedByDefault, classifier: CountingClassifier = CountingClassifier(),
        stored: [StoredInterface] = []
    ) -> Meter {
        Meter(
            bootID: "B", namespace: 7, width: .bits64,
            policy: Meter.Policy(watchedClasses: classes, maxRateBitsPerSecond: 1_000_000, classify: classifier.classify),
            storedInterfaces: stored)
    }

    /// One row: the links at start, then a dump; which are counted.
    struct WatchCase: Sendable, CustomTestStringConvertible {
        var rule: String
        var watched: Set<InterfaceClass>
        var kind: String
        var counted: Bool
        var testDescription: String { rule }
    }

    @Test(arguments: [
        WatchCase(rule: "a tunnel is watched by default", watched: InterfaceClass.watchedByDefault, kind: "tun", counted: true),
        WatchCase(rule: "a veth is other, not watched by default", watched: InterfaceClass.watchedByDefault, kind: "veth", counted: false),
        WatchCase(rule: "Watch=other counts a veth", watched: [.other], kind: "veth", counted: true),
        WatchCase(rule: "an ignored link is never counted, whatever Watch= says", watched: Set(InterfaceClass.allCases), kind: "ignored", counted: false),
    ])
    func watchPolicy(_ row: WatchCase) {
        var meter = meter(watching: row.watched)
        _ = meter.start(stored: StoredState(lastBootID: "B", lastNamespace: 7, presentLinks: [:]), links: [link("x0", 4, kind: row.kind)], at: at(0))
        _ = meter.apply(dump: [link("x0", 4, kind: row.kind, rx: 5000)], eventsWereLost: false, at: at(15))
        #expect((meter.totals["x0"]?.rxBytes ?? 0) == (row.counted ? 5000 : 0))
        // Present either way: the next start knows it was there.
        #expect(meter.tracker.presentLinks == [4: "x0"])
    }

    @Test func aLinkIsClassifiedOncePerNameNotPerSample() {
        let classifier = CountingClassifier()
        var meter = meter(classifier: classifier)
        _ = meter.start(stored: StoredState(), links: [link("tun0", 4), link("veth0", 5, kind: "veth")], at: at(0))
        let afterStart = classifier.calls
        for second in 1...20 {
            _ = meter.apply(dump: [link("tun0", 4, rx: UInt64(second)), link("veth0", 5, kind: "veth")], eventsWereLost: false, at: at(Double(second)))
        }
        #expect(classifier.calls == afterStart)
        // A rename is a new name: classified again.
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("vpn0", 4, rx: 20))], at: at(21))
        #expect(classifier.calls == afterStart + 1)
        #expect(meter.interfaceInfo["vpn0"]?.interfaceClass == .tunnel)
    }

    @Test func aLifeThatBeginsOrEndsIsDueForACommitAtOnce() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [], at: at(0))
        meter.committed(meter.nextCommit)
        #expect(!meter.hasUncommittedLifeChanges)
        let began = meter.apply(events: [LinkEvent(kind: .new, link: link("tun0", 4))], at: at(1))
        #expect(began.begun.map(\.name) == ["tun0"])
        #expect(meter.hasUncommittedLifeChanges)
        #expect(meter.nextCommit.changedLives.map(\.name) == ["tun0"])
        meter.committed(meter.nextCommit)
        #expect(!meter.hasUncommittedLifeChanges)
        // Samples of a living life wait for the commit interval.
        _ = meter.apply(dump: [link("tun0", 4, rx: 300)], eventsWereLost: false, at: at(15))
        #expect(!meter.hasUncommittedLifeChanges)
        _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun0", 4, rx: 900))], at: at(16))
        #expect(meter.hasUncommittedLifeChanges)
        #expect(meter.nextCommit.pending.endedLives.map(\.ended.end) == [.removed])
        #expect(meter.totals["tun0"]?.rxBytes == 900)
        // An unwatched link that appears is due too (a restart that widens
        // Watch= must find it was present); one that goes is not.
        meter.committed(meter.nextCommit)
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("veth0", 5, kind: "veth"))], at: at(17))
        #expect(meter.hasUncommittedLifeChanges)
        #expect(meter.nextCommit.presence?.added == [5: "veth0"])
        meter.committed(meter.nextCommit)
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("veth0", 5, kind: "veth", rx: 40))], at: at(18))
        #expect(!meter.hasUncommittedLifeChanges)
        _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("veth0", 5, kind: "veth"))], at: at(19))
        #expect(!meter.hasUncommittedLifeChanges)
    }

    @Test func aCommitRewritesOnlyTheLivesThatChanged() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("tun0", 4), link("tun1", 5), link("tun2", 6)], at: at(0))
        #expect(meter.nextCommit.changedLives.map(\.name).sorted() == ["tun0", "tun1", "tun2"])
        meter.committed(meter.nextCommit)
        _ = meter.apply(dump: [link("tun0", 4), link("tun1", 5, rx: 300), link("tun2", 6)], eventsWereLost: false, at: at(15))
        #expect(meter.nextCommit.changedLives.map(\.name) == ["tun1"])
        meter.committed(meter.nextCommit)
        #expect(meter.nextCommit.changedLives.isEmpty)
        // tun2 ends and a new device takes its ifindex with the same name
        // and counters: the old row is closed, so the new life needs its own.
        _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun2", 6))], at: at(16))
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("tun2", 6))], at: at(16))
        #expect(meter.nextCommit.changedLives.map(\.name) == ["tun2"])
        #expect(meter.nextCommit.pending.endedLives.map(\.ended.life.name) == ["tun2"])
        // A commit that failed is not `committed`: the next one still carries it.
        _ = meter.apply(dump: [link("tun0", 4, rx: 7), link("tun1", 5, rx: 300), link("tun2", 6)], eventsWereLost: false, at: at(30))
        #expect(meter.nextCommit.changedLives.map(\.name).sorted() == ["tun0", "tun2"])
    }

    /// Between commits, link events make the meter compare only the links
    /// they name. Seeded runs of a start continuing stored lives (some
    /// renamed since) with a stored presence, then events (links created,
    /// deleted, renamed, ignored, counting, deleted unseen), partial dumps,
    /// reloads with other Watch= classes, commits and commits that failed:
    /// at every step the next commit is what comparing every link makes.
    @Test(arguments: Array(1...40) as [UInt64])
    func comparingTheLinksEventsNameCommitsWhatComparingAllWould(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let classifier = CountingClassifier()
        func policy(_ classes: Set<InterfaceClass>) -> Meter.Policy {
            Meter.Policy(watchedClasses: classes, maxRateBitsPerSecond: 1_000_000, classify: classifier.classify)
        }
        var meter = Meter(bootID: "B", namespace: 7, width: .bits64, policy: policy(InterfaceClass.watchedByDefault))
        let kinds = ["tun", "tun", "wlan", "veth", "ignored"]
        var present: [Int32: LinkSample] = [:]
        for ifindex: Int32 in 1...4 where random.next() % 2 == 0 {
            present[ifindex] = link("x\(ifindex)", ifindex, kind: kinds[Int(random.next() % 5)], rx: 100)
        }
        let storedLives = (Int32(1)...4).filter { _ in random.next() % 2 == 0 }.map { ifindex in
            StoredLife(bootID: "B", namespace: 7, life: TrackedLife(
                ifindex: ifindex, name: random.next() % 3 == 0 ? "old\(ifindex)" : "x\(ifindex)", counters: .zero, sinceBoot: 0, firstSeen: 0, lastSeen: 0))
        }
        let storedPresence = IfindexTable(firstOf: (Int32(1)...6).filter { _ in random.next() % 2 == 0 }.map { ($0, "x\($0)") })
        _ = meter.start(
            stored: StoredState(lastBootID: "B", lastNamespace: 7, openLives: storedLives, presentLinks: storedPresence),
            links: Array(present.values), at: at(0))
        func lives(_ batch: CommitBatch) -> [TrackedLife] { batch.changedLives.sorted { $0.ifindex < $1.ifindex } }
        for step in 1...400 {
            let ifindex = Int32(1 + random.next() % 6)
            let now = at(Double(step))
            switch random.next() % 14 {
            case 0:
                let gone = present[ifindex] ?? link("x\(ifindex)", ifindex)
                _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: random.next() % 4 == 0), link: gone)], at: now)
                present[ifindex] = nil
            case 1, 2:
                meter.committed(meter.nextCommit)
            case 3:
                _ = meter.nextCommit   // a write that failed: never `committed`
            case 4:
                let dumped = present.values.filter { _ in random.next() % 5 != 0 }
                _ = meter.apply(dump: dumped, eventsWereLost: random.next() % 2 == 0, at: now)
                for ifindex in present.keys where !dumped.contains(where: { $0.ifindex == ifindex }) && random.next() % 2 == 0 {
                    present[ifindex] = nil
                }
            case 5:
                let classes = Set(InterfaceClass.allCases.filter { _ in random.next() % 2 == 0 })
                _ = meter.reconfigure(policy(classes), links: Array(present.values), at: now)
            default:
                var sample = present[ifindex] ?? link("x\(ifindex)", ifindex, kind: kinds[Int(random.next() % 5)], rx: random.next() % 2 * 500)
                if random.next() % 4 == 0 { sample.name = "r\(random.next() % 3)" }
                sample.counters.rxBytes += random.next() % 3 * 100
                present[ifindex] = sample
                _ = meter.apply(events: [LinkEvent(kind: .new, link: sample)], at: now)
            }
            let next = meter.nextCommit, full = meter.commitBatch(comparing: .all)
            #expect(lives(next) == lives(full), "step \(step)")
            #expect(next.presence?.added == full.presence?.added && next.presence?.removed == full.presence?.removed
                    && next.presence?.replacesAll == full.presence?.replacesAll, "step \(step)")
        }
    }

    @Test func aRenameIsCommittedAtOnce() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("tun6", 4, rx: 100)], at: at(0))
        meter.committed(meter.nextCommit)
        _ = meter.apply(dump: [link("tun6", 4, rx: 2100)], eventsWereLost: false, at: at(15))
        #expect(!meter.hasUncommittedLifeChanges)
        // udev renames a link right after creation: a restart must find the
        // new name in the store, or it would take the ifindex for another device.
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("tun7", 4, rx: 2100))], at: at(16))
        #expect(meter.hasUncommittedLifeChanges)
        #expect(meter.nextCommit.changedLives.map(\.name) == ["tun7"])
        meter.committed(meter.nextCommit)
        // The same through a dump.
        _ = meter.apply(dump: [link("tun8", 4, rx: 2200)], eventsWereLost: false, at: at(30))
        #expect(meter.hasUncommittedLifeChanges)
        // Where in the interval the rename fell is unknown: the old name takes it.
        #expect(meter.nextCommit.pending.deltas.map { $0.key.name } == ["tun7"])
        _ = meter.apply(dump: [link("tun8", 4, rx: 2250)], eventsWereLost: false, at: at(45))
        #expect(meter.totals["tun8"]?.rxBytes == 50)
    }

    @Test func aRenameIntoAnIgnoredNameStopsTheCounting() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("tun3", 4, rx: 0)], at: at(0))
        // An override ignores zz*: the classifier says so for the new name.
        let step = meter.apply(events: [LinkEvent(kind: .new, link: link("zz3", 4, kind: "ignored", rx: 500))], at: at(1))
        // The life ends under the name its traffic passed under: the
        // ignored name gets no row, no event, no series.
        #expect(step.events.map(\.reason) == [.unwatched])
        #expect(step.events.map(\.name) == ["tun3"])
        #expect(meter.lives.isEmpty)
        #expect(meter.totals["tun3"]?.rxBytes == 500)
        #expect(meter.totals["zz3"] == nil)
        _ = meter.apply(dump: [link("zz3", 4, kind: "ignored", rx: 9000)], eventsWereLost: false, at: at(15))
        #expect(meter.totals["zz3"] == nil)
        #expect(meter.nextCommit.pending.deltas.keys.map(\.name) == ["tun3"])
    }

    /// Event messages may be older than the last dump: a rename into an
    /// ignored name and back (`ip link set tun3 name zz3; ... name tun3`)
    /// whose messages are read after a dump that saw tun3 again. The stale
    /// rename's counters are below the dump's; they are no driver reset,
    /// and the link's whole history must not be counted a second time.
    @Test func aStaleRenameIntoAnIgnoredNameCountsNothingTwice() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("tun3", 4, rx: 0)], at: at(0))
        _ = meter.apply(dump: [link("tun3", 4, rx: 2000)], eventsWereLost: false, at: at(15))
        #expect(meter.totals["tun3"]?.rxBytes == 2000)
        _ = meter.apply(events: [
            LinkEvent(kind: .new, link: link("zz3", 4, kind: "ignored", rx: 1500)),
            LinkEvent(kind: .new, link: link("tun3", 4, rx: 1600)),
        ], at: at(16))
        #expect(meter.totals["tun3"]?.rxBytes == 2000)
        #expect(meter.totals["zz3"] == nil)
        // The life begun by the stale rename back starts where the dump had
        // already counted (2000), not at its message's 1600.
        _ = meter.apply(dump: [link("tun3", 4, rx: 2500)], eventsWereLost: false, at: at(30))
        #expect(meter.totals["tun3"]?.rxBytes == 2500)
    }

    /// One row: a rename into an ignored name and back on a 32-bit source
    /// (getifaddrs), between two dumps; tun3's total after the second.
    struct WrapCase: Sendable, CustomTestStringConvertible {
        var rule: String
        var start: UInt64 = 0xFFFF_0000
        var firstDump: UInt64
        var renamedOut: UInt64
        var renamedBack: UInt64
        var secondDump: UInt64
        var total: UInt64
        var testDescription: String { rule }
    }

    /// On a 32-bit source a counter that went down by more than 2^31 went
    /// round, ahead, not back: a message is judged as a dump would judge it
    /// (rule 6) before it ends a life or raises the next one's start. What
    /// passed under the ignored name is never tun3's; nothing is counted twice.
    @Test(arguments: [
        WrapCase(
            rule: "a stale rename and back, no wrap", start: 0, firstDump: 2000, renamedOut: 1500, renamedBack: 1600, secondDump: 2500,
            total: 2500),
        WrapCase(
            rule: "wrapped after the dump: what passed before the rename counts, what passed under the ignored name does not",
            firstDump: 0xFFFF_F000, renamedOut: 0x1000, renamedBack: 0x3000, secondDump: 0x4000, total: 0xF000 + 0x2000 + 0x1000),
        WrapCase(
            rule: "stale messages from before a wrap the dump saw move nothing back", firstDump: 0x100, renamedOut: 0xFFFF_F800,
            renamedBack: 0xFFFF_FC00, secondDump: 0x600, total: 0x1_0100 + 0x500),
    ])
    func aRenameIntoAnIgnoredNameAndBackOnA32BitSource(_ row: WrapCase) {
        func link(_ name: String, kind: String = "tun", rx: UInt64) -> LinkSample {
            LinkSample(ifindex: 4, name: name, kind: kind, counters: LinkCounters(rxBytes: rx))
        }
        var meter = Meter(
            bootID: "B", namespace: 7, width: .bits32,
            policy: Meter.Policy(watchedClasses: InterfaceClass.watchedByDefault, maxRateBitsPerSecond: 100_000_000_000, classify: CountingClassifier().classify))
        _ = meter.start(stored: StoredState(), links: [link("tun3", rx: row.start)], at: at(0))
        _ = meter.apply(dump: [link("tun3", rx: row.firstDump)], eventsWereLost: false, at: at(15))
        _ = meter.apply(events: [
            LinkEvent(kind: .new, link: link("zz3", kind: "ignored", rx: row.renamedOut)),
            LinkEvent(kind: .new, link: link("tun3", rx: row.renamedBack)),
        ], at: at(16))
        _ = meter.apply(dump: [link("tun3", rx: row.secondDump)], eventsWereLost: false, at: at(30))
        #expect(meter.totals["tun3"]?.rxBytes == row.total)
        #expect(meter.totals["zz3"] == nil)
    }

    /// A rename message carries the counters of the moment of the rename:
    /// what they add passed under the old name; what follows, the new.
    @Test func aRenameCountsWhatPassedBeforeItUnderTheOldName() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("tun3", 4, rx: 0)], at: at(0))
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("vpn3", 4, rx: 500))], at: at(1))
        _ = meter.apply(dump: [link("vpn3", 4, rx: 900)], eventsWereLost: false, at: at(15))
        #expect(meter.totals["tun3"]?.rxBytes == 500)
        #expect(meter.totals["vpn3"]?.rxBytes == 400)
        #expect(meter.lives[4]?.name == "vpn3")
    }

    @Test func aNewDeviceOnAReusedIfindexAndNameIsClassifiedAfresh() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("a", 5)], at: at(0))
        _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: true), link: link("a", 5))], at: at(1))
        // A veth (other, unwatched) arrives with the same name and ifindex.
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("a", 5, kind: "veth"))], at: at(2))
        _ = meter.apply(dump: [link("a", 5, kind: "veth", rx: 5000)], eventsWereLost: false, at: at(15))
        #expect(meter.lives.isEmpty)
        #expect(meter.totals["a"]?.rxBytes ?? 0 == 0)
    }

    @Test func theLinksPresentAreCommittedOnlyWhenTheyChange() {
        var meter = meter()
        _ = meter.start(stored: StoredState(lastBootID: "B", lastNamespace: 7, presentLinks: [4: "tun0"]), links: [link("tun0", 4)], at: at(0))
        #expect(meter.nextCommit.presence == nil)
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("veth0", 5, kind: "veth"))], at: at(1))
        #expect(meter.nextCommit.presence == PresenceUpdate(present: [4: "tun0", 5: "veth0"], previous: [4: "tun0"]))
        #expect(meter.nextCommit.presence?.added == [5: "veth0"])
        meter.committed(meter.nextCommit)
        #expect(meter.nextCommit.presence == nil)
        _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun0", 4))], at: at(2))
        #expect(meter.nextCommit.presence?.removed == [4])
    }

    @Test func aReloadThatWidensCountsNoPastAndOneThatNarrowsClosesTheLife() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("veth0", 5, kind: "veth", rx: 100)], at: at(0))
        _ = meter.apply(dump: [link("veth0", 5, kind: "veth", rx: 52_000_000)], eventsWereLost: false, at: at(15))
        let widened = meter.reconfigure(
            Meter.Policy(watchedClasses: [.other], maxRateBitsPerSecond: 1, classify: CountingClassifier().classify),
            links: [link("veth0", 5, kind: "veth", rx: 52_000_000)], at: at(16))
        #expect(widened.events.map(\.reason) == [.historyUnknown])
        #expect(meter.hasUncommittedLifeChanges)
        _ = meter.apply(dump: [link("veth0", 5, kind: "veth", rx: 52_000_700)], eventsWereLost: false, at: at(30))
        #expect(meter.totals["veth0"]?.rxBytes == 700)
        let narrowed = meter.reconfigure(
            Meter.Policy(watchedClasses: [.tunnel], maxRateBitsPerSecond: 1, classify: CountingClassifier().classify),
            links: [link("veth0", 5, kind: "veth", rx: 52_000_900)], at: at(31))
        #expect(narrowed.events.map(\.reason) == [.unwatched])
        #expect(meter.totals["veth0"]?.rxBytes == 900)
        #expect(meter.lives.isEmpty)
        // MaxRate= from the new policy reaches the tracker.
        #expect(meter.tracker.settings.maxRateBitsPerSecond == 1)
    }

    /// A reload re-records every counted name's class. Its dump may show a
    /// link already renamed, which the reload does not count as a rename:
    /// the name the life is counted under is recorded all the same, so a
    /// link that gets that name back unseen (its renames lost in an
    /// overrun) is not left under the class of before the reload.
    @Test func aReloadRecordsTheCountedNameOfALinkRenamedUnderIt() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("a", 4)], at: at(0))
        #expect(meter.interfaceInfo["a"]?.interfaceClass == .tunnel)
        meter.committed(meter.nextCommit)
        let overridden = Meter.Policy(
            watchedClasses: InterfaceClass.watchedByDefault, maxRateBitsPerSecond: 1_000_000,
            classify: { $0.name == "a" ? Classification(.wifi, by: .override(pattern: "a")) : CountingClassifier().classify($0) })
        _ = meter.reconfigure(overridden, links: [link("b", 4)], at: at(16))
        // What the store and the metrics file are given.
        #expect(meter.nextCommit.pending.interfaces["a"]?.interfaceClass == .wifi)
        meter.committed(meter.nextCommit)
        _ = meter.apply(dump: [link("a", 4)], eventsWereLost: true, at: at(30))
        #expect(meter.interfaceInfo["a"]?.interfaceClass == .wifi)
    }

    /// A source that lists an ifindex twice (getifaddrs racing a rename):
    /// whether it is watched is decided on the listing the accounting
    /// takes, the first, so an ignored name never begins a life because
    /// its second listing is watched.
    @Test func aDuplicatedIfindexIsWatchedAsItsFirstListing() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("ign", 5, kind: "ignored"), link("tun5", 5)], at: at(0))
        #expect(meter.lives.isEmpty)
        #expect(meter.nextCommit.pending.interfaces.isEmpty)
    }

    /// Of two open lives under one name (the older one's deletion still
    /// unread), the metrics file shows the newer one's ifindex.
    @Test func metricsShowTheNewestLifeOfAName() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("vpn0", 9)], at: at(0))
        _ = meter.apply(events: [LinkEvent(kind: .new, link: link("vpn0", 4))], at: at(5))
        #expect(meter.lives.count == 2)
        #expect(meter.metricsInterfaces.first { $0.device == "vpn0" }?.ifindex == 4)
    }

    @Test func lostEventsReconcileAndAreCounted() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [link("tun0", 4), link("tun1", 5)], at: at(0))
        let step = meter.apply(dump: [link("tun0", 4, rx: 10), link("tun2", 6, rx: 30)], eventsWereLost: true, at: at(15))
        #expect(step.events.map(\.reason) == [.eventsLost, .eventsLost])
        #expect(meter.resetCounts["tun1"]?["events-lost"] == 1)
        #expect(meter.nextCommit.pending.endedLives.map(\.ended.life.name) == ["tun1"])
    }

    /// One row: what the store kept of a daemon killed in this boot, the
    /// events it left unread in the socket systemd kept, the links present
    /// at the restart; what the restart counts and tells.
    struct UnreadCase: Sendable, CustomTestStringConvertible {
        var rule: String
        var storedBoot = "B"
        var stored: [(ifindex: Int32, name: String, rx: UInt64)] = []
        var unread: [(deleted: Bool, ifindex: Int32, name: String, rx: UInt64)] = []
        var present: [(ifindex: Int32, name: String, rx: UInt64)] = []
        /// Read right after the dump.
        var late: [(deleted: Bool, ifindex: Int32, name: String, rx: UInt64)] = []
        var counted: [String: UInt64]
        var told: [ResetEvent.Reason]
        var openAfter: [String]
        var testDescription: String { rule }
    }

    @Test(arguments: [
        UnreadCase(
            rule: "a life deleted while the daemon was down: its final counters are counted",
            stored: [(4, "tun0", 1000)], unread: [(true, 4, "tun0", 1500)],
            counted: ["tun0": 500], told: [.removed], openAfter: []),
        UnreadCase(
            rule: "a life that began and ended while the daemon was down is counted whole",
            unread: [(false, 9, "tun1", 0), (true, 9, "tun1", 700)],
            counted: ["tun1": 700], told: [.removed], openAfter: []),
        UnreadCase(
            rule: "a link created while down and present: counted from its creation, nothing missed",
            unread: [(false, 10, "tun2", 0)], present: [(10, "tun2", 300)],
            counted: ["tun2": 300], told: [], openAfter: ["tun2"]),
        UnreadCase(
            rule: "a rename while down, told by its event: each name keeps what passed under it",
            stored: [(4, "tun0", 1000)], unread: [(false, 4, "tunR", 1200)], present: [(4, "tunR", 1500)],
            counted: ["tun0": 200, "tunR": 300], told: [], openAfter: ["tunR"]),
        UnreadCase(
            rule: "a life gone with no event left (read, never saved): removed while stopped, loss unknown",
            stored: [(4, "tun0", 1000), (5, "tun5", 0)], unread: [(false, 5, "tun5", 40)], present: [(5, "tun5", 90)],
            counted: ["tun5": 90], told: [.removedWhileStopped], openAfter: ["tun5"]),
        UnreadCase(
            rule: "a store of another boot: the events are not its continuation and are not applied",
            storedBoot: "A", stored: [(4, "tun0", 1000)], unread: [(true, 4, "tun0", 1500)],
            counted: [:], told: [.reboot], openAfter: []),
        UnreadCase(
            rule: "a link first seen with traffic: its creation may have been read by a process that never saved it, so its history is unknown",
            unread: [(false, 11, "tun3", 500)], present: [(11, "tun3", 800)],
            counted: ["tun3": 300], told: [.historyUnknown], openAfter: ["tun3"]),
        UnreadCase(
            rule: "a life deleted between the first read and the dump, its name already on the next life: counted to its final counters",
            stored: [(4, "tun3", 0)], unread: [], present: [(5, "tun3", 0)],
            late: [(false, 4, "tun3", 100), (true, 4, "tun3", 100), (false, 5, "tun3", 0), (true, 5, "tun3", 100)],
            counted: ["tun3": 200], told: [.removed, .appearedWhileStopped, .removed], openAfter: []),
        UnreadCase(
            rule: "a life begun in the unread events and deleted before the dump: counted whole",
            unread: [(false, 6, "tun3", 0)], late: [(true, 6, "tun3", 100)],
            counted: ["tun3": 100], told: [.removed], openAfter: []),
        UnreadCase(
            rule: "a link created after the dump is left to its own message, counted from zero",
            stored: [(4, "tun0", 1000)], present: [(4, "tun0", 1000)], late: [(false, 7, "tun7", 0), (true, 7, "tun7", 300)],
            counted: ["tun7": 300], told: [.removed], openAfter: ["tun0"]),
    ])
    func eventsLeftUnreadByAKilledDaemon(_ row: UnreadCase) {
        var meter = meter()
        func life(_ entry: (ifindex: Int32, name: String, rx: UInt64)) -> StoredLife {
            StoredLife(bootID: row.storedBoot, namespace: 7, life: TrackedLife(
                ifindex: entry.ifindex, name: entry.name, counters: LinkCounters(rxBytes: entry.rx, rxPackets: entry.rx / 100),
                sinceBoot: 50, firstSeen: 0, lastSeen: 0))
        }
        let stored = StoredState(
            lastBootID: row.storedBoot, lastNamespace: 7, openLives: row.stored.map(life), knownNames: Set(row.stored.map(\.name)),
            presentLinks: IfindexTable(firstOf: row.stored.map { ($0.ifindex, $0.name) }))
        func events(_ rows: [(deleted: Bool, ifindex: Int32, name: String, rx: UInt64)]) -> [LinkEvent] {
            rows.map { LinkEvent(kind: $0.deleted ? .deleted(movedToOtherNamespace: false) : .new, link: link($0.name, $0.ifindex, rx: $0.rx)) }
        }
        let step = meter.start(
            stored: stored, links: row.present.map { link($0.name, $0.ifindex, rx: $0.rx) }, at: at(0), unread: events(row.unread),
            readAfterDump: events(row.late))
        #expect(meter.totals.filter { $0.value.rxBytes > 0 }.mapValues(\.rxBytes) == row.counted)
        #expect(step.events.map(\.reason) == row.told)
        #expect(meter.lives.map(\.value.name).sorted() == row.openAfter)
        // The store's presence record follows: a link deleted while down is
        // no longer recorded present.
        let presence = meter.nextCommit.presence
        for gone in row.unread where gone.deleted && row.storedBoot == "B"
            && row.stored.contains(where: { $0.ifindex == gone.ifindex })
        {
            #expect(presence?.removed.contains(gone.ifindex) == true, "\(presence.map { "\($0.removed)" } ?? "no presence")")
        }
    }

    @Test func theMetricsLedgerStartsFromTheStoreAndNeverGoesDown() {
        let stored = StoredInterface(
            name: "tun0", interfaceClass: .tunnel, signal: "kind tun", kind: "tun", firstSeen: 0, lastSeen: 0,
            totals: LinkCounters(rxBytes: 1_000_000), incomplete: nil)
        var meter = meter(stored: [stored])
        _ = meter.start(stored: StoredState(lastBootID: "B", lastNamespace: 7, openLives: [
            StoredLife(bootID: "B", namespace: 7, life: TrackedLife(ifindex: 4, name: "tun0", counters: .zero, sinceBoot: 50, firstSeen: 0, lastSeen: 0)),
        ], knownNames: ["tun0"], presentLinks: [4: "tun0"]), links: [link("tun0", 4, rx: 500)], at: at(0))
        #expect(meter.totals["tun0"]?.rxBytes == 1_000_500)
        var published: UInt64 = 0
        for (second, rx) in [(15, 700), (30, 650), (45, 800)] {  // 650: a driver reset, counted from zero
            _ = meter.apply(dump: [link("tun0", 4, rx: UInt64(rx))], eventsWereLost: false, at: at(Double(second)))
            let now = meter.metricsInterfaces.first { $0.device == "tun0" }?.totals.rxBytes ?? 0
            #expect(now >= published)
            published = now
        }
        #expect(published == 1_000_000 + 700 + 650 + 150)
        #expect(meter.resetCounts["tun0"]?["counter-reset"] == 1)
    }
}

@Suite struct MeterPublicationTests {
    private func meter(stored: [StoredInterface] = []) -> Meter {
        Meter(
            bootID: "B", namespace: 7, width: .bits64,
            policy: Meter.Policy(watchedClasses: [.tunnel], maxRateBitsPerSecond: 1, classify: { _ in Classification(.tunnel, by: .linkKind("tun")) }),
            storedInterfaces: stored)
    }

    private func tun(_ name: String, _ ifindex: Int32, rx: UInt64) -> LinkSample {
        LinkSample(ifindex: ifindex, name: name, kind: "tun", counters: LinkCounters(rxBytes: rx))
    }

    @Test func aNewInterfaceIsPublishedAtZeroFirstThenItsTotals() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [], at: Instant(wall: 1000, sinceBoot: 1))
        _ = meter.apply(events: [LinkEvent(kind: .new, link: tun("tun0", 4, rx: 0))], at: Instant(wall: 1001, sinceBoot: 2))
        _ = meter.apply(dump: [tun("tun0", 4, rx: 800)], eventsWereLost: false, at: Instant(wall: 1015, sinceBoot: 16))
        #expect(meter.publication(at: 1015, keepGone: 60).map(\.totals.rxBytes) == [0])
        #expect(meter.publication(at: 1030, keepGone: 60).map(\.totals.rxBytes) == [800])
    }

    @Test func anIdleWatchedInterfaceIsPublished() {
        var meter = meter()
        _ = meter.start(stored: StoredState(), links: [tun("tun0", 4, rx: 5)], at: Instant(wall: 1000, sinceBoot: 1))
        #expect(meter.publication(at: 1000, keepGone: 60).map(\.device) == ["tun0"])
    }

    @Test func aGoneInterfaceIsDroppedAfterTheConfiguredTime() {
        let old = StoredInterface(
            name: "vpn-old", interfaceClass: .tunnel, signal: "kind tun", kind: "tun", firstSeen: 0, lastSeen: 100,
            totals: LinkCounters(rxBytes: 9), incomplete: nil)
        var meter = meter(stored: [old])
        _ = meter.start(stored: StoredState(lastBootID: "B", lastNamespace: 7, knownNames: ["vpn-old"]), links: [tun("tun0", 4, rx: 0)], at: Instant(wall: 1000, sinceBoot: 1))
        _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: tun("tun0", 4, rx: 0))], at: Instant(wall: 1010, sinceBoot: 11))
        // Gone since 1010; the stored one since 100.
        #expect(meter.publication(at: 1010, keepGone: 1000).map(\.device) == ["tun0", "vpn-old"])
        #expect(meter.publication(at: 1400, keepGone: 1000).map(\.device) == ["tun0"])
        #expect(meter.publication(at: 2100, keepGone: 1000).map(\.device) == [])
        // The ifindex is a gauge of its own, present only while the interface is.
        #expect(meter.publication(at: 1600, keepGone: 1e9).map(\.ifindex) == [nil, nil])
    }
}

@Suite struct MeterMemoryTests {
    private func tun(_ name: String, _ ifindex: Int32, rx: UInt64) -> LinkSample {
        LinkSample(ifindex: ifindex, name: name, kind: "tun", counters: LinkCounters(rxBytes: rx))
    }

    @Test func aNameGoneLongerThanKeepGoneIsForgottenAndAdoptedBackFromTheStore() {
        var meter = Meter(
            bootID: "B", namespace: 7, width: .bits64,
            policy: Meter.Policy(watchedClasses: [.tunnel], maxRateBitsPerSecond: 1, classify: { _ in Classification(.tunnel, by: .linkKind("tun")) }))
        _ = meter.start(stored: StoredState(), links: [], at: Instant(wall: 1000, sinceBoot: 1))
        // Churn: a hundred uniquely named tunnels come and go.
        for index in 0..<100 {
            let name = "vpn\(index)"
            _ = meter.apply(events: [LinkEvent(kind: .new, link: tun(name, Int32(10 + index), rx: 0))], at: Instant(wall: 1000, sinceBoot: 1))
            _ = meter.apply(events: [LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: tun(name, Int32(10 + index), rx: 100))], at: Instant(wall: 1000, sinceBoot: 1))
            for name in meter.namesWithoutHistory { meter.adopt(name, stored: nil, resets: [:]) }
        }
        meter.committed(meter.nextCommit)
        #expect(meter.totals.count == 100)
        meter.forgetGone(at: 1000 + 3600, keepGone: 60)
        #expect(meter.totals.isEmpty)
        #expect(meter.interfaceInfo.isEmpty && meter.resetCounts.isEmpty)
        // vpn7 comes back: the store's 100 bytes join what is counted now.
        _ = meter.apply(events: [LinkEvent(kind: .new, link: tun("vpn7", 500, rx: 0))], at: Instant(wall: 5000, sinceBoot: 4001))
        #expect(meter.namesWithoutHistory == ["vpn7"])
        let stored = StoredInterface(
            name: "vpn7", interfaceClass: .tunnel, signal: "kind tun", kind: "tun", firstSeen: 1000, lastSeen: 1000,
            totals: LinkCounters(rxBytes: 100), incomplete: nil)
        meter.adopt("vpn7", stored: stored, resets: ["removed": 1])
        _ = meter.apply(dump: [tun("vpn7", 500, rx: 40)], eventsWereLost: false, at: Instant(wall: 5015, sinceBoot: 4016))
        #expect(meter.totals["vpn7"]?.rxBytes == 140)
        #expect(meter.resetCounts["vpn7"]?["removed"] == 1)
        #expect(meter.namesWithoutHistory.isEmpty)
    }

    @Test func aLifeBegunAndEndedInOneStepIsLookedUpOnceBeforeItsCommit() {
        var meter = Meter(
            bootID: "B", namespace: 7, width: .bits64,
            policy: Meter.Policy(watchedClasses: [.tunnel], maxRateBitsPerSecond: 1, classify: { _ in Classification(.tunnel, by: .linkKind("tun")) }))
        _ = meter.start(stored: StoredState(), links: [], at: Instant(wall: 1000, sinceBoot: 1))
        _ = meter.apply(events: [
            LinkEvent(kind: .new, link: tun("wg0", 5, rx: 0)),
            LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: tun("wg0", 5, rx: 200)),
        ], at: Instant(wall: 1001, sinceBoot: 2))
        // No life is open now, yet the name must be looked up before the commit.
        #expect(meter.namesWithoutHistory == ["wg0"])
        meter.adopt("wg0", stored: nil, resets: [:])
        meter.committed(meter.nextCommit)
        // Back again: its history is the ledger's already, never adopted twice.
        _ = meter.apply(events: [LinkEvent(kind: .new, link: tun("wg0", 6, rx: 0))], at: Instant(wall: 1002, sinceBoot: 3))
        #expect(meter.namesWithoutHistory.isEmpty)
        #expect(meter.totals["wg0"]?.rxBytes == 200)
    }
}

@Suite struct EventGatheringTests {
    /// (time the socket became readable, or nil when the read was already
    /// due; the deadline; the events read then), in order.
    static let readings: [[(readable: Double?, deadline: Double, events: Int)]] = {
        let spacing = EventGathering.spacing, quiet = 100.22 + 4 * EventGathering.spacing
        return [
            // An isolated burst is read `window` after its first event.
            [(100.0, 100.02, 1)],
            // Bursts apart: each on its own, however close, until they churn.
            [(100.0, 100.02, 1), (100.3, 100.32, 1), (110.0, 110.02, 1)],
            // Three reads within `spacing`: from the next burst on, each
            // waits for `spacing` after the last read, and each read sets the
            // next (nil: the socket is out of the poll, its bursts wake
            // nothing)...
            [(100.0, 100.02, 1), (100.1, 100.12, 1), (100.2, 100.22, 1), (100.3, 100.22 + spacing, 1),
             (nil, 100.22 + 2 * spacing, 1), (nil, 100.22 + 3 * spacing, 1),
             // ...until a read finds nothing: the next burst is on its own again.
             (nil, quiet, 0), (quiet + 0.28, quiet + 0.30, 1), (quiet + 0.38, quiet + 0.40, 1)],
            // Churn that stops: the next burst is read after `window` again.
            [(100.0, 100.02, 1), (100.1, 100.12, 1), (100.2, 100.22, 1), (110.0, 110.02, 1)],
        ]
    }()

    @Test(arguments: Self.readings)
    func aBurstIsReadAfterTheWindowOrUnderChurnTheSpacing(rows: [(readable: Double?, deadline: Double, events: Int)]) {
        var gathering = EventGathering()
        for (readable, expected, events) in rows {
            if let readable {
                #expect(!gathering.isGathering, "\(readable)")
                gathering.begin(at: readable)
                // More events of the same burst do not move the deadline.
                gathering.begin(at: readable + 0.005)
            }
            #expect(abs((gathering.deadline ?? 0) - expected) < 1e-9, "\(expected)")
            gathering.noteRead(at: gathering.deadline ?? 0, events: events)
        }
        #expect(!gathering.isGathering)
    }

    /// Events wait only while the receive buffer has room: after a read
    /// that took more than a quarter of what it holds, churn or not, the
    /// next burst is read after `window`.
    @Test func aReadThatFilledAQuarterOfTheBufferEndsTheHoldingBack() {
        var gathering = EventGathering(capacity: EventGathering.capacity(ofReceiveBuffer: 212_992))
        #expect(EventGathering.capacity(ofReceiveBuffer: 212_992) == 104)
        for (time, events) in [(100.0, 2), (100.1, 2), (100.2, 2)] {
            gathering.begin(at: time)
            gathering.noteRead(at: time + 0.02, events: events)
        }
        gathering.begin(at: 100.3)
        #expect(gathering.deadline == 100.22 + EventGathering.spacing)
        gathering.noteRead(at: 100.22 + EventGathering.spacing, events: 40)
        gathering.begin(at: 100.3 + EventGathering.spacing)
        #expect(abs((gathering.deadline ?? 0) - (100.32 + EventGathering.spacing)) < 1e-9)
    }

    /// A queue that outlives the process (ifmeterd.socket's socket): events
    /// wait for the sample, the socket unwatched, while at the rate a read
    /// found they fill at most a quarter of the buffer by the next sample.
    /// Rows: (sample or gathering read at `time`, events read, whether the
    /// socket is watched afterwards). Capacity 2048 (a 4 MiB buffer): a
    /// quarter is 512 events; samples every 15 s.
    static let waits: [[(time: Double, events: Int, watched: Bool)]] = [
        // Quiet, then a VPN life between samples: read by the sample.
        [(15, 0, false), (30, 4, false), (45, 0, false)],
        // The bench's churn seen by every daemon, about 400 events an interval.
        [(15, 400, false), (30, 395, false), (45, 410, false)],
        // More than a quarter by one sample: watched (read promptly) until a
        // read finds the rate low again...
        [(15, 600, true), (15.5, 40, true), (17.5, 80, true), (30, 20, false)],
        // ...judged at the rate, not the count: 100 events in 2 s come to
        // 750 by the next sample.
        [(15, 513, true), (17, 100, true), (19, 60, false)],
        // An overrun (read as .max) always puts the socket back in the poll,
        // the re-read just after it (the re-dump's) notwithstanding.
        [(15, 0, false), (30, .max, true), (30.001, 0, true), (45, 0, false)],
        // A reload's sample just after another: a few events in a hundredth
        // of a second are no rate yet; they count with the next read.
        [(15, 0, false), (15.01, 3, false), (30, 10, false)],
        // Reads closer than `spacing` add up: 300 and 300 are more than a
        // quarter together.
        [(15, 0, false), (15.5, 300, false), (16, 300, true)],
    ]

    @Test(arguments: Self.waits)
    func eventsInAQueueThatOutlivesTheProcessWaitForTheSampleWhileTheyFit(rows: [(time: Double, events: Int, watched: Bool)]) {
        var gathering = EventGathering(capacity: 2048, queueOutlivesProcess: true, sampleInterval: 15)
        #expect(!gathering.watchesSocket, "events wait from the start")
        var previous = 0.0
        for (time, events, watched) in rows {
            if gathering.watchesSocket && !gathering.isGathering {
                gathering.begin(at: max(time - EventGathering.window, previous))
            }
            previous = time
            gathering.noteRead(at: time, events: events)
            #expect(gathering.watchesSocket == watched, "at \(time)")
            #expect(!gathering.watchesSocket || !gathering.waitsForSample)
            if !watched { #expect(gathering.deadline == nil, "no read is set while events wait for the sample") }
        }
    }

    /// Where what waits dies with the process, nothing waits for the sample:
    /// the socket is watched whenever no gathering has set the next read.
    @Test func eventsInAQueueOfTheProcessAloneAreReadInTheirWindow() {
        var gathering = EventGathering(capacity: 2048, queueOutlivesProcess: false, sampleInterval: 15)
        #expect(gathering.watchesSocket)
        gathering.noteRead(at: 15, events: 0)
        #expect(gathering.watchesSocket && !gathering.waitsForSample)
        gathering.begin(at: 20)
        #expect(gathering.deadline == 20 + EventGathering.window && !gathering.watchesSocket)
        gathering.noteRead(at: 20 + EventGathering.window, events: 4)
        #expect(gathering.watchesSocket)
    }

    /// A longer SampleIntervalSec= after a reload: the same rate no longer
    /// fits by the next sample.
    @Test func aLongerSampleIntervalMakesTheSameRateTooMuchToWaitFor() {
        var gathering = EventGathering(capacity: 2048, queueOutlivesProcess: true, sampleInterval: 15)
        gathering.noteRead(at: 15, events: 400)
        #expect(!gathering.watchesSocket)
        gathering.sampleIntervalChanged(to: 60)
        #expect(gathering.watchesSocket, "400 in 15 s come to 1600 in 60 s: watched until a read judges again")
        gathering.noteRead(at: 30, events: 400)
        #expect(gathering.watchesSocket)
        gathering.noteRead(at: 90, events: 100)
        #expect(!gathering.watchesSocket)
    }
}
