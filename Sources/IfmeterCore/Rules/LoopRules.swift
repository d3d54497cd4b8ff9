/// What woke the daemon's loop: each case is one named step of `Daemon.run`.
package enum Wakeup: Equatable, Sendable {
    /// SIGHUP (reload), or SIGTERM and SIGINT (stop).
    case signal(Int32)
    case eventsReadable
    case eventsDue
    case sampleDue
    case watchdogDue
}

/// When the loop's timed work falls due, on the monotonic clock.
package struct LoopSchedule: Equatable, Sendable {
    package private(set) var nextSample: Double
    package private(set) var nextWatchdog: Double?
    /// Half of systemd's WatchdogSec=, nil without a watchdog.
    package let watchdogInterval: Double?

    package init(now: Double, sampleInterval: Double, watchdogInterval: Double?) {
        nextSample = Self.boundary(after: now, interval: sampleInterval)
        self.watchdogInterval = watchdogInterval
        nextWatchdog = watchdogInterval.map { now + $0 }
    }

    /// The next multiple of `interval` after `time`: every process sampling at that interval shares its wakeups.
    package static func boundary(after time: Double, interval: Double) -> Double {
        ((time / interval).rounded(.down) + 1) * interval
    }

    package func deadline(eventsDue: Double?) -> Double {
        min(nextSample, nextWatchdog ?? .infinity, eventsDue ?? .infinity)
    }

    /// Gathered events before the sample (which would read them too), the watchdog last.
    package func due(at now: Double, eventsDue: Double?) -> Wakeup? {
        if let eventsDue, now >= eventsDue { return .eventsDue }
        if now >= nextSample { return .sampleDue }
        if let nextWatchdog, now >= nextWatchdog { return .watchdogDue }
        return nil
    }

    package mutating func sampled(at now: Double, interval: Double) { nextSample = Self.boundary(after: now, interval: interval) }

    package mutating func notifiedWatchdog(at now: Double) { nextWatchdog = watchdogInterval.map { now + $0 } }

    /// Whether WATCHDOG=1 is honest: the kernel was read within three samples and a watchdog
    /// interval, so a wedged dump or store lets systemd restart the daemon.
    package static func isHealthy(now: Double, lastHealthySample: Double, sampleInterval: Double, watchdogInterval: Double) -> Bool {
        now - lastHealthySample < 3 * sampleInterval + watchdogInterval
    }
}

/// Where the life changes a sample or an event read produced go.
package enum LifeChangeRoute: Equatable, Sendable {
    /// Deltas of lives that go on wait for the commit: the kernel still holds them.
    case nothing
    case journal
    case commit

    /// The journal size at which a life change commits instead: it bounds the file and its records in memory.
    package static let journalBound = 256 << 10

    /// - Parameter journalSize: the open journal's size in bytes; nil without one.
    package static func decide(commitDue: Bool, lifeChanges: Bool, journalSize: Int?) -> LifeChangeRoute {
        if commitDue { return .commit }
        guard lifeChanges else { return .nothing }
        guard let journalSize, journalSize < journalBound else { return .commit }
        return .journal
    }
}
