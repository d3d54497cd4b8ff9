/// When the daemon reads the link events waiting in its socket. Where the queue outlives the
/// process (`queueOutlivesProcess`), a kill loses nothing queued, so events wait for the sample
/// unless their rate would fill a quarter of `capacity` by then; otherwise bursts are gathered.
package struct EventGathering: Sendable, Equatable {
    /// A burst (a tunnel created, addressed, brought up) is read this long after its first event.
    package static let window = 0.020
    /// Under churn (`churnReads` reads within `spacing`) bursts are read together, one read a
    /// `spacing`: most of the CPU saved, the crash window still short (bench/TRIES.md).
    package static let spacing = 2.0
    package static let churnReads = 3
    /// A burst's timer slack: the sample's (up to a second) would stretch the crash window.
    package static let slack = 0.001

    /// When the waiting events are to be read (monotonic seconds).
    package private(set) var deadline: Double?
    /// Whether events wait for the next sample, the socket unwatched.
    package private(set) var waitsForSample = false
    private var reads: [Double] = []
    private var churning = false
    /// The events the last gathering read (a sample's read leaves it).
    private var lastGatheringEvents = 0
    /// Events read since `rateWindowStart`, saturating (`.max`: an overrun, a failed or bounded read).
    private var rateWindowStart = -Double.infinity
    private var eventsInRateWindow = 0
    private let capacity: Int
    /// What may wait, for a churn read or the sample, leaving room for a rate four times it.
    private var quarter: Int { capacity / 4 }
    /// Only when the queue survives a kill (the service manager holds it too) may events wait for the sample.
    private let queueOutlivesProcess: Bool
    private var sampleInterval: Double

    /// - Parameter capacity: how many events the receive buffer holds, at worst.
    package init(capacity: Int = .max, queueOutlivesProcess: Bool = false, sampleInterval: Double = 15) {
        self.capacity = capacity
        self.queueOutlivesProcess = queueOutlivesProcess
        self.sampleInterval = sampleInterval
        waitsForSample = queueOutlivesProcess
    }

    /// The events a receive buffer of `bytes` holds at worst: the kernel charges each message's whole
    /// allocation, up to 4 KiB for a link's, against twice what was granted.
    package static func capacity(ofReceiveBuffer bytes: Int) -> Int { max(2 * bytes / 4096, 1) }

    package var isGathering: Bool { deadline != nil }

    /// Not while a gathering or churn has set the next read, nor while events wait for the sample.
    package var watchesSocket: Bool { deadline == nil && !waitsForSample }

    /// SampleIntervalSec= changed: the rate last judged may not fit a longer one, so the socket is watched till rejudged.
    package mutating func sampleIntervalChanged(to seconds: Double) {
        if seconds > sampleInterval { waitsForSample = false }
        sampleInterval = seconds
    }

    package mutating func begin(at now: Double) {
        guard deadline == nil else { return }
        let last = reads.last ?? -.infinity
        let quickReads = reads.count == Self.churnReads && now - (reads.first ?? -.infinity) < Self.spacing
        let roomToWait = lastGatheringEvents <= quarter
        // A read held for churn has its deadline set, so churn goes on only by quick reads.
        churning = now - last < Self.spacing && quickReads && roomToWait
        deadline = churning ? max(now + Self.window, last + Self.spacing) : now + Self.window
    }

    /// `events` were read at `now`, by a gathering or a sample; `.max` when more may be left queued.
    /// Under churn the next read is due `spacing` later, without waiting for the socket to wake us.
    package mutating func noteRead(at now: Double, events: Int = 0) {
        judgeRate(at: now, adding: events)
        // A sample's read while none was due: only the rate is judged.
        guard isGathering else { return }
        lastGatheringEvents = events
        reads.append(now)
        if reads.count > Self.churnReads { reads.removeFirst() }
        churning = !waitsForSample && churning && events > 0 && events <= quarter
        deadline = churning ? now + Self.spacing : nil
    }

    /// Events may wait for the sample while those read over at least `spacing` would, at their rate,
    /// fill at most a quarter of the buffer in a sample interval; more than a quarter decides at once.
    private mutating func judgeRate(at now: Double, adding events: Int) {
        guard queueOutlivesProcess else { return }
        let (sum, overflow) = eventsInRateWindow.addingReportingOverflow(events)
        eventsInRateWindow = overflow ? .max : sum
        let elapsed = now - rateWindowStart
        if eventsInRateWindow > quarter {
            waitsForSample = false
        }
        guard elapsed >= Self.spacing else { return }
        if eventsInRateWindow <= quarter {
            waitsForSample = elapsed >= sampleInterval || Double(eventsInRateWindow) * sampleInterval / elapsed <= Double(quarter)
        }
        rateWindowStart = now
        eventsInRateWindow = 0
    }
}
