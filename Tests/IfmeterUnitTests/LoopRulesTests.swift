import IfmeterCore
import Testing

/// The daemon loop's decisions, without a socket, a clock or a daemon:
/// what wakes it next, whether the watchdog may be told all is well, and
/// where a life change goes.
@Suite struct LoopRulesTests {
    /// (what, now, events due, expected): a schedule made at 100 s with a
    /// 15 s interval (next sample 105) and a 60 s watchdog (next at 160).
    static let dueCases: [(String, Double, Double?, Wakeup?)] = [
        ("nothing due before the sample", 104.9, nil, nil),
        ("the sample at its boundary", 105, nil, .sampleDue),
        ("gathered events before the sample due at once", 106, 105.5, .eventsDue),
        ("events not yet due leave the sample first", 106, 107, .sampleDue),
        ("events due alone", 101, 100.5, .eventsDue),
        ("the watchdog after the sample", 161, nil, .sampleDue),
    ]

    @Test(arguments: dueCases)
    func theMostUrgentWorkComesFirst(_ row: (String, Double, Double?, Wakeup?)) {
        let schedule = LoopSchedule(now: 100, sampleInterval: 15, watchdogInterval: 60)
        #expect(schedule.due(at: row.1, eventsDue: row.2) == row.3, "\(row.0)")
    }

    @Test func theWatchdogIsDueOnceTheSampleIsTaken() {
        var schedule = LoopSchedule(now: 100, sampleInterval: 15, watchdogInterval: 60)
        schedule.sampled(at: 161, interval: 15)
        #expect(schedule.nextSample == 165)
        #expect(schedule.due(at: 161, eventsDue: nil) == .watchdogDue)
        schedule.notifiedWatchdog(at: 161)
        #expect(schedule.nextWatchdog == 221)
        #expect(schedule.deadline(eventsDue: nil) == 165)
        #expect(schedule.deadline(eventsDue: 162) == 162)
    }

    @Test func withoutAWatchdogOnlySamplesAndEventsWake() {
        let schedule = LoopSchedule(now: 0, sampleInterval: 15, watchdogInterval: nil)
        #expect(schedule.nextWatchdog == nil)
        #expect(schedule.deadline(eventsDue: nil) == 15)
        #expect(schedule.due(at: 1e9, eventsDue: nil) == .sampleDue)
    }

    /// Samples fall on multiples of the interval, so every process with that
    /// interval wakes together; one exactly on a boundary waits for the next.
    @Test(arguments: [(0.0, 15.0, 15.0), (14.99, 15, 15), (15, 15, 30), (100.5, 0.5, 101), (7, 60, 60)])
    func samplesFallOnMultiplesOfTheInterval(_ row: (Double, Double, Double)) {
        #expect(LoopSchedule.boundary(after: row.0, interval: row.1) == row.2)
    }

    /// (seconds since the last good sample, expected): three samples of 15 s
    /// and one watchdog interval of 60 s, 105 s in all.
    @Test(arguments: [(0.0, true), (104.9, true), (105, false), (1e6, false)])
    func theWatchdogHearsOnlyOfRecentSamples(_ row: (Double, Bool)) {
        #expect(LoopSchedule.isHealthy(now: 1000 + row.0, lastHealthySample: 1000, sampleInterval: 15, watchdogInterval: 60) == row.1)
    }

    /// (what, commit due, life changes, journal size, route)
    static let routes: [(String, Bool, Bool, Int?, LifeChangeRoute)] = [
        ("a quiet sample: deltas wait in memory, the kernel keeps them", false, false, 100, .nothing),
        ("a tunnel's life between commits: one append", false, true, 100, .journal),
        ("the commit interval passed: a commit, whatever else", true, false, 100, .commit),
        ("a commit due with life changes: the commit takes them", true, true, 100, .commit),
        ("no journal (held elsewhere, unwritable): the store at once", false, true, nil, .commit),
        ("the journal at its bound: the commit empties it", false, true, LifeChangeRoute.journalBound, .commit),
        ("just below its bound: one more append", false, true, LifeChangeRoute.journalBound - 1, .journal),
        ("no journal and nothing to keep", false, false, nil, .nothing),
    ]

    @Test(arguments: routes)
    func aLifeChangeGoesWhereItIsKeptCheapest(_ row: (String, Bool, Bool, Int?, LifeChangeRoute)) {
        #expect(LifeChangeRoute.decide(commitDue: row.1, lifeChanges: row.2, journalSize: row.3) == row.4, "\(row.0)")
    }
}
