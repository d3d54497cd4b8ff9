/// When the daemon reads the link events waiting in its socket.
///
/// A burst of events (a tunnel created, addressed, brought up; a VPN
/// reconnect's teardown and creation) arrives within milliseconds. Read as
/// each event arrives, it would cost a wakeup and, for every life that begins
/// or ends, a commit per event. So the first event of a burst starts a
/// gathering and the burst is read `window` later: one wakeup to notice it,
/// one to read it, one commit.
///
/// Under churn (a VPN server's clients coming and going, a flapping modem:
/// `churnReads` reads within `spacing`) bursts are read together, `spacing`
/// after the last read: one read every two seconds, however fast links come
/// and go. While churn lasts the next read is set when one ends, so the
/// socket stays out of the poll meanwhile and the next burst costs no wakeup
/// of its own to be noticed. A read that finds nothing ends the churn.
///
/// What waits is lost only to a kill without systemd's file descriptor
/// store: under the shipped unit systemd keeps the socket, and the next
/// process reads what waited (`Daemon.eventSocket`). Run otherwise, a kill
/// while a burst waits loses what only those events knew (README 'Limits'):
/// a burst waits `window`; under churn, at most `spacing`. And the socket's
/// buffer must hold what waits: a read that took more than a quarter of
/// what it holds (`capacity`) ends the holding back, so a storm is read
/// every `window` instead.
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

    /// When the waiting events are to be read (monotonic seconds), if any wait.
    package private(set) var deadline: Double?
    /// The last reads, newest last (at most `churnReads`).
    private var reads: [Double] = []
    /// Whether the last read was held back for churn.
    private var churning = false
    /// How many events the socket's receive buffer holds, at worst.
    private let capacity: Int
    private var lastReadEvents = 0

    /// `capacity`: how many events the receive buffer holds, at worst.
    package init(capacity: Int = .max) {
        self.capacity = capacity
    }

    /// The events a receive buffer of `bytes` (as requested and granted)
    /// holds at worst. The kernel charges each message's whole allocation,
    /// up to 4 KiB for a link's, against twice what was granted (the
    /// doubling is for that overhead). Measured: 212,992 bytes granted held
    /// 184 messages of a tun's creation (1,096 bytes each, charged 2,304)
    /// before the overrun; this says 104.
    package static func capacity(ofReceiveBuffer bytes: Int) -> Int { max(2 * bytes / 4096, 1) }

    package var isGathering: Bool { deadline != nil }

    /// The socket became readable at `now`.
    package mutating func begin(at now: Double) {
        guard deadline == nil else { return }
        let last = reads.last ?? -.infinity
        let quickReads = reads.count == Self.churnReads && now - (reads.first ?? -.infinity) < Self.spacing
        let roomToWait = lastReadEvents <= capacity / 4
        churning = now - last < Self.spacing && (churning || quickReads) && roomToWait
        deadline = churning ? max(now + Self.window, last + Self.spacing) : now + Self.window
    }

    /// `events` were read at `now` (at the deadline, or by a sample). Under
    /// churn the next read is due `spacing` later, without waiting for the
    /// socket to wake the daemon first.
    package mutating func end(at now: Double, events: Int = 0) {
        lastReadEvents = events
        reads.append(now)
        if reads.count > Self.churnReads { reads.removeFirst() }
        churning = churning && events > 0 && events <= capacity / 4
        deadline = churning ? now + Self.spacing : nil
    }
}
