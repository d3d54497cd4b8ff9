/// When the daemon reads the link events waiting in its socket.
///
/// A life's beginning and end exist only in the socket's queue until the
/// daemon reads them, then only in its memory until it journals them. Where
/// the queue outlives the process (ifmeterd.socket's socket, or one the
/// service manager kept across a restart: `queueOutlivesProcess`), a kill
/// loses nothing that still waits in it, so events wait for the next
/// sample, which reads and journals them with the counters: the socket is
/// left out of the poll and a tunnel's life costs no wakeup of its own.
/// That holds while what comes before the next sample fits in the buffer:
/// events that, at the rate they came (judged over reads two seconds apart
/// or more), would fill more than a quarter of what the buffer holds
/// (`capacity`) by the next sample, or an overrun, put the socket back in
/// the poll, read as below, until a read finds the rate low again.
/// Measured (`make bench`, issue 15): a tunnel life every 10 s took 0.16x
/// vnstatd's CPU and 4.2 wakeups a minute (4.3 idle), against 0.26x and
/// 16.5 read as below; the churn every daemon sees 0.12x against 0.27x.
///
/// Otherwise (a daemon run without systemd, or started while ifmeterd.socket
/// was not running, its own socket not yet kept by systemd) a kill loses
/// what waits, so the socket is watched. A burst of events (a tunnel created, addressed,
/// brought up; a VPN reconnect's teardown and creation) arrives within
/// milliseconds: the first event of a burst starts a gathering and the
/// burst is read `window` later: one wakeup to notice it, one to read it,
/// one journal append. Under churn (a VPN server's clients coming and going,
/// a flapping modem: `churnReads` reads within `spacing`) bursts are read
/// together, `spacing` after the last read: one read every two seconds,
/// however fast links come and go. While churn lasts the next read is set
/// when one ends, so the socket stays out of the poll meanwhile and the next
/// burst costs no wakeup of its own to be noticed. A read that finds nothing
/// ends the churn; one that took more than a quarter of `capacity` too.
///
/// `spacing` is CPU against that window. Measured (issue 15, two daemons
/// side by side for 120 s under the bench's churn seen by every daemon, a
/// 10 s tunnel life every 0.15 s): 2 s took 0.77x the CPU of 1 s, 3 s 0.69x
/// (about 0.24 ms a read is fixed cost; an event, about 10 us). Two seconds:
/// most of the saving, with the window of a daemon run without systemd
/// kept short.
package struct EventGathering: Sendable, Equatable {
    /// Long enough for one burst (a whole tunnel life made by a program takes
    /// about 4 ms), short next to the time a person or a script needs to
    /// follow a teardown with anything else.
    package static let window = 0.020
    package static let spacing = 2.0
    package static let churnReads = 3
    /// The timer slack while a burst waits: the sample's slack (up to a
    /// second) would stretch the gathering and the crash window with it.
    package static let slack = 0.001

    /// When the waiting events are to be read (monotonic seconds), if a
    /// gathering or churn set a time.
    package private(set) var deadline: Double?
    /// Whether events wait for the next sample, the socket unwatched.
    package private(set) var waitsForSample = false
    /// The last reads, newest last (at most `churnReads`), of gatherings.
    private var reads: [Double] = []
    /// Whether the read now set (`deadline`) is held back for churn.
    private var churning = false
    /// The events the last gathering read (a sample's read leaves it).
    private var lastGatheringEvents = 0
    /// The rate of events is judged over reads at least `spacing` apart:
    /// the events read since `rateWindowStart`, saturating (`.max` stands
    /// for an overrun, a failed read or one that stopped at its bound).
    private var rateWindowStart = -Double.infinity
    private var eventsInRateWindow = 0
    /// How many events the socket's receive buffer holds, at worst.
    private let capacity: Int
    /// What a quarter of the buffer holds: what may wait, whether for a
    /// churn read or for the sample, leaving room for a rate four times it.
    private var quarter: Int { capacity / 4 }
    /// Whether what waits in the socket survives a kill of this process
    /// (the service manager holds the socket too): only then may events
    /// wait for the sample.
    private let queueOutlivesProcess: Bool
    /// Seconds between samples, the longest events may wait for one.
    private var sampleInterval: Double

    /// `capacity`: how many events the receive buffer holds, at worst.
    /// `queueOutlivesProcess`: what waits in the socket survives a kill.
    package init(capacity: Int = .max, queueOutlivesProcess: Bool = false, sampleInterval: Double = 15) {
        self.capacity = capacity
        self.queueOutlivesProcess = queueOutlivesProcess
        self.sampleInterval = sampleInterval
        waitsForSample = queueOutlivesProcess
    }

    /// The events a receive buffer of `bytes` (as requested and granted)
    /// holds at worst. The kernel charges each message's whole allocation,
    /// up to 4 KiB for a link's, against twice what was granted (the
    /// doubling is for that overhead). Measured: 212,992 bytes granted held
    /// 184 messages of a tun's creation (1,096 bytes each, charged 2,304)
    /// before the overrun; this says 104.
    package static func capacity(ofReceiveBuffer bytes: Int) -> Int { max(2 * bytes / 4096, 1) }

    package var isGathering: Bool { deadline != nil }

    /// Whether the loop polls the socket: not while a gathering or churn
    /// has set the next read, nor while events wait for the sample.
    package var watchesSocket: Bool { deadline == nil && !waitsForSample }

    /// A reload changed SampleIntervalSec=: events wait at most that long.
    /// Under a longer interval the rate last judged may not fit any more:
    /// the socket is watched until a read judges it again.
    package mutating func sampleIntervalChanged(to seconds: Double) {
        if seconds > sampleInterval { waitsForSample = false }
        sampleInterval = seconds
    }

    /// The socket became readable at `now`.
    package mutating func begin(at now: Double) {
        guard deadline == nil else { return }
        let last = reads.last ?? -.infinity
        let quickReads = reads.count == Self.churnReads && now - (reads.first ?? -.infinity) < Self.spacing
        let roomToWait = lastGatheringEvents <= quarter
        // (A read held for churn has its deadline set, so no burst begins
        // while one is: churn goes on only by quick reads.)
        churning = now - last < Self.spacing && quickReads && roomToWait
        deadline = churning ? max(now + Self.window, last + Self.spacing) : now + Self.window
    }

    /// `events` were read at `now`: at a gathering's deadline, or by a
    /// sample (which ends a gathering under way); `.max` for an overrun, a
    /// failed read or one that stopped at its bound and may have left more
    /// queued. Under churn the next read is due `spacing` later, without
    /// waiting for the socket to wake the daemon first.
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

    /// Whether events may wait for the sample: while those read over at
    /// least `spacing`, at the rate they came, would fill at most a quarter
    /// of the buffer in a sample interval. Reads closer together (a
    /// reload's sample just after another, the re-reads after an overrun)
    /// add up until then; more than a quarter read within the window
    /// decides at once. Events over longer than an interval are taken as if
    /// they had come within one (bursty, not spread out).
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
