import Glibc

/// A reason the daemon cannot start, with the sysexits code to leave with.
package struct DaemonStartError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package var exitCode: ExitCode
    package var description: String { message }
}

/// ifmeterd's loop: one thread polls the signal pipe and the link-event
/// socket with a timeout that is the next sample (or watchdog) deadline.
/// It owns the sockets, the store, the metrics file and the `Meter`, whose
/// pure rules decide what every sample and event means; so nothing here
/// needs a lock, and no thread is ever created.
package final class Daemon {
    package struct Options: Sendable {
        package var configuration: Configuration
        package var configurationPath: String?
        /// The path is the default one, read where a file stands there (at
        /// start and at every reload), not one `--config` named.
        package var configurationIsOptional: Bool
        package var stateDirectory: String
        package var environment: [String: String]
        /// The command line's settings, applied again over every reload.
        package var overrides: CommandLineOverrides
        /// `--once`: the start-up pass is the whole run, nothing is retried.
        package var once: Bool

        package init(
            configuration: Configuration, configurationPath: String?, configurationIsOptional: Bool = false, stateDirectory: String,
            environment: [String: String], overrides: CommandLineOverrides = CommandLineOverrides(), once: Bool = false
        ) {
            self.configuration = configuration
            self.configurationPath = configurationPath
            self.configurationIsOptional = configurationIsOptional
            self.stateDirectory = stateDirectory
            self.environment = environment
            self.overrides = overrides
            self.once = once
        }
    }

    private var configuration: Configuration
    private let configurationPath: String?
    private let configurationIsOptional: Bool
    private let overrides: CommandLineOverrides
    private let once: Bool
    /// Where SIGTERM, SIGINT and SIGHUP arrive, as bytes (-1 under `--once`).
    private let signals: Int32
    private let clock: SystemClock
    private let bootID: String
    private let namespace: NamespaceCookie
    private let store: CounterStore
    private let linkSource: any LinkSource
    private let events: LinkEventSocket
    /// The event socket is the one the service manager kept across a
    /// restart: what it queued while no process read it is read at start.
    private let eventSocketWasKept: Bool
    /// A second kept socket was passed and dropped with its queue unread.
    private let keptQueueSkipped: Bool
    /// The event socket's cookie (`LinkEventSocket.identity`), read once:
    /// the key its drop count is kept under at every commit.
    private let eventSocketIdentity: UInt64
    private var meter: Meter
    private var metrics: MetricsFile?
    private let journalPath: String
    /// The store, its WAL, index, lock and pid file: no output may land on
    /// them, nor on the configuration file (`ownFiles`).
    private let storeFiles: [String]
    /// Where life changes wait for the next store commit; nil when it could
    /// not be written (they then go straight to the store).
    private var journal: CommitJournal?
    private var journalWrites = RetriedCondition()
    /// Another process held the journal at start: it is left alone.
    private var journalHeldElsewhere = false
    /// `JournalFile=` names some other file (a log, the store): judged once,
    /// at start, and never read again. A commit that tried to open the
    /// journal again read it whole each time (4 MiB a commit for a log).
    private var journalPathIsSomeOtherFile = false

    // Health, for STATUS=, the watchdog and the metrics file.
    /// On the clock that counts a suspend: a laptop that slept past the
    /// commit interval commits at its first sample after waking, rather
    /// than an interval later while `ifmeter` shows the daemon STALE.
    private var lastCommit = SystemClock.boottime()
    private var lastCommitWall: Int64?
    private var storeWrites = RetriedCondition()
    private var storeWriteErrors: UInt64 = 0
    private var metricsWrites = RetriedCondition()
    private var lastSampleWall = 0.0
    private var lastSampleDuration = 0.0
    private var lastHealthySample = SystemClock.monotonic()

    /// Opens the store and the kernel sockets. The event socket is opened
    /// before the first dump, so no link can slip between the two.
    package init(_ options: Options) throws(DaemonStartError) {
        // First of all: a SIGHUP or SIGTERM while the store and the journal
        // are opened (a second on a large store) would otherwise end the
        // process by default; through the pipe, the loop takes it at once.
        if !options.once {
            do {
                signals = try SignalPipe.install([SIGTERM, SIGINT, SIGHUP])
            } catch {
                throw DaemonStartError(message: "\(error)", exitCode: .software)
            }
        } else {
            signals = -1
        }
        configuration = options.configuration
        configurationPath = options.configurationPath
        configurationIsOptional = options.configurationIsOptional
        overrides = options.overrides
        once = options.once
        clock = SystemClock(environment: options.environment)
        let stateDirectory = options.stateDirectory
        do {
            try FileSystem.createDirectory(stateDirectory)
        } catch {
            throw DaemonStartError(message: "cannot create state directory: \(error)", exitCode: .cannotCreate)
        }
        let locked: Bool
        do {
            locked = try FileSystem.lockExclusively(stateDirectory + "/ifmeterd.lock")
        } catch {
            // The lock, or the pid file beside it: the error names which.
            throw DaemonStartError(message: "cannot claim the state directory: \(error)", exitCode: .cannotCreate)
        }
        guard locked else {
            throw DaemonStartError(message: "\(stateDirectory): another ifmeterd is using this state directory", exitCode: .unavailable)
        }
        do {
            bootID = try BootID.read(from: configuration.bootIDPath)
        } catch {
            // A regular file too large for a boot id holds something else:
            // wrong data (65), where a device or FIFO is no input (66).
            let isSomeOtherFile = if case FileSystem.NotARegularFile.tooLarge(_, size: .some, _) = error { true } else { false }
            throw DaemonStartError(message: "cannot read the boot id: \(error)", exitCode: isSomeOtherFile ? .dataError : .noInput)
        }
        do {
            store = try CounterStore(directory: stateDirectory)
        } catch {
            throw DaemonStartError(message: error.description, exitCode: error.exitCode)
        }
        do {
            (events, eventSocketWasKept, keptQueueSkipped) = try Self.eventSocket(
                passed: once ? nil : ServiceManager.takePassedDescriptors(), receiveBufferBytes: configuration.eventBufferBytes)
            linkSource = configuration.counterSource == .getifaddrs ? InterfaceAddressesLinkSource() : try NetlinkLinkSource()
        } catch {
            throw DaemonStartError(message: "netlink: \(error)", exitCode: .unavailable)
        }
        namespace = NamespaceIdentity.cookie(ofSocket: events.fileDescriptor)
        eventSocketIdentity = events.identity
        gathering = EventGathering(
            capacity: EventGathering.capacity(ofReceiveBuffer: events.receiveBufferBytes ?? configuration.eventBufferBytes),
            queueOutlivesProcess: eventSocketWasKept, sampleInterval: configuration.sampleInterval)
        meter = Meter(bootID: bootID, namespace: namespace, width: linkSource.counterWidth, policy: Meter.Policy(configuration))
        journalPath = configuration.resolvedJournalFile(stateDirectory: stateDirectory)
        storeFiles = CounterStore.stateFiles(in: stateDirectory)
        let ownFiles = Self.ownFiles(storeFiles: storeFiles, configurationPath: options.configurationPath)
        metrics = try Self.metricsFile(configuration.metricsFile, taken: ownFiles + [journalPath])
        // A journal is emptied and rewritten: it must never be a file the
        // daemon keeps for something else. A directory, device, FIFO or
        // socket named by mistake (the state directory, /dev/null) is
        // refused before anything could move or write it.
        try Self.checkOutputPath(
            journalPath, key: "JournalFile=", purpose: "journal", refusing: [.directory, .device, .fifo, .socket],
            taken: ownFiles + [configuration.metricsFile].compactMap { $0 })
    }

    /// The store's files and the configuration file, as they stand now: a
    /// default configuration may appear after the start, and a reload that
    /// reads it must not let an output land on it. The configuration only
    /// when it is a file: `--config /dev/null` is no file of ours.
    private static func ownFiles(storeFiles: [String], configurationPath: String?) -> [String] {
        storeFiles + [configurationPath].compactMap { $0 }.filter {
            FileSystem.exists($0) && FileSystem.nonFileKind($0, followingSymbolicLinks: true) == nil
        }
    }

    /// The one check of a path the daemon writes besides its store
    /// (`MetricsFile=`, `JournalFile=`), at start and for a metrics file a
    /// reload names: the same rules, messages and exit codes for both.
    /// Refused (exit 78): one of `taken` (the daemon's own files) by any
    /// spelling, as the same device and inode; one of `kinds` standing
    /// there; a place among the kernel's files (/dev but /dev/shm, /proc,
    /// /sys), also reached through a symlinked directory, where a journal
    /// had written its header into a link's alias
    /// (/sys/class/net/LINK/ifalias) and a metrics file had been made in
    /// /dev. A directory that does not exist is exit 73.
    static func checkOutputPath(
        _ path: String, key: String, purpose: String, refusing kinds: [FileSystem.NonFile], taken: [String]
    ) throws(DaemonStartError) {
        if let clash = taken.first(where: { FileSystem.sameFile($0, path) }) {
            throw DaemonStartError(message: "\(key)\(path): the same file as \(clash); choose a file of its own", exitCode: .config)
        }
        if let kind = FileSystem.nonFileKind(path), kinds.contains(kind) {
            throw DaemonStartError(message: "\(key)\(path): \(kind), not a file; left untouched: name a file of its own", exitCode: .config)
        }
        let directory = FileSystem.directoryName(path)
        if let root = FileSystem.kernelTree(holding: directory) {
            throw DaemonStartError(message: "\(key)\(path): in \(root), among the kernel's files; choose a file of its own elsewhere", exitCode: .config)
        }
        guard FileSystem.isDirectory(directory) else {
            throw DaemonStartError(message: "\(path): \(purpose) directory \(directory) does not exist", exitCode: .cannotCreate)
        }
    }

    /// The name the event socket is kept under in the service manager.
    static let eventSocketName = "link-events"

    /// The link event socket: the one the service manager passed (the
    /// socket unit's, or the one it kept across a restart,
    /// FileDescriptorStoreMax=, `ServiceManager.store`), with the events
    /// that came while no process read them, or a new one it is asked to
    /// keep, so that a daemon killed with events unread leaves them to its
    /// successor. Descriptors passed for anything else are closed. `passed`
    /// nil (`--once`): the service manager is left out. `skippedQueue`: a
    /// second event socket came too and was dropped unread (below).
    private static func eventSocket(
        passed: [ServiceManager.PassedDescriptor]?, receiveBufferBytes: Int
    ) throws -> (LinkEventSocket, kept: Bool, skippedQueue: Bool) {
        guard let passed else { return (try LinkEventSocket(receiveBufferBytes: receiveBufferBytes), false, false) }
        var kept: LinkEventSocket?
        var refused = false
        var skippedQueue = false
        for descriptor in passed {
            guard descriptor.name == eventSocketName, kept == nil else {
                close(descriptor.descriptor)
                if descriptor.name == eventSocketName {
                    // ifmeterd.socket started while the daemon waited to
                    // restart with its own socket kept in the store: systemd
                    // passes the socket unit's first. The kept one's queue
                    // goes unread (reading both would apply the events
                    // since the socket unit opened twice), and it leaves
                    // the store, so the next restart is passed one socket.
                    skippedQueue = true
                    Log.warning("two link event sockets passed (ifmeterd.socket's, and one the last process kept in the service manager's store): reading the first; the events left unread in the other are lost")
                }
                // Left in the store, it would hold the unit's one place.
                ServiceManager.removeStored(name: descriptor.name)
                continue
            }
            do {
                kept = try LinkEventSocket(adopting: descriptor.descriptor, receiveBufferBytes: receiveBufferBytes)
            } catch {
                refused = true
                Log.warning("\(error); opening a new one (events between the last process's reads and now are lost)")
            }
        }
        if let kept { return (kept, true, skippedQueue) }
        if refused { ServiceManager.removeStored(name: eventSocketName) }
        let fresh = try LinkEventSocket(receiveBufferBytes: receiveBufferBytes)
        if let error = ServiceManager.store(descriptor: fresh.fileDescriptor, name: eventSocketName) {
            Log.warning("cannot hand the link event socket to the service manager (\(error)): a kill will lose the events waiting in it")
        }
        return (fresh, false, false)
    }

    /// The metrics file is replaced after every sample: on one of `taken`
    /// (the store's own files, the configuration, the journal) it would put
    /// a text file over it. Each write replaces the file by a rename, which
    /// would replace a device too: refused here, once, rather than at each
    /// sample. A FIFO or socket, holding nothing, is replaced (a shared
    /// textfile directory: README 'Security').
    private static func metricsFile(_ path: String?, taken: [String]) throws(DaemonStartError) -> MetricsFile? {
        guard let path else { return nil }
        try checkOutputPath(path, key: "MetricsFile=", purpose: "metrics", refusing: [.device], taken: taken)
        return MetricsFile(path: path)
    }

    // MARK: Start

    /// Reconciles the store with the kernel (rules 2 to 5), reads the events
    /// queued meanwhile and commits: when this returns, the first sample is
    /// in the store.
    package func start() throws(DaemonStartError) {
        let stored: StoredState
        do {
            journal = try openJournal()
            stored = try store.loadState()
            // The ledger starts with what the metrics file may still show;
            // an older name is adopted from the store if it comes back.
            let oldest = clock.now().wall - Int64(min(configuration.metricsKeepGone, 1e12))
            let recent = try store.interfaces().filter { $0.lastSeen >= oldest }
            let names = Set(recent.map(\.name))
            meter = Meter(
                bootID: bootID, namespace: namespace, width: linkSource.counterWidth, policy: Meter.Policy(configuration),
                storedInterfaces: recent, storedResetCounts: try store.resetCounts().filter { names.contains($0.key) })
        } catch {
            throw DaemonStartError(message: error.description, exitCode: error.exitCode)
        }
        // Drops on a kept socket since its last reader's last read: an overrun.
        if eventSocketWasKept {
            let recorded = (try? store.eventSocketDrops()).flatMap(EventSocketDrops.init(text:))
            events.seenDrops = recorded?.seen(onSocket: eventSocketIdentity, bootID: bootID) ?? 0
        }
        // Before the dump: they happened before it.
        let unread = eventSocketWasKept ? readUnreadEvents() : (events: [], lost: false)
        let now = clock.now()
        let links: [LinkSample]
        do {
            links = try linkSource.links()
        } catch {
            throw DaemonStartError(message: "netlink: \(error)", exitCode: .unavailable)
        }
        if eventSocketWasKept {
            logUnread(unread, applied: meter.tracker.isContinuation(of: stored), earlierBoot: stored.lastBootID != bootID)
        }
        finish(meter.start(stored: stored, links: links, at: now, unread: unread.events, overran: unread.lost || keptQueueSkipped))
        // An overrun here may have dropped the creation or deletion of a
        // link after the dump: only a re-dump that knows it reconciles them.
        if readEvents(missed: .beforeStart) { samplePass(eventsWereLost: true) }
        commit(at: clock.now())
        writeStepLines()
        if storeWrites.isFailing {
            throw DaemonStartError(message: "\(store.path): the first commit failed", exitCode: .ioError)
        }
        lastSampleWall = Double(now.wall)
        // `--once` publishes as it finishes, the file it leaves behind: a
        // failure is then its last line, after the start line below.
        if !once { publishMetrics() }
        if let granted = events.receiveBufferBytes, granted < configuration.eventBufferBytes {
            let why = eventSocketWasKept
                ? "the passed socket holds \(granted) bytes (ifmeterd.socket's ReceiveBuffer=; without CAP_NET_ADMIN the daemon raises it only up to net.core.rmem_max)"
                : "the kernel granted \(granted) bytes (net.core.rmem_max caps a process without CAP_NET_ADMIN)"
            Log.notice("EventBufferBytes=\(configuration.eventBufferBytes): \(why); link events are read sooner to fit")
        }
        // No link counted yet is the first thing a newcomer on a wired
        // machine sees: say why, and where to look.
        let names = meter.lives.isEmpty
            ? "no link here is of a class in Watch=\(InterfaceClass.spelled(configuration.watchedClasses)) yet; 'ifmeter interfaces --all' shows each link's class"
            : NaturalOrder.sorted(meter.lives.values.map(\.name)).joined(separator: " ")
        let source = linkSource.counterWidth == .bits32 ? "getifaddrs (32-bit counters, wraps judged)" : "netlink (64-bit counters)"
        let configurationFile = configurationPath.map { configurationIsOptional && !FileSystem.exists($0) ? "defaults (no \($0))" : $0 } ?? "defaults"
        Log.notice(Log.headline("store \(store.path), configuration \(configurationFile), boot \(bootID), counters from \(source), \(counted(meter.lives.count, "watched interface")) (\(names)); \(Estimate.basis)"))
    }

    /// Opens the journal for this daemon alone and applies what it holds
    /// that the store lacks: the life changes of a daemon that stopped
    /// before its next store commit. Anything at the path that is not this
    /// store's journal is kept aside, never applied or overwritten. Without
    /// a journal (another daemon holds it, or it cannot be written) life
    /// changes are committed to the store at once, as they always were.
    private func openJournal() throws(StoreError) -> CommitJournal? {
        let wall = clock.now().wall
        var locked: (file: AppendFile, previous: [UInt8])?
        for attempt in 0..<2 {
            do {
                guard let opened = try CommitJournal.lock(journalPath) else {
                    journalHeldElsewhere = true
                    Log.warning("\(journalPath): another process holds this journal; committing life changes to the store directly")
                    return nil
                }
                locked = opened
                break
            } catch where error.isNotAJournalFile && attempt == 0 {
                let kept = try? FileSystem.moveAside(journalPath, suffix: "unreadable", now: wall)
                Log.warning("\(error); kept as \(kept ?? "it is"), starting a new journal")
            } catch {
                journalWrites.failed("\(error); committing life changes to the store directly")
                return nil
            }
        }
        guard let locked else { return nil }
        if CommitJournal.isSomeOtherFile(locked.previous) {
            journalPathIsSomeOtherFile = true
            let what = CommitJournal.isSQLiteDatabase(locked.previous) ? "an SQLite database" : "a file that is not an ifmeter journal"
            journalWrites.failed("\(journalPath): JournalFile= names \(what); left untouched, committing life changes to the store directly")
            return nil
        }
        if !locked.previous.isEmpty { try apply(journal: locked.previous, at: wall) }
        // Before the new generation is numbered: applying moves it on.
        try applyJournalLeftElsewhere()
        try store.recordJournalPath(journalPath)
        let header = JournalHeader(
            storeID: try store.journalIdentity(), generation: try store.appliedJournalGeneration() + 1, bootID: bootID, namespace: namespace)
        do {
            return try CommitJournal(file: locked.file, header: header)
        } catch {
            journalWrites.failed("\(error); committing life changes to the store directly")
            return nil
        }
    }

    /// After a JournalFile= change: what the last run journaled at its old
    /// path and never committed (it was killed) is applied, or those lives
    /// would be lost without a trace. A file there that is not this store's
    /// journal is not this daemon's to judge, and is left alone.
    private func applyJournalLeftElsewhere() throws(StoreError) {
        guard let previous = try store.recordedJournalPath(besides: journalPath), let contents = try? CommitJournal.read(previous) else { return }
        switch try store.apply(contents, retention: configuration.retention, intervals: (configuration.sampleInterval, configuration.commitInterval)) {
        case .applied(let count):
            Log.notice("\(previous): applied \(count) journaled commit\(count == 1 ? "" : "s") to \(store.path), left there by the last run (JournalFile= now names \(journalPath)); that file can be removed")
        case .refused(let detail):
            Log.warning("\(previous): the last run's journal was not applied, it would leave \(store.path) out of range (\(detail)); left as it is")
        case .nothing, .foreign:
            break
        }
    }

    /// Applies a journal's bytes to the store; what cannot be applied (not
    /// a journal, another store's, damaged, values the store refuses) is
    /// copied aside first, for a person to look at.
    private func apply(journal bytes: [UInt8], at wall: Int64) throws(StoreError) {
        func keep(_ suffix: String) -> String {
            let target = FileSystem.asideName(for: journalPath, suffix: suffix, now: wall)
            do {
                try FileSystem.writeAtomically(bytes, to: target, mode: CommitJournal.fileMode)
                return target
            } catch {
                return "nowhere (\(error))"
            }
        }
        let contents: JournalContents
        do {
            contents = try CommitJournal.parse(bytes, path: journalPath)
        } catch {
            Log.warning("\(error); kept as \(keep("unreadable")), starting a new journal")
            return
        }
        switch try store.apply(contents, retention: configuration.retention, intervals: (configuration.sampleInterval, configuration.commitInterval)) {
        case .foreign:
            Log.warning("\(journalPath): the journal of another store (not \(store.path)); kept as \(keep("other-store")), starting a new journal")
            return
        case .refused(let detail):
            Log.warning("\(journalPath): not applied, it would leave \(store.path) out of range (\(detail)); kept as \(keep("damaged"))")
            return
        case .applied(let count):
            Log.notice("\(journalPath): applied \(count) journaled commit\(count == 1 ? "" : "s") to \(store.path) (the daemon had stopped before committing them)")
        case .nothing:
            break
        }
        switch contents.ending {
        case .whole:
            break
        case .cutShort(let why):
            Log.notice("\(journalPath): \(why) (the daemon was stopped while writing it); the records before it were applied")
        case .damaged(let why):
            Log.warning("\(journalPath): \(why): applied the \(counted(contents.records.count, "record")) before it; kept as \(keep("damaged"))")
        }
    }

    // MARK: The loop

    /// Runs until SIGTERM or SIGINT and returns the exit code. Tells systemd
    /// READY=1 with the signal pipe in place since `init`, so a stop or a
    /// reload requested before the service is up is never lost.
    package func run() -> ExitCode {
        // Samples fall on multiples of the interval and may come a little
        // late, so they share wakeups with the rest of the system.
        TimerSlack.set(seconds: sampleSlack)
        let watchdogInterval = ServiceManager.watchdogInterval.map { $0 / 2 }
        var nextSample = nextBoundary(after: SystemClock.monotonic())
        var nextWatchdog = watchdogInterval.map { SystemClock.monotonic() + $0 }
        ServiceManager.notify("READY=1\nSTATUS=\(statusLine())")

        var descriptors = [
            pollfd(fd: signals, events: Int16(POLLIN), revents: 0),
            pollfd(fd: events.fileDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // While a burst is gathered, or events wait for the sample, the
            // event socket is left out of the poll: its events wait in the
            // kernel until then.
            descriptors[1].fd = gathering.watchesSocket ? events.fileDescriptor : -1
            let deadline = min(nextSample, nextWatchdog ?? .infinity, gathering.deadline ?? .infinity)
            let timeout = Int32(clamping: Int(max(0, (deadline - SystemClock.monotonic()) * 1000).rounded(.up)))
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 && errno != EINTR {
                Log.error("poll: \(SystemError("poll", path: "event loop", errno: errno))")
                return .software
            }
            if descriptors[0].revents != 0 {
                for number in SignalPipe.drain(signals) {
                    if number == SIGHUP {
                        reload()
                        nextSample = nextBoundary(after: SystemClock.monotonic())
                    } else {
                        return shutdown()
                    }
                }
            }
            if descriptors[1].fd >= 0 && descriptors[1].revents != 0 {
                gathering.begin(at: SystemClock.monotonic())
                // The few milliseconds of a gathering must not stretch by the
                // sample's slack (up to a second): that would widen the window
                // in which a crash loses the burst.
                TimerSlack.set(seconds: EventGathering.slack)
            }
            var now = SystemClock.monotonic()
            if let due = gathering.deadline, now >= due {
                handleLinkEvents()
                now = SystemClock.monotonic()
            }
            if now >= nextSample {
                samplePass(eventsWereLost: false)
                nextSample = nextBoundary(after: now)
            }
            if let interval = watchdogInterval, let due = nextWatchdog, now >= due {
                // WATCHDOG=1 only while the kernel was read recently.
                if now - lastHealthySample < 3 * configuration.sampleInterval + interval {
                    ServiceManager.notify("WATCHDOG=1")
                }
                nextWatchdog = now + interval
            }
        }
    }

    /// How late a sample may come, so its wakeup is shared with others.
    private var sampleSlack: Double { min(configuration.sampleInterval / 100, 1) }

    /// The link events of one burst, read together (see `EventGathering`).
    private var gathering = EventGathering()

    /// The next multiple of the sample interval on the monotonic clock.
    private func nextBoundary(after time: Double) -> Double {
        let interval = configuration.sampleInterval
        return ((time / interval).rounded(.down) + 1) * interval
    }

    private func statusLine() -> String {
        let last = lastCommitWall.map { ", last commit \(TimeText.moment($0))" } ?? ""
        let trouble = storeWrites.isFailing ? "; STORE WRITES FAILING, deltas kept in memory" : ""
        return "counting \(counted(meter.lives.count, "interface"))\(last)\(trouble)"
    }

    // MARK: The loop's work

    /// After every meter operation: the stored history of names it counted
    /// first (before any commit could write them), then the log lines.
    private func finish(_ step: Meter.Step) {
        adoptHistory()
        for life in step.begun {
            stepLines.append((.info, "\(life.name): counting (ifindex \(life.ifindex), \(meter.interfaceInfo[life.name]?.interfaceClass.rawValue ?? "other"))"))
        }
        for rename in step.renamed {
            stepLines.append((.info, "\(rename.from): renamed \(rename.to) (ifindex \(rename.ifindex)); counted on under the new name"))
        }
        for event in step.events {
            let indexes = [event.oldIfindex, event.newIfindex].map { $0.map(String.init) ?? "-" }.joined(separator: " -> ")
            stepLines.append((.info, "\(event.name): \(event.reason.rawValue) (ifindex \(indexes), loss \(event.loss.name)): \(event.detail)"))
        }
    }

    /// What the meter's steps said, written once the journal or the store
    /// was given what they tell (or failed to take it, which is logged
    /// first): whoever acts on "tun0: removed" (a person, a script, a test
    /// that then kills the daemon) finds the life's end already kept.
    private var stepLines: [(priority: Log.Priority, message: String)] = []

    private func writeStepLines() {
        guard !stepLines.isEmpty else { return }
        Log.write(stepLines)
        stepLines.removeAll(keepingCapacity: true)
    }

    /// Gives the ledger the stored totals of names counted again after a
    /// long absence, before any commit could write them twice.
    private func adoptHistory() {
        for name in meter.namesWithoutHistory {
            do {
                let stored = try store.interface(named: name)
                let resets = stored == nil ? [:] : try store.resetCounts(of: name)
                meter.adopt(name, stored: stored, resets: resets)
            } catch {
                Log.error("reading \(name)'s totals: \(error); its metrics start from what is counted now")
                meter.adopt(name, stored: nil, resets: [:])
            }
        }
    }

    /// Reads every pending link event into the meter, which ends a
    /// gathering; returns whether some were lost (an overrun, or a read
    /// that failed). `missed`: why messages before these may be missing
    /// (the first reads at start, those of the re-dump after an overrun),
    /// so that a link first seen in them with traffic is no move from
    /// another namespace. Those reads go past the bound of one read (a
    /// few times, not without end): no message of theirs is left for a
    /// later read to take as complete.
    private func readEvents(missed: CounterTracker.MissedMessages? = nil) -> Bool {
        var missed = missed
        var lost = false
        for _ in 0..<(missed == nil ? 1 : 16) {
            let batch: (events: [LinkEvent], overrun: Bool, morePending: Bool)
            do {
                batch = try events.read()
            } catch {
                noteEventsRead(.max)
                Log.error("reading link events: \(error); re-dumping")
                linkSource.note(events: [], overrun: true)
                return true
            }
            // A read that stopped at its bound may have left more queued:
            // the socket must be read again soon, whatever the count says.
            noteEventsRead(batch.overrun || batch.morePending ? .max : batch.events.count)
            // Most samples find no event waiting: nothing to apply.
            if !batch.events.isEmpty || batch.overrun {
                linkSource.note(events: batch.events, overrun: batch.overrun)
                if batch.overrun { missed = .lost }
                finish(meter.apply(events: batch.events.map(sourceWidth), at: clock.now(), missed: missed))
                if batch.overrun { Log.warning("link events were lost (event socket overrun); re-dumping to reconcile") }
                lost = lost || batch.overrun
            }
            guard batch.morePending else { break }
        }
        return lost
    }

    /// Every event queued in a kept event socket when the daemon starts:
    /// what happened after the previous process's last read. `lost`: the
    /// queue overran meanwhile, or could not be read.
    private func readUnreadEvents() -> (events: [LinkEvent], lost: Bool) {
        var unread: [LinkEvent] = []
        var lost = false
        // Bounded as `readEvents` is; what is left is read after the dump.
        for _ in 0..<16 {
            do {
                let batch = try events.read()
                unread += batch.events.map(sourceWidth)
                lost = lost || batch.overrun
                guard batch.morePending else { break }
            } catch {
                Log.error("reading the link events left unread by the last process: \(error)")
                return (unread, true)
            }
        }
        return (unread, lost)
    }

    /// `earlierBoot`: the store was last saved in an earlier boot (or never).
    /// Then the events are those of this boot before the daemon started,
    /// which the ifmeterd.socket unit queues from early boot on: the first
    /// dump counts from here, as it would have without them.
    private func logUnread(_ unread: (events: [LinkEvent], lost: Bool), applied: Bool, earlierBoot: Bool) {
        guard !unread.events.isEmpty || unread.lost else { return }
        let overrun = unread.lost ? "; some were lost (the queue overran while no process read it)" : ""
        if earlierBoot && !applied {
            Log.info("\(counted(unread.events.count, "link event")) of this boot queued before the daemon's first start: counting starts from the first dump" + overrun)
            return
        }
        let what = "\(counted(unread.events.count, "link event")) left unread by the daemon's last process, kept by the service manager"
        if applied || unread.events.isEmpty {
            Log.notice(what + ": applied to what it saved" + overrun)
        } else {
            Log.warning(what + ": not applied, the store holds no state of this boot, namespace and counter source for them to follow" + overrun)
        }
    }

    /// An event's counters as wide as the source's: with getifaddrs a
    /// message's 64-bit counters are cut to the 32 bits its samples carry,
    /// so the wrap rule judges like with like.
    private func sourceWidth(_ event: LinkEvent) -> LinkEvent {
        guard linkSource.counterWidth == .bits32 else { return event }
        var narrowed = event
        narrowed.link.counters = event.link.counters.low32
        return narrowed
    }

    /// Link events between samples, at the end of a gathering. A life that
    /// began or ended is committed then: until then only memory knows it,
    /// and a crash would lose it without a trace.
    private func handleLinkEvents() {
        defer { writeStepLines() }
        if readEvents() {
            samplePass(eventsWereLost: true)
        } else if meter.hasUncommittedLifeChanges {
            journalLifeChanges(at: clock.now())
        }
    }

    /// `events` were read, by a sample or at the end of a gathering.
    private func noteEventsRead(_ count: Int) {
        let wasGathering = gathering.isGathering
        gathering.noteRead(at: SystemClock.monotonic(), events: count)
        // Under churn the next read is already due: it keeps the short slack.
        // (Not a system call for every sample that finds none under way.)
        if wasGathering || gathering.isGathering {
            TimerSlack.set(seconds: gathering.isGathering ? EventGathering.slack : sampleSlack)
        }
    }

    /// A reload whose dump failed: the meter still runs the old policy
    /// (Watch=, MaxRate=), which the next sample's dump replaces.
    private var policyAwaitsDump = false

    /// One sample: queued events first, then a fresh dump of every link.
    private func samplePass(eventsWereLost: Bool) {
        defer { writeStepLines() }
        let started = SystemClock.monotonic()
        let lost = readEvents(missed: eventsWereLost ? .lost : nil) || eventsWereLost
        let now = clock.now()
        let links: [LinkSample]
        do {
            links = try linkSource.links()
        } catch {
            Log.error("netlink dump failed: \(error)")
            // What the events said is made durable all the same.
            if meter.hasUncommittedLifeChanges { journalLifeChanges(at: now) }
            return
        }
        if policyAwaitsDump {
            policyAwaitsDump = false
            finish(meter.reconfigure(Meter.Policy(configuration), links: links, at: now))
        }
        finish(meter.apply(dump: links, eventsWereLost: lost, at: now))
        lastHealthySample = SystemClock.monotonic()
        lastSampleDuration = lastHealthySample - started
        lastSampleWall = Double(now.wall)
        // Before a commit is decided: one would otherwise open a new journal
        // after it and keep a file found at the path as unreadable, where
        // README promises it written again and the file kept as replaced.
        // A journal that cannot be written again there committed instead,
        // this sample's deltas with it.
        let committedInstead = journal?.isAtItsPath == false && !reattachJournal(at: now)
        if !committedInstead {
            if SystemClock.boottime() - lastCommit >= configuration.commitInterval {
                commit(at: now)
            } else if meter.hasUncommittedLifeChanges {
                journalLifeChanges(at: now)
            }
        }
        publishMetrics()
    }

    /// Writes the metrics file; a failure is logged once until it recovers.
    /// `last`: the file this process leaves behind (a stop, `--once`) shows
    /// every total as it is, new interfaces included.
    private func publishMetrics(last: Bool = false) {
        guard let metrics else { return }
        do {
            let interfaces = meter.publication(at: Int64(lastSampleWall), keepGone: configuration.metricsKeepGone, zeroFirst: !last)
            try metrics.write(MetricsSnapshot(
                interfaces: interfaces, lastSample: lastSampleWall, sampleDuration: lastSampleDuration,
                storeWriteErrors: storeWriteErrors, lastCommit: lastCommitWall))
            metricsWrites.succeeded("\(metrics.path): metrics written again")
        } catch {
            metricsWrites.failed("metrics file not written\(once ? "" : ", will retry after each sample"): \(error)")
        }
    }

    /// A life began, ended or was renamed between store commits: made
    /// durable by one append to the journal instead of a store commit
    /// (`CommitJournal`). Without a journal that can take it, the store
    /// commits at once, as it always did.
    ///
    /// Past `JournalMaxBytes=` (default 256K, about 800 tunnel lives) life
    /// changes go to a store commit, which empties the journal. Under churn
    /// a store commit writes every name's buckets and totals once, whatever
    /// the lives, so a larger bound writes less (measured under the bench's
    /// churn, 256 KiB against 64 KiB: 0.85-0.90x the CPU, about half the
    /// bytes, 0.4 MiB more resident at the peak, the records being kept in
    /// memory too).
    private func journalLifeChanges(at now: Instant) {
        // Checked at every append (an fstat and a stat): a record appended to
        // a file no longer at the journal's path is lost to a kill.
        if journal?.isAtItsPath == false, !reattachJournal(at: now) { return }
        guard let journal, journal.size < configuration.journalMaxBytes else { return commit(at: now) }
        let batch = meter.nextCommit
        do {
            try journal.append(JournalRecord(time: now.wall, batch: batch))
            meter.committed(batch)
            journalWrites.succeeded("\(journal.path): journal written again")
        } catch {
            journalWrites.failed("\(error); committing life changes to the store instead")
            commit(at: now)
        }
    }

    /// Writes what the journal holds and the pending deltas with the
    /// baselines that produced them, in one transaction, then empties the
    /// journal. On failure (a full disk, a read-only remount) everything
    /// stays where it was (journal, memory) for the next try, and the
    /// condition is logged once, not every time.
    private func commit(at now: Instant) {
        let batch = meter.nextCommit
        let records = (journal?.records ?? []) + [JournalRecord(time: now.wall, batch: batch)]
        // The drop count seen on the event socket, kept with the commit whose
        // re-dump accounted for those drops, for whichever process takes the
        // socket over next. Not by `--once`, whose socket is its own and gone
        // when it exits.
        let drops = once ? nil : EventSocketDrops(bootID: bootID, socket: eventSocketIdentity, drops: events.seenDrops).text
        do {
            try store.commit(
                records, bootID: bootID, namespace: namespace, journalGeneration: journal?.header.generation,
                counterWidth: linkSource.counterWidth, eventSocketDrops: drops, retention: configuration.retention,
                intervals: (configuration.sampleInterval, configuration.commitInterval))
            meter.committed(batch)
            startNextJournalGeneration()
            // At each commit, not each sample: a name gone a week can wait
            // minutes longer, and the sample stays a pass over the links.
            meter.forgetGone(at: now.wall, keepGone: configuration.metricsKeepGone)
            lastCommit = SystemClock.boottime()
            lastCommitWall = now.wall
            storeWrites.succeeded("\(store.path): writes succeed again; pending deltas committed")
            ServiceManager.notify("STATUS=\(statusLine())")
        } catch {
            storeWriteErrors += 1
            if storeWrites.failed("\(error); keeping deltas in memory and retrying") {
                ServiceManager.notify("STATUS=\(statusLine())")
            }
        }
    }

    /// The journal's path no longer names the file this daemon appends to
    /// (removed, or replaced by another file): what it holds is out of
    /// `ifmeter`'s sight, and a kill -9 would lose it. The journal is
    /// written again at its path from the records held in memory (whatever
    /// stands there now kept aside); no store commit is needed, so this
    /// works on a full disk too. Returns whether it was: the journal then
    /// takes the next life change.
    ///
    /// If it cannot be (a directory or device put there, which is left
    /// where it is, or a path that cannot be written), what the journal held
    /// and the pending life changes are committed to the store at once, and
    /// later ones go there directly (`startNextJournalGeneration` opens a
    /// journal again once its path takes one). Should that commit fail too,
    /// nothing more is appended to the old file: the changes wait in memory
    /// for the next try, as any commit's.
    private func reattachJournal(at now: Instant) -> Bool {
        guard let journal else { return false }
        do {
            guard let again = try journal.writtenAgainAtItsPath(now: now.wall) else {
                journalHeldElsewhere = true
                Log.warning("\(journal.path): removed, and another process now holds a journal there; committing life changes to the store directly")
                commit(at: now)
                return false
            }
            self.journal = again
            Log.warning("\(journal.path): removed or replaced while the daemon ran; written there again with the \(counted(again.records.count, "record")) it held")
            journalWrites.succeeded("\(journal.path): journal written again")
            return true
        } catch {
            journalWrites.failed("\(error); committing what it held and later life changes to the store directly")
            commit(at: now)
            return false
        }
    }

    /// After a store commit applied the journal's records: the journal
    /// starts over. If it cannot, it is left out (the store has what it held
    /// and records its generation as applied, so nothing counts twice) and
    /// life changes go to the store until a later commit opens it again.
    private func startNextJournalGeneration() {
        // A file no longer at the journal's path (moved away, say) is not
        // emptied: the journal opens again where it belongs.
        if let journal, !journal.isAtItsPath {
            self.journal = nil
            if !journalHeldElsewhere { self.journal = try? openJournal() }
            return
        }
        guard let journal else {
            // Opened again after a failure of its own; never while another
            // process holds it, whose records are not this daemon's to empty,
            // nor where some other file stands, already judged.
            if journalWrites.isFailing && !journalHeldElsewhere && !journalPathIsSomeOtherFile { self.journal = try? openJournal() }
            return
        }
        do {
            try journal.startGeneration(journal.header.generation + 1)
        } catch {
            journalWrites.failed("\(error); committing life changes to the store instead")
            // Its records are in the store: nothing may be appended after them.
            self.journal = nil
        }
    }

    /// SIGTERM and SIGINT: a final sample, a commit, the exit code.
    private func shutdown() -> ExitCode {
        ServiceManager.notify("STOPPING=1")
        samplePass(eventsWereLost: false)
        commit(at: clock.now())
        publishMetrics(last: true)
        store.close()
        Log.notice(Log.headline("stopped\(storeWrites.isFailing ? " with uncommitted deltas (the store could not be written)" : "; a final sample was committed to \(store.path)")"))
        return storeWrites.isFailing ? .ioError : .success
    }

    /// SIGHUP: commit what was counted under the old configuration, then
    /// apply the new one in one place. A bad file is logged and the old one
    /// kept; only StateDirectory= needs a restart.
    private func reload() {
        ServiceManager.notify("RELOADING=1")
        defer { ServiceManager.notify("READY=1\nSTATUS=\(statusLine())") }
        samplePass(eventsWereLost: false)
        commit(at: clock.now())
        guard let path = configurationPath else {
            Log.notice("reload: no configuration file; nothing to change")
            return
        }
        // The default file is read as at start: one created since (as
        // `ifmeter status` tells a newcomer to) applies now, and one
        // removed leaves the defaults.
        let reloaded: Configuration
        do {
            reloaded = overrides.applied(to: try ConfigurationFile.load(path: path, required: !configurationIsOptional))
            if configurationIsOptional && !FileSystem.exists(path) { Log.notice("reload: no \(path); the defaults apply") }
        } catch {
            Log.error("reload failed, keeping the running configuration: \(error)")
            return
        }
        let atRestart = [
            ("StateDirectory=", reloaded.resolvedStateDirectory(environment: [:]) != configuration.resolvedStateDirectory(environment: [:])),
            ("EventBufferBytes=", reloaded.eventBufferBytes != configuration.eventBufferBytes),
            ("JournalFile=", reloaded.journalFile != configuration.journalFile),
            ("BootIDPath=", reloaded.bootIDPath != configuration.bootIDPath),
            ("CounterSource=", reloaded.counterSource != configuration.counterSource),
        ].filter(\.1).map(\.0)
        if !atRestart.isEmpty {
            Log.warning("reload: \(atRestart.joined(separator: ", ")) changes take effect at restart")
        }
        let metricsMoved = reloaded.metricsFile != configuration.metricsFile
        if metricsMoved {
            do {
                let ownFiles = Self.ownFiles(storeFiles: storeFiles, configurationPath: configurationPath)
                metrics = try Self.metricsFile(reloaded.metricsFile, taken: ownFiles + [journalPath])
                configuration.metricsFile = reloaded.metricsFile
                metricsWrites.reset()
            } catch {
                Log.error("reload: keeping MetricsFile=\(configuration.metricsFile ?? ""): \(error)")
            }
        }
        configuration.sampleInterval = reloaded.sampleInterval
        gathering.sampleIntervalChanged(to: reloaded.sampleInterval)
        configuration.commitInterval = reloaded.commitInterval
        configuration.maxRateBitsPerSecond = reloaded.maxRateBitsPerSecond
        configuration.watchedClasses = reloaded.watchedClasses
        configuration.overrides = reloaded.overrides
        configuration.sysfsRoot = reloaded.sysfsRoot
        configuration.retention = reloaded.retention
        configuration.metricsKeepGone = reloaded.metricsKeepGone
        configuration.journalMaxBytes = reloaded.journalMaxBytes
        do {
            let links = try linkSource.links()
            finish(meter.reconfigure(Meter.Policy(configuration), links: links, at: clock.now()))
            policyAwaitsDump = false
            if meter.hasUncommittedLifeChanges { commit(at: clock.now()) }
            writeStepLines()
        } catch {
            policyAwaitsDump = true
            Log.error("reload: netlink dump failed: \(error); the new Watch= applies from the next sample")
        }
        // Unless churn has set the next read, which keeps the short slack.
        if !gathering.isGathering { TimerSlack.set(seconds: sampleSlack) }
        // The sample above wrote the file; a new path gets it at once too.
        if metricsMoved { publishMetrics() }
        Log.notice("reloaded \(path)")
    }

    /// `--benchmark-samples N`: N sample passes back to back, exactly as the
    /// loop runs them, then the median wall and CPU time of one pass.
    package func benchmark(samples: Int) -> (wall: Double, cpu: Double) {
        var walls: [Double] = []
        var cpus: [Double] = []
        for _ in 0..<samples {
            let wall = SystemClock.monotonic()
            let cpu = SystemClock.processCPU()
            samplePass(eventsWereLost: false)
            cpus.append(SystemClock.processCPU() - cpu)
            walls.append(SystemClock.monotonic() - wall)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return (median(walls), median(cpus))
    }

    /// `--once`: the start-up pass is the whole run.
    package func finishOnce() -> ExitCode {
        publishMetrics(last: true)
        store.close()
        return storeWrites.isFailing ? .ioError : metricsWrites.isFailing ? .cannotCreate : .success
    }
}
