import IfmeterTestSupport
import Testing
@testable import IfmeterCore

private func counters(_ rx: UInt64, _ tx: UInt64) -> LinkCounters {
    LinkCounters(rxBytes: rx, txBytes: tx, rxPackets: rx / 100, txPackets: tx / 100)
}

private func link(_ name: String, _ ifindex: Int32, _ rx: UInt64, _ tx: UInt64) -> LinkSample {
    LinkSample(ifindex: ifindex, name: name, kind: "tun", counters: counters(rx, tx))
}

private func life(_ name: String, _ ifindex: Int32, _ rx: UInt64, _ tx: UInt64, at sinceBoot: Double = 100) -> TrackedLife {
    TrackedLife(ifindex: ifindex, name: name, counters: counters(rx, tx), sinceBoot: sinceBoot, firstSeen: 0, lastSeen: 0)
}

private let now = Instant(wall: 1_800_000_000, sinceBoot: 200)

/// Sums deltas by name (bytes only), for compact expectations.
private func bytes(_ outcome: AccountingOutcome) -> [String: [UInt64]] {
    var result: [String: [UInt64]] = [:]
    for delta in outcome.deltas {
        let sum = result[delta.name, default: [0, 0]]
        result[delta.name] = [sum[0] + delta.counters.rxBytes, sum[1] + delta.counters.txBytes]
    }
    return result
}

private func reasons(_ outcome: AccountingOutcome) -> [ResetEvent.Reason] { outcome.events.map(\.reason) }

/// One row of the start-up rules: what the store held, what the kernel shows.
struct StartCase: CustomTestStringConvertible, Sendable {
    var rule: String
    var lastBootID: String?
    /// The namespace of the last commit; the daemon starts in namespace 7.
    var lastNamespace: NamespaceCookie = 7
    var stored: [StoredLife] = []
    var knownNames: Set<String> = []
    /// Links present at the last commit; nil: a store from before that record.
    var present: IfindexTable<String>? = nil
    /// Ifindexes of lives that ended in the last commit's boot and namespace.
    var ended: Set<Int32> = []
    var links: [LinkSample]
    /// Names not watched now (the rest are).
    var unwatched: Set<String> = []
    var expectedBytes: [String: [UInt64]]
    var expectedReasons: [ResetEvent.Reason]
    var expectedEnds: [LifeEnd]
    /// Links counted afterwards (default: every watched link, at its current counters).
    var expectedTracked: [Int32]? = nil
    /// How the last event's detail ends, where it matters.
    var expectedDetailEnding: String? = nil
    var testDescription: String { rule }
}

private func stored(_ bootID: String, _ life: TrackedLife, namespace: NamespaceCookie = 7) -> StoredLife {
    StoredLife(bootID: bootID, namespace: namespace, life: life)
}

@Suite struct CounterTrackerStartTests {
    static let cases: [StartCase] = [
        StartCase(
            rule: "2: same boot, namespace, ifindex and name: count what passed while stopped",
            lastBootID: "B", stored: [stored("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [link("tun0", 5, 1500, 2600)],
            expectedBytes: ["tun0": [500, 600]], expectedReasons: [], expectedEnds: []),
        StartCase(
            rule: "identity: the same ifindex under another name after a stop is a rename or a replacement: counted from now, tail lost",
            lastBootID: "B", stored: [stored("B", life("wwan0", 5, 1000, 2000))], knownNames: ["wwan0"],
            links: [link("lte0", 5, 1100, 2000)],
            expectedBytes: [:], expectedReasons: [.renamedOrReplaced], expectedEnds: [.renamedOrReplaced],
            expectedDetailEnding: "lte0 is counted from now"),
        StartCase(
            rule: "identity: renamed while stopped to a name not watched: the event says it is not counted",
            lastBootID: "B", stored: [stored("B", life("wwan0", 5, 1000, 2000))], knownNames: ["wwan0"],
            links: [link("xa", 5, 1100, 2000)], unwatched: ["xa"],
            expectedBytes: [:], expectedReasons: [.renamedOrReplaced], expectedEnds: [.renamedOrReplaced],
            expectedDetailEnding: "xa is not counted (not watched)"),
        StartCase(
            rule: "identity: delete tun0 and rename tun1 to tun0 while stopped never counts tun1 twice",
            lastBootID: "B",
            stored: [stored("B", life("tun0", 5, 100_000, 100_000)), stored("B", life("tun1", 6, 210_000, 10_000))],
            knownNames: ["tun0", "tun1"], present: [5: "tun0", 6: "tun1"],
            links: [link("tun0", 6, 310_000, 20_000)],
            expectedBytes: [:], expectedReasons: [.removedWhileStopped, .renamedOrReplaced],
            expectedEnds: [.removedWhileStopped, .renamedOrReplaced]),
        StartCase(
            rule: "2+6: same life but counters went down while stopped: driver reset",
            lastBootID: "B", stored: [stored("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [link("tun0", 5, 300, 2100)],
            expectedBytes: ["tun0": [300, 100]], expectedReasons: [.counterReset], expectedEnds: []),
        StartCase(
            rule: "3: same name, new ifindex: recreated, counted from zero, gap recorded",
            lastBootID: "B", stored: [stored("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [link("tun0", 9, 40, 70)],
            expectedBytes: ["tun0": [40, 70]], expectedReasons: [.recreated], expectedEnds: [.removedWhileStopped]),
        StartCase(
            rule: "3: the successor was present, unwatched, at the last save: its past is not counted",
            lastBootID: "B", stored: [stored("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            present: [5: "tun0", 9: "tap3"],
            links: [link("tun0", 9, 40, 70)],
            expectedBytes: [:], expectedReasons: [.recreated], expectedEnds: [.removedWhileStopped]),
        StartCase(
            rule: "3: gone without successor",
            lastBootID: "B", stored: [stored("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [],
            expectedBytes: [:], expectedReasons: [.removedWhileStopped], expectedEnds: [.removedWhileStopped]),
        StartCase(
            rule: "4: boot id differs: counted from zero, reboot recorded",
            lastBootID: "A", stored: [stored("A", life("tun0", 5, 1_000_000, 2_000_000))], knownNames: ["tun0"],
            links: [link("tun0", 5, 40, 70)],
            expectedBytes: ["tun0": [40, 70]], expectedReasons: [.reboot], expectedEnds: [.reboot]),
        StartCase(
            rule: "4: known name, closed before the reboot: counted since boot",
            lastBootID: "A", knownNames: ["tun0"],
            links: [link("tun0", 3, 40, 70)],
            expectedBytes: ["tun0": [40, 70]], expectedReasons: [], expectedEnds: []),
        StartCase(
            rule: "identity: another namespace in the same boot: same name and ifindex are another device",
            lastBootID: "B", lastNamespace: 3, stored: [stored("B", life("tun0", 2, 500_000, 300_000), namespace: 3)],
            knownNames: ["tun0"], present: [1: "lo", 2: "tun0"],
            links: [link("tun0", 2, 100, 0)],
            expectedBytes: [:], expectedReasons: [.namespaceChanged, .historyUnknown], expectedEnds: [.namespaceChanged]),
        StartCase(
            rule: "5: absent at our last save in this boot and namespace: appeared while stopped, from zero",
            lastBootID: "B", present: [1: "lo"],
            links: [link("wg0", 12, 400, 700)],
            expectedBytes: ["wg0": [400, 700]], expectedReasons: [.appearedWhileStopped], expectedEnds: []),
        StartCase(
            rule: "identity: absent at the last save on the ifindex of a life ended here: moved in (that life back), not counted",
            lastBootID: "B", present: [1: "lo"], ended: [12],
            links: [link("tun0", 12, 25_000, 700)],
            expectedBytes: [:], expectedReasons: [.movedIn], expectedEnds: []),
        StartCase(
            rule: "3+identity: a successor on the ifindex of a life ended here moved in: not counted",
            lastBootID: "B", stored: [stored("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            present: [1: "lo", 5: "tun0"], ended: [9],
            links: [link("tun0", 9, 40, 70)],
            expectedBytes: [:], expectedReasons: [.recreated, .movedIn], expectedEnds: [.removedWhileStopped]),
        StartCase(
            rule: "5: a store without the presence record: absent means appeared while stopped",
            lastBootID: "B",
            links: [link("wg0", 12, 400, 700)],
            expectedBytes: ["wg0": [400, 700]], expectedReasons: [.appearedWhileStopped], expectedEnds: []),
        StartCase(
            rule: "5: present but unwatched at the last save, watched now (Watch= changed): baseline, past not counted",
            lastBootID: "B", present: [1: "lo", 4: "veth0"],
            links: [link("veth0", 4, 52_000_000, 52_000_000)],
            expectedBytes: [:], expectedReasons: [.historyUnknown], expectedEnds: []),
        StartCase(
            rule: "5: watched at the last save, unwatched now: counted up to now, then closed as unwatched",
            lastBootID: "B", stored: [stored("B", life("veth0", 4, 1000, 1000))], knownNames: ["veth0"], present: [4: "veth0"],
            links: [link("veth0", 4, 1500, 1200)], unwatched: ["veth0"],
            expectedBytes: ["veth0": [500, 200]], expectedReasons: [.unwatched], expectedEnds: [.unwatched], expectedTracked: []),
        StartCase(
            rule: "5: an unwatched link is never counted",
            lastBootID: "B", present: [1: "lo"],
            links: [link("lo", 1, 5000, 5000), link("veth9", 9, 10, 10)], unwatched: ["lo", "veth9"],
            expectedBytes: [:], expectedReasons: [], expectedEnds: [], expectedTracked: []),
        StartCase(
            rule: "5: first run ever: baseline, earlier traffic unknown and not counted",
            lastBootID: nil,
            links: [link("wlan0", 3, 9_000_000, 1_000_000)],
            expectedBytes: [:], expectedReasons: [.historyUnknown], expectedEnds: []),
        StartCase(
            rule: "5: first run of this boot, unknown interface: baseline",
            lastBootID: "A", knownNames: ["tun0"],
            links: [link("wlan0", 3, 9_000_000, 1_000_000)],
            expectedBytes: [:], expectedReasons: [.historyUnknown], expectedEnds: []),
        StartCase(
            rule: "8: a 64-bit counter that went up is real traffic at any speed",
            lastBootID: "B", stored: [stored("B", life("tun0", 5, 0, 0, at: 199))], knownNames: ["tun0"],
            links: [link("tun0", 5, 50_000_000_000, 10)],
            expectedBytes: ["tun0": [50_000_000_000, 10]], expectedReasons: [], expectedEnds: []),
    ]

    @Test(arguments: cases)
    func startRules(_ testCase: StartCase) {
        // The daemon starts in boot "B", namespace 7; "A" is the boot before.
        var tracker = CounterTracker(bootID: "B", namespace: 7, settings: .init(width: .bits64, maxRateBitsPerSecond: 1_000_000_000))
        let outcome = tracker.start(
            stored: StoredState(
                lastBootID: testCase.lastBootID, lastNamespace: testCase.lastNamespace, openLives: testCase.stored,
                knownNames: testCase.knownNames, presentLinks: testCase.present, endedIndexes: testCase.ended),
            links: testCase.links, at: now, isWatched: { !testCase.unwatched.contains($0.name) })
        #expect(bytes(outcome) == testCase.expectedBytes)
        #expect(reasons(outcome) == testCase.expectedReasons)
        #expect(outcome.endedLives.map { $0.end } == testCase.expectedEnds)
        if let ending = testCase.expectedDetailEnding { #expect(outcome.events.last?.detail.hasSuffix(ending) == true, "\(outcome.events)") }
        // Every watched link is tracked afterwards, at its current counters.
        let expectedTracked = testCase.expectedTracked ?? testCase.links.filter { !testCase.unwatched.contains($0.name) }.map(\.ifindex)
        #expect(tracker.lives.keys.sorted() == expectedTracked.sorted())
        for link in testCase.links where expectedTracked.contains(link.ifindex) {
            #expect(tracker.lives[link.ifindex]?.counters == link.counters)
            #expect(tracker.lives[link.ifindex]?.name == link.name)
        }
        // Every link is remembered as present, watched or not.
        #expect(Dictionary(uniqueKeysWithValues: tracker.presentLinks.map { ($0.key, $0.value) })
            == Dictionary(uniqueKeysWithValues: testCase.links.map { ($0.ifindex, $0.name) }))
    }
}

/// A source that lists an ifindex twice (getifaddrs racing a rename): the
/// first listing is the link for every rule, and each life's link is
/// recorded present under the life's name.
@Test func startTakesTheFirstOfAnIfindexListedTwice() {
    var tracker = CounterTracker(bootID: "B", namespace: 7)
    // "b", gone from ifindex 9, would be taken over by name by the second listing of ifindex 5.
    let outcome = tracker.start(
        stored: StoredState(lastBootID: "B", lastNamespace: 7, openLives: [stored("B", life("b", 9, 10, 10))], knownNames: ["b"], presentLinks: [9: "b"]),
        links: [link("a", 5, 0, 0), link("b", 5, 0, 0)], at: now)
    #expect(reasons(outcome) == [.removedWhileStopped, .appearedWhileStopped])
    #expect(tracker.lives[5]?.name == "a")
    #expect(tracker.presentLinks == [5: "a"])
}

@Suite struct CounterTrackerRunningTests {
    private func running(_ lives: [LinkSample], width: CounterWidth = .bits64) -> CounterTracker {
        var tracker = CounterTracker(bootID: "B", settings: .init(width: width, maxRateBitsPerSecond: 1_000_000_000))
        _ = tracker.start(stored: StoredState(lastBootID: "B"), links: [], at: Instant(wall: 0, sinceBoot: 100))
        for sample in lives {
            _ = tracker.observe(event: LinkEvent(kind: .new, link: sample), at: Instant(wall: 0, sinceBoot: 100))
        }
        return tracker
    }

    /// Rule 4's loss: unknown after a kill or a power cut; after a clean stop, none for a link that
    /// was down then, else at most the seconds from the stop to this boot's start.
    static let rebootLosses: [(stop: CleanStop?, now: Instant, loss: ResetEvent.Loss)] = [
        (nil, Instant(wall: 1_800_000_100, sinceBoot: 20), .unknown),
        (CleanStop(bootID: "old", at: 1_800_000_000, linksUp: []), Instant(wall: 1_800_000_100, sinceBoot: 20), .none),
        (CleanStop(bootID: "old", at: 1_800_000_000, linksUp: [4]), Instant(wall: 1_800_000_100, sinceBoot: 20), .unseen(seconds: 80)),
        (CleanStop(bootID: "old", at: 1_800_000_000, linksUp: [4]), Instant(wall: 1_799_999_000, sinceBoot: 20), .unknown),
    ]

    @Test(arguments: rebootLosses)
    func rule4ALossAfterACleanStopIsBounded(_ stop: CleanStop?, _ now: Instant, _ loss: ResetEvent.Loss) {
        let life = TrackedLife(ifindex: 4, name: "tun0", counters: .zero, sinceBoot: 10, firstSeen: 1_799_990_000, lastSeen: 1_800_000_000)
        #expect(CounterTracker.rebootLoss(of: life, stop: stop, now: now).loss == loss)
        #expect(CleanStop(text: CleanStop(bootID: "b-1", at: 7, linksUp: [4, 12]).text) == CleanStop(bootID: "b-1", at: 7, linksUp: [4, 12]))
    }

    @Test func rule1NewLinkIsABaseline() {
        var tracker = running([])
        // Moved in from another namespace: its past was not seen here, and
        // nothing of this namespace's is missing.
        let outcome = tracker.observe(event: LinkEvent(kind: .new, link: link("tun0", 4, 5000, 5000)), at: now)
        #expect(outcome.deltas.isEmpty)
        #expect(reasons(outcome) == [.movedIn])
        #expect(outcome.events.first?.loss == ResetEvent.Loss.none)
        // A new device: no event at all.
        #expect(tracker.observe(event: LinkEvent(kind: .new, link: link("tun1", 5, 0, 0)), at: now).events.isEmpty)
        let later = tracker.observe(dump: [link("tun0", 4, 5100, 5200)], at: now, eventsWereLost: false)
        #expect(bytes(later) == ["tun0": [100, 200]])
    }

    /// A first message with traffic is a move only when no message before
    /// it could be missing: after an overrun its creation may be among the
    /// lost, and a message read at start may be the last of a link created
    /// while the daemon was stopped. Then its past is not counted either,
    /// but the loss is unknown, not none.
    @Test(arguments: [
        (CounterTracker.MissedMessages?.none, ResetEvent.Reason.movedIn, ResetEvent.Loss.none),
        (.lost, .eventsLost, .unknown),
        (.beforeStart, .historyUnknown, .unknown),
    ])
    func rule1AFirstMessageWithTrafficIsAMoveOnlyWhenNoMessageWasMissed(
        _ missed: CounterTracker.MissedMessages?, _ reason: ResetEvent.Reason, _ loss: ResetEvent.Loss
    ) {
        var tracker = running([])
        let outcome = tracker.observe(event: LinkEvent(kind: .new, link: link("tun0", 4, 300, 0)), at: now, missed: missed)
        #expect(outcome.deltas.isEmpty)
        #expect(reasons(outcome) == [reason])
        #expect(outcome.events.first?.loss == loss)
        #expect(tracker.lives[4]?.counters == counters(300, 0))
        // A first message at zero is a creation however it was read: no event.
        #expect(tracker.observe(event: LinkEvent(kind: .new, link: link("tun1", 5, 0, 0)), at: now, missed: missed).events.isEmpty)
    }

    @Test func rule6DriverResetCountsFromZeroWithoutPhantomTraffic() {
        var tracker = running([link("wwan0", 2, 0, 0)])
        _ = tracker.observe(dump: [link("wwan0", 2, 900, 800)], at: now, eventsWereLost: false)
        let outcome = tracker.observe(dump: [link("wwan0", 2, 30, 820)], at: now, eventsWereLost: false)
        #expect(bytes(outcome) == ["wwan0": [30, 20]])
        #expect(reasons(outcome) == [.counterReset])
    }

    @Test func rule6WrapOnA32BitSource() {
        // getifaddrs: bytes wrapped past 2^32, packets did not.
        let before = LinkSample(ifindex: 2, name: "wlan0", counters: LinkCounters(rxBytes: 4_294_967_000, rxPackets: 70))
        let after = LinkSample(ifindex: 2, name: "wlan0", counters: LinkCounters(rxBytes: 704, rxPackets: 71))
        var tracker = running([before], width: .bits32)
        let outcome = tracker.observe(dump: [after], at: now, eventsWereLost: false)
        #expect(bytes(outcome) == ["wlan0": [1000, 0]])
        #expect(outcome.events.isEmpty)
    }

    /// A message read after a dump may be older than it. On a 32-bit
    /// source a message from before a wrap the dump already counted reads
    /// larger: it is the earlier read, never ~4 GiB of traffic.
    @Test func rule6AStaleMessageFromBeforeAWrapIsNoTraffic() {
        let before = LinkSample(ifindex: 2, name: "wlan0", counters: LinkCounters(rxBytes: 0xFFFF_F000))
        var tracker = running([before], width: .bits32)
        let wrapped = tracker.observe(dump: [LinkSample(ifindex: 2, name: "wlan0", counters: LinkCounters(rxBytes: 0x100))], at: now, eventsWereLost: false)
        #expect(bytes(wrapped) == ["wlan0": [0x1100, 0]])
        let stale = tracker.observe(event: LinkEvent(kind: .new, link: LinkSample(ifindex: 2, name: "wlan0", counters: LinkCounters(rxBytes: 0xFFFF_F800))), at: now)
        #expect(stale.deltas.isEmpty)
        #expect(stale.events.isEmpty)
        let next = tracker.observe(dump: [LinkSample(ifindex: 2, name: "wlan0", counters: LinkCounters(rxBytes: 0x200))], at: now, eventsWereLost: false)
        #expect(bytes(next) == ["wlan0": [0x100, 0]])
        #expect(next.events.isEmpty)
    }

    @Test func rule7DeleteCountsTheFinalCountersAndGuardsVethRx() {
        var tracker = running([link("tun0", 4, 0, 0)])
        _ = tracker.observe(dump: [link("tun0", 4, 100, 100)], at: now, eventsWereLost: false)
        // veth-like: the final message reads rx 0 but tx moved on.
        let outcome = tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun0", 4, 0, 350)), at: now)
        #expect(bytes(outcome) == ["tun0": [0, 250]])
        #expect(reasons(outcome) == [.removed])
        // rx since the last sample is in no message: a loss, said.
        #expect(outcome.events.map(\.loss) == [.unknown])
        #expect(outcome.endedLives.map(\.end) == [.removed])
        #expect(tracker.lives[4] == nil)
    }

    @Test func rule7MoveToAnotherNamespaceClosesWithoutEvent() {
        var tracker = running([link("tun0", 4, 0, 0)])
        let outcome = tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: true), link: link("tun0", 4, 10, 20)), at: now)
        #expect(bytes(outcome) == ["tun0": [10, 20]])
        #expect(outcome.events.isEmpty)
        #expect(outcome.endedLives.map(\.end) == [.movedAway])
    }

    @Test func lateEventNeverMovesCountersBack() {
        var tracker = running([link("tun0", 4, 0, 0)])
        _ = tracker.observe(dump: [link("tun0", 4, 1000, 1000)], at: now, eventsWereLost: false)
        let stale = tracker.observe(event: LinkEvent(kind: .new, link: link("tun0", 4, 10, 10)), at: now)
        #expect(stale.deltas.isEmpty)
        #expect(stale.events.isEmpty)
        let next = tracker.observe(dump: [link("tun0", 4, 1010, 1000)], at: now, eventsWereLost: false)
        #expect(bytes(next) == ["tun0": [10, 0]])
    }

    @Test func rule8ImplausibleDeltaOnA32BitSourceIsDiscardedAndRecorded() {
        var tracker = running([link("wlan0", 4, 0, 0)], width: .bits32)
        tracker.settings.maxRateBitsPerSecond = 1_000_000
        // 1 Mbit/s for 100 s allows 12.5 MB; 20 MB is a wrong wrap guess.
        let outcome = tracker.observe(dump: [link("wlan0", 4, 20_000_000, 5)], at: now, eventsWereLost: false)
        #expect(outcome.deltas.isEmpty)
        #expect(outcome.events.first?.loss == .discarded(rxBytes: 20_000_000, txBytes: 5))
        let next = tracker.observe(dump: [link("wlan0", 4, 20_000_100, 5)], at: Instant(wall: 0, sinceBoot: 210), eventsWereLost: false)
        #expect(bytes(next) == ["wlan0": [100, 0]])
    }

    @Test(arguments: [10.0, 100.0, 400.0])
    func rule8A64BitCounterThatWentUpIsRealAtAnySpeed(gigabitsPerSecond: Double) {
        var tracker = running([link("veth0", 4, 0, 0)])
        // One 15 s sample at line rate, far over MaxRate's 1 Gbit/s.
        let bytesIn15s = UInt64(gigabitsPerSecond * 1e9 / 8 * 15)
        let outcome = tracker.observe(dump: [link("veth0", 4, bytesIn15s, bytesIn15s / 2)], at: Instant(wall: 0, sinceBoot: 115), eventsWereLost: false)
        #expect(bytes(outcome) == ["veth0": [bytesIn15s, bytesIn15s / 2]])
        #expect(outcome.events.isEmpty)
    }

    @Test func rule9LostEventsReconcileAgainstTheDump() {
        var tracker = running([link("tun0", 4, 0, 0), link("tun1", 5, 0, 0)])
        // tun1 vanished while events were lost; tun2 appeared, created or
        // moved in: no message says which, so only what follows is counted.
        let outcome = tracker.observe(dump: [link("tun0", 4, 10, 0), link("tun2", 6, 30, 40)], at: now, eventsWereLost: true)
        #expect(bytes(outcome) == ["tun0": [10, 0]])
        #expect(reasons(outcome) == [.eventsLost, .eventsLost])
        #expect(outcome.events.map(\.name) == ["tun2", "tun1"])
        #expect(outcome.endedLives.map(\.life.name) == ["tun1"])
        #expect(tracker.lives[6]?.counters == counters(30, 40))
    }

    @Test func missingFromAnOrdinaryDumpWaitsForItsDelete() {
        var tracker = running([link("tun0", 4, 0, 0)])
        let outcome = tracker.observe(dump: [], at: now, eventsWereLost: false)
        #expect(outcome.endedLives.isEmpty)
        let deleted = tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun0", 4, 77, 88)), at: now)
        #expect(bytes(deleted) == ["tun0": [77, 88]])
    }

    @Test func aLinkFirstSeenInADumpWaitsForItsNewlinkWhichTellsNewFromMovedIn() {
        var tracker = running([])
        // Created between the event read and the dump: its RTM_NEWLINK is queued.
        #expect(tracker.observe(dump: [link("tun0", 4, 700, 0)], at: now, eventsWereLost: false).deltas.isEmpty)
        #expect(tracker.lives[4] == nil)
        _ = tracker.observe(event: LinkEvent(kind: .new, link: link("tun0", 4, 0, 0)), at: now)
        #expect(bytes(tracker.observe(dump: [link("tun0", 4, 900, 50)], at: now, eventsWereLost: false)) == ["tun0": [900, 50]])
    }

    @Test func aWatchChangeNeverCountsThePast() {
        var tracker = running([])
        let veth = link("veth0", 4, 0, 0)
        _ = tracker.observe(event: LinkEvent(kind: .new, link: veth), at: now, isWatched: { _ in false })
        // 52 MB while unwatched.
        #expect(tracker.observe(dump: [link("veth0", 4, 52_000_000, 0)], at: now, eventsWereLost: false, isWatched: { _ in false }).deltas.isEmpty)
        #expect(tracker.lives.isEmpty)
        // Watch= widened by a reload: a baseline, the past not counted.
        let widened = tracker.rewatch(links: [link("veth0", 4, 52_000_000, 0)], at: now, isWatched: { _ in true })
        #expect(widened.deltas.isEmpty)
        #expect(reasons(widened) == [.historyUnknown])
        #expect(bytes(tracker.observe(dump: [link("veth0", 4, 52_000_500, 0)], at: now, eventsWereLost: false)) == ["veth0": [500, 0]])
        // Narrowed again: counted up to now, closed as unwatched.
        let narrowed = tracker.rewatch(links: [link("veth0", 4, 52_000_800, 0)], at: now, isWatched: { _ in false })
        #expect(bytes(narrowed) == ["veth0": [300, 0]])
        #expect(narrowed.endedLives.map(\.end) == [.unwatched])
        #expect(tracker.lives.isEmpty)
        #expect(tracker.presentLinks == [4: "veth0"])
    }

    @Test func anUnwatchedLinkRenamedIntoAWatchedNameStartsFromItsCurrentCounters() {
        var tracker = running([])
        let watched: CounterTracker.WatchPolicy = { $0.name.hasPrefix("wg") }
        _ = tracker.observe(event: LinkEvent(kind: .new, link: link("eth9", 4, 0, 0)), at: now, isWatched: watched)
        let renamed = tracker.observe(event: LinkEvent(kind: .new, link: link("wg0", 4, 8000, 8000)), at: now, isWatched: watched)
        #expect(renamed.deltas.isEmpty)
        #expect(reasons(renamed) == [.historyUnknown])
        #expect(tracker.lives[4]?.counters == counters(8000, 8000))
    }

    @Test func aMoveAwayAndBackNeverCountsTheOtherNamespacesTraffic() {
        var tracker = running([link("tun0", 4, 0, 0)])
        _ = tracker.observe(dump: [link("tun0", 4, 110_000, 0)], at: now, eventsWereLost: false)
        let away = tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: true), link: link("tun0", 4, 110_000, 0)), at: now)
        #expect(away.endedLives.map(\.end) == [.movedAway])
        // 50,000 bytes passed in the other namespace; back with the same ifindex.
        let back = tracker.observe(event: LinkEvent(kind: .new, link: link("tun0", 4, 160_000, 0)), at: now)
        #expect(back.deltas.isEmpty)
        #expect(bytes(tracker.observe(dump: [link("tun0", 4, 170_000, 0)], at: now, eventsWereLost: false)) == ["tun0": [10_000, 0]])
    }

    @Test func churnOfShortLivesLosesNothing() {
        var tracker = running([])
        var total: [UInt64] = [0, 0]
        for life in 0..<50 {
            let ifindex = Int32(10 + life)
            _ = tracker.observe(event: LinkEvent(kind: .new, link: link("tun0", ifindex, 0, 0)), at: now)
            let outcome = tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun0", ifindex, 300, 500)), at: now)
            total[0] += bytes(outcome)["tun0"]?[0] ?? 0
            total[1] += bytes(outcome)["tun0"]?[1] ?? 0
        }
        #expect(total == [15_000, 25_000])
        #expect(tracker.lives.isEmpty)
    }
}
