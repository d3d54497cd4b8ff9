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
    var stored: [(bootID: String, life: TrackedLife)]
    var knownNames: Set<String>
    var links: [LinkSample]
    var expectedBytes: [String: [UInt64]]
    var expectedReasons: [ResetEvent.Reason]
    var expectedEnds: [LifeEnd]
    var testDescription: String { rule }
}

@Suite struct CounterTrackerStartTests {
    static let cases: [StartCase] = [
        StartCase(
            rule: "2: same boot and ifindex: count what passed while stopped",
            lastBootID: "B", stored: [("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [link("tun0", 5, 1500, 2600)],
            expectedBytes: ["tun0": [500, 600]], expectedReasons: [], expectedEnds: []),
        StartCase(
            rule: "2: renamed while stopped: same life, totals under the new name",
            lastBootID: "B", stored: [("B", life("wwan0", 5, 1000, 2000))], knownNames: ["wwan0"],
            links: [link("lte0", 5, 1100, 2000)],
            expectedBytes: ["lte0": [100, 0]], expectedReasons: [], expectedEnds: []),
        StartCase(
            rule: "2+6: same life but counters went down while stopped: driver reset",
            lastBootID: "B", stored: [("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [link("tun0", 5, 300, 2100)],
            expectedBytes: ["tun0": [300, 100]], expectedReasons: [.counterReset], expectedEnds: []),
        StartCase(
            rule: "3: same name, new ifindex: recreated, counted from zero, gap recorded",
            lastBootID: "B", stored: [("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [link("tun0", 9, 40, 70)],
            expectedBytes: ["tun0": [40, 70]], expectedReasons: [.recreated], expectedEnds: [.removedWhileStopped]),
        StartCase(
            rule: "3: gone without successor",
            lastBootID: "B", stored: [("B", life("tun0", 5, 1000, 2000))], knownNames: ["tun0"],
            links: [],
            expectedBytes: [:], expectedReasons: [.removedWhileStopped], expectedEnds: [.removedWhileStopped]),
        StartCase(
            rule: "4: boot id differs: counted from zero, reboot recorded",
            lastBootID: "A", stored: [("A", life("tun0", 5, 1_000_000, 2_000_000))], knownNames: ["tun0"],
            links: [link("tun0", 5, 40, 70)],
            expectedBytes: ["tun0": [40, 70]], expectedReasons: [.reboot], expectedEnds: [.reboot]),
        StartCase(
            rule: "4: known name, closed before the reboot: counted since boot",
            lastBootID: "A", stored: [], knownNames: ["tun0"],
            links: [link("tun0", 3, 40, 70)],
            expectedBytes: ["tun0": [40, 70]], expectedReasons: [], expectedEnds: []),
        StartCase(
            rule: "5: absent at our last save in this boot: appeared while stopped, from zero",
            lastBootID: "B", stored: [], knownNames: [],
            links: [link("wg0", 12, 400, 700)],
            expectedBytes: ["wg0": [400, 700]], expectedReasons: [.appearedWhileStopped], expectedEnds: []),
        StartCase(
            rule: "5: first run ever: baseline, earlier traffic unknown and not counted",
            lastBootID: nil, stored: [], knownNames: [],
            links: [link("wlan0", 3, 9_000_000, 1_000_000)],
            expectedBytes: [:], expectedReasons: [.historyUnknown], expectedEnds: []),
        StartCase(
            rule: "5: first run of this boot, unknown interface: baseline",
            lastBootID: "A", stored: [], knownNames: ["tun0"],
            links: [link("wlan0", 3, 9_000_000, 1_000_000)],
            expectedBytes: [:], expectedReasons: [.historyUnknown], expectedEnds: []),
        StartCase(
            rule: "8: implausible delta while stopped is discarded",
            lastBootID: "B", stored: [("B", life("tun0", 5, 0, 0, at: 199))], knownNames: ["tun0"],
            links: [link("tun0", 5, 50_000_000_000, 10)],
            expectedBytes: [:], expectedReasons: [.implausible], expectedEnds: []),
    ]

    @Test(arguments: cases)
    func startRules(_ testCase: StartCase) {
        // The daemon starts in boot "B"; "A" is the boot before.
        var tracker = CounterTracker(bootID: "B", settings: .init(width: .bits64, maxRateBitsPerSecond: 1_000_000_000))
        let outcome = tracker.start(
            stored: StoredState(lastBootID: testCase.lastBootID, openLives: testCase.stored, knownNames: testCase.knownNames),
            links: testCase.links, at: now)
        #expect(bytes(outcome) == testCase.expectedBytes)
        #expect(reasons(outcome) == testCase.expectedReasons)
        #expect(outcome.endedLives.map(\.end) == testCase.expectedEnds)
        // Every present link is tracked afterwards, at its current counters.
        for link in testCase.links {
            #expect(tracker.lives[link.ifindex]?.counters == link.counters)
            #expect(tracker.lives[link.ifindex]?.name == link.name)
        }
    }
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

    @Test func rule1NewLinkIsABaseline() {
        var tracker = running([])
        // Moved in from another namespace: its past was not seen here.
        let outcome = tracker.observe(event: LinkEvent(kind: .new, link: link("tun0", 4, 5000, 5000)), at: now)
        #expect(outcome.deltas.isEmpty)
        #expect(outcome.events.isEmpty)
        let later = tracker.observe(dump: [link("tun0", 4, 5100, 5200)], at: now, eventsWereLost: false)
        #expect(bytes(later) == ["tun0": [100, 200]])
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

    @Test func rule7DeleteCountsTheFinalCountersAndGuardsVethRx() {
        var tracker = running([link("tun0", 4, 0, 0)])
        _ = tracker.observe(dump: [link("tun0", 4, 100, 100)], at: now, eventsWereLost: false)
        // veth-like: the final message reads rx 0 but tx moved on.
        let outcome = tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun0", 4, 0, 350)), at: now)
        #expect(bytes(outcome) == ["tun0": [0, 250]])
        #expect(reasons(outcome) == [.removed])
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

    @Test func rule8ImplausibleDeltaIsDiscardedAndRecorded() {
        var tracker = running([link("tun0", 4, 0, 0)])
        // 1 Gbit/s for 100 s allows 12.5 GB; 20 GB is a glitch.
        let outcome = tracker.observe(dump: [link("tun0", 4, 20_000_000_000, 5)], at: now, eventsWereLost: false)
        #expect(outcome.deltas.isEmpty)
        #expect(outcome.events.first?.loss == .discarded(rxBytes: 20_000_000_000, txBytes: 5))
        let next = tracker.observe(dump: [link("tun0", 4, 20_000_000_100, 5)], at: Instant(wall: 0, sinceBoot: 210), eventsWereLost: false)
        #expect(bytes(next) == ["tun0": [100, 0]])
    }

    @Test func rule9LostEventsReconcileAgainstTheDump() {
        var tracker = running([link("tun0", 4, 0, 0), link("tun1", 5, 0, 0)])
        // tun1 vanished while events were lost; tun2 appeared.
        let outcome = tracker.observe(dump: [link("tun0", 4, 10, 0), link("tun2", 6, 30, 40)], at: now, eventsWereLost: true)
        #expect(bytes(outcome) == ["tun0": [10, 0], "tun2": [30, 40]])
        #expect(reasons(outcome) == [.eventsLost])
        #expect(outcome.endedLives.map(\.life.name) == ["tun1"])
    }

    @Test func missingFromAnOrdinaryDumpWaitsForItsDelete() {
        var tracker = running([link("tun0", 4, 0, 0)])
        let outcome = tracker.observe(dump: [], at: now, eventsWereLost: false)
        #expect(outcome.endedLives.isEmpty)
        let deleted = tracker.observe(event: LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: link("tun0", 4, 77, 88)), at: now)
        #expect(bytes(deleted) == ["tun0": [77, 88]])
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
