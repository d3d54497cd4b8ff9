/// What the daemon may do with the wall clock: date traffic, prune by it, move rows it left in
/// the future. A Raspberry Pi boots with its clock in the past and NTP steps it forward; a wrong
/// RTC boots in the future and is stepped back: counting goes on, dating waits (ifmeterd(8), CLOCKS).
package struct ClockTrust: Sendable, Equatable {
    /// One look at the clocks and at what the system says of them.
    package struct Reading: Sendable, Equatable {
        package var wall: Double
        package var boottime: Double
        /// The kernel's STA_UNSYNC clear, or timesyncd's flag file.
        package var synchronized: Bool
        /// A time service runs that will synchronise it (timesyncd, chrony, ntpd).
        package var syncExpected: Bool

        package init(wall: Double, boottime: Double, synchronized: Bool, syncExpected: Bool) {
            self.wall = wall
            self.boottime = boottime
            self.synchronized = synchronized
            self.syncExpected = syncExpected
        }
    }

    /// Why dating waits, or why it no longer does.
    package enum Hold: Sendable, Equatable {
        case beforeLastCommit(Int64)
        case notSynchronized
    }

    package enum Release: Sendable, Equatable {
        case synchronized, pastLastCommit, waitedOut
    }

    /// What one reading changed.
    package struct Change: Sendable, Equatable {
        /// The wall clock moved this far against the boot clock since the last reading.
        package var step: Double?
        package var released: Release?
    }

    /// A step smaller than this is a slew or a sample's jitter, not a change of the clock.
    package static let stepThreshold = 2.0
    /// A clock a time service never synchronised (an offline box) judges history once it has run this
    /// long unstepped: a prune can wait, but not for ever.
    package static let unsynchronisedTrustAfter = 86_400.0

    package private(set) var hold: Hold?
    private var holdBegan: Double
    /// The boot clock at start, or at the last step: how long the wall clock has run unchanged.
    private var steadySince: Double
    private var offset: Double
    private var reading: Reading
    private var released = false
    private let wait: Double

    /// At start: a clock before the store's last commit is wrong; one a time service has not yet
    /// synchronised may be. Either holds dating until it is fixed, for `wait` seconds at most.
    package init(_ first: Reading, lastCommit: Int64?, wait: Double) {
        reading = first
        offset = first.wall - first.boottime
        holdBegan = first.boottime
        steadySince = first.boottime
        self.wait = wait
        if first.synchronized || wait <= 0 {
            hold = nil
        } else if let lastCommit, first.wall < Double(lastCommit) {
            hold = .beforeLastCommit(lastCommit)
        } else {
            hold = first.syncExpected ? .notSynchronized : nil
        }
    }

    package mutating func observe(_ next: Reading) -> Change {
        var change = Change()
        let nextOffset = next.wall - next.boottime
        if abs(nextOffset - offset) >= Self.stepThreshold {
            change.step = nextOffset - offset
            steadySince = next.boottime
        }
        offset = nextOffset
        reading = next
        guard let hold else { return change }
        if next.synchronized {
            change.released = .synchronized
        } else if case .beforeLastCommit(let last) = hold, !next.syncExpected, next.wall >= Double(last) {
            change.released = .pastLastCommit
        } else if next.boottime - holdBegan >= wait {
            change.released = .waitedOut
        }
        if change.released != nil {
            self.hold = nil
            released = true
        }
        return change
    }

    /// Whether a hold ended since the last call: the sample that saw it commits.
    package mutating func takeRelease() -> Bool {
        defer { released = false }
        return released
    }

    /// Traffic waits undated in memory (no scheduled commit) while this holds.
    package var isHolding: Bool { hold != nil }

    /// Whether the retention prune may run and rows dated after now may be moved to now: not by a
    /// clock a time service was expected to synchronise and has not, until it ran a day unstepped.
    package var mayJudgeHistory: Bool {
        hold == nil && (reading.synchronized || !reading.syncExpected || reading.boottime - steadySince >= Self.unsynchronisedTrustAfter)
    }
}
