import Glibc

/// A reason the daemon cannot start, with the sysexits code to leave with.
package struct DaemonStartError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package var exitCode: ExitCode
    package var description: String { message }
}

/// ifmeterd: one thread polls the signal pipe and the event socket until the next deadline, then runs
/// one named step. It owns every socket, the store and the outputs (no locks); what samples and events
/// mean is decided by `Meter`, when things happen by `LoopSchedule`.
package final class Daemon {
    package struct Options {
        package var configuration: Configuration
        package var configurationPath: String?
        /// The path is the default one, read where a file stands there.
        package var configurationIsOptional: Bool
        package var stateDirectory: String
        package var environment: [String: String]
        /// The command line's settings, applied again over every reload.
        package var overrides: CommandLineOverrides
        /// `--once`: the start-up pass is the whole run.
        package var once: Bool
        /// Where samples come from: netlink's dump, unless a test hands in a table.
        package var linkSource: (any LinkSource)?

        package init(
            configuration: Configuration, configurationPath: String?, configurationIsOptional: Bool = false, stateDirectory: String,
            environment: [String: String], overrides: CommandLineOverrides = CommandLineOverrides(), once: Bool = false,
            linkSource: (any LinkSource)? = nil
        ) {
            self.configuration = configuration
            self.configurationPath = configurationPath
            self.configurationIsOptional = configurationIsOptional
            self.stateDirectory = stateDirectory
            self.environment = environment
            self.overrides = overrides
            self.once = once
            self.linkSource = linkSource
        }
    }

    // Settings
    var configuration: Configuration
    let options: Options

    // Resources, opened by init and owned for the process's life
    /// Where SIGTERM, SIGINT and SIGHUP arrive, as bytes (-1 under `--once`).
    let signals: Int32
    let clock: SystemClock
    let bootID: String
    let namespace: NamespaceCookie
    let store: CounterStore
    let linkSource: any LinkSource
    let events: LinkEventSocket
    var metrics: MetricsFile?
    /// Budget use for the metrics file, read from the store at commits, not at samples.
    var budgetLedger = BudgetLedger()
    var budgetReads = RetriedCondition()
    /// The store's files and the journal: no output may land on them.
    let ownFiles: [String]

    // Event queue
    /// The socket came from ifmeterd.socket: its queue outlives this process.
    let eventQueueOutlivesProcess: Bool
    var gathering: EventGathering

    // Meter: the counting rules' state
    var meter: Meter
    /// A reload whose dump failed: the next sample applies the new policy.
    var policyAwaitsDump = false

    // Durability, and what readers read
    /// `$RUNTIME_DIRECTORY`, else the state directory: the journal and the readers' view.
    let runtimeDirectory: String
    var journalPath: String { runtimeDirectory + "/" + Configuration.journalName }
    var journal = JournalState.unavailable
    var journalWrites = RetriedCondition()
    var viewWrites = RetriedCondition()

    // Clock: whether traffic may be dated, pruned and moved by it
    let clockStatus: ClockStatus
    var clockTrust: ClockTrust
    /// Rows may lie after now (the last commit was, or the clock stepped back): checked at the next trusted commit.
    var futureRowsPossible = false

    // Health, for STATUS=, the watchdog and the metrics file
    var health = Health()
    /// Log lines of the meter's steps, written once the change they tell is kept.
    var stepLines: [(priority: Log.Priority, message: String)] = []

    /// Opens the store and the kernel sockets, in order; each failure decided here, once, with its exit code.
    package init(_ options: Options) throws(DaemonStartError) {
        self.options = options
        configuration = options.configuration
        clock = SystemClock(environment: options.environment)
        clockStatus = ClockStatus(environment: options.environment)
        clockTrust = ClockTrust(clockStatus.reading(clock.now()), lastCommit: nil, wait: 0)
        // First: a signal while the store opens would otherwise kill the process.
        signals = options.once ? -1 : try Self.step("signals", .software) { try SignalPipe.install([SIGTERM, SIGINT, SIGHUP]) }
        let directory = options.stateDirectory
        try Self.step("cannot create state directory", .cannotCreate) { try FileSystem.createDirectory(directory) }
        let locked = try Self.step("cannot claim the state directory", .cannotCreate) {
            try FileSystem.lockExclusively(directory + "/ifmeterd.lock")
        }
        guard locked else {
            throw DaemonStartError(message: "\(directory): another ifmeterd is using this state directory", exitCode: .unavailable)
        }
        let runtime = Configuration.runtimeDirectory(stateDirectory: directory, environment: options.environment)
        if runtime != directory {
            let claimed = try Self.step("cannot claim the runtime directory", .cannotCreate) {
                try FileSystem.createDirectory(runtime)
                return try FileSystem.lockExclusively(runtime + "/ifmeterd.lock")
            }
            guard claimed else {
                throw DaemonStartError(message: "\(runtime): another ifmeterd is using this runtime directory", exitCode: .unavailable)
            }
        }
        runtimeDirectory = runtime
        do {
            bootID = try BootID.read(from: configuration.bootIDPath)
        } catch {
            // A regular file too large for a boot id is wrong data; a device or FIFO, no input.
            let isSomeOtherFile = if case FileSystem.NotARegularFile.tooLarge(_, size: .some, _) = error { true } else { false }
            throw DaemonStartError(message: "cannot read the boot id: \(error)", exitCode: isSomeOtherFile ? .dataError : .noInput)
        }
        do {
            store = try CounterStore(directory: directory)
        } catch {
            throw DaemonStartError(message: error.description, exitCode: error.exitCode)
        }
        store.countingWith = Self.countingWith(configuration, path: options.configurationPath)
        let passed = options.once ? [] : ServiceManager.takePassedDescriptors()
        (events, eventQueueOutlivesProcess) = try Self.step("netlink", .unavailable) {
            try Self.eventSocket(passed: passed, receiveBufferBytes: options.configuration.eventBufferBytes)
        }
        if let given = options.linkSource {
            linkSource = given
        } else {
            linkSource = try Self.step("netlink", .unavailable) { try NetlinkLinkSource() }
        }
        namespace = NamespaceIdentity.cookie(ofSocket: events.fileDescriptor)
        gathering = EventGathering(
            capacity: EventGathering.capacity(ofReceiveBuffer: events.receiveBufferBytes ?? configuration.eventBufferBytes),
            queueOutlivesProcess: eventQueueOutlivesProcess, sampleInterval: configuration.sampleInterval)
        meter = Meter(bootID: bootID, namespace: namespace, policy: Meter.Policy(configuration))
        ownFiles = CounterStore.stateFiles(in: directory)
            + [Configuration.journalName, ReadersView.fileName, "ifmeterd.lock", "ifmeterd.pid", "ifmeterd.live"].map { runtime + "/" + $0 }
        metrics = try Self.metricsFile(configuration.metricsFile, taken: ownFiles + Self.configurationFile(options.configurationPath))
    }

    /// One fallible start-up step: its error becomes `what: error` and `code`.
    private static func step<T>(_ what: String, _ code: ExitCode, _ body: () throws -> T) throws(DaemonStartError) -> T {
        do { return try body() } catch { throw DaemonStartError(message: "\(what): \(error)", exitCode: code) }
    }

    /// ifmeterd.socket's event socket if systemd passed it (its queue outlives us), else a new one; others are closed.
    private static func eventSocket(passed: [ServiceManager.PassedDescriptor], receiveBufferBytes: Int) throws -> (LinkEventSocket, Bool) {
        var taken: LinkEventSocket?
        for descriptor in passed {
            guard descriptor.name == "link-events", taken == nil else {
                close(descriptor.descriptor)
                continue
            }
            do {
                taken = try LinkEventSocket(adopting: descriptor.descriptor, receiveBufferBytes: receiveBufferBytes)
            } catch {
                Log.warning("\(error); opening a new one (events queued meanwhile are lost)")
            }
        }
        if let taken { return (taken, true) }
        return (try LinkEventSocket(receiveBufferBytes: receiveBufferBytes), false)
    }

    // MARK: Start

    /// Reconciles store and kernel (rules 2 to 5), reads the events queued meanwhile, commits: the first sample is kept.
    package func start() throws(DaemonStartError) {
        let stored: StoredState
        do {
            journal = try openJournal()
            stored = try store.loadState()
            // The ledger starts with what the metrics file may still show.
            let oldest = clock.now().wall - Int64(min(configuration.metricsKeepGone, 1e12))
            let recent = try store.interfaces().filter { $0.lastSeen >= oldest }
            let names = Set(recent.map(\.name))
            configuration.chosen = try store.chosenWatches()
            let lastCommit = try store.meta("last_commit").flatMap { Int64($0) }
            let reading = clockStatus.reading(clock.now())
            clockTrust = ClockTrust(reading, lastCommit: lastCommit, wait: options.once ? 0 : configuration.timeSyncWait)
            futureRowsPossible = lastCommit.map { Double($0) > reading.wall } ?? false
            meter = Meter(
                bootID: bootID, namespace: namespace, policy: Meter.Policy(configuration),
                storedInterfaces: recent, storedResetCounts: try store.resetCounts().filter { names.contains($0.key) })
            // Drops on the socket unit's socket since its last reader's last read: an overrun.
            if eventQueueOutlivesProcess {
                let recorded = try store.eventSocketDrops().flatMap(EventSocketDrops.init(text:))
                events.seenDrops = recorded?.seen(onSocket: events.identity, bootID: bootID) ?? 0
            }
        } catch {
            throw DaemonStartError(message: error.description, exitCode: error.exitCode)
        }
        // Before the dump: they happened before it.
        let unread = eventQueueOutlivesProcess ? readUnreadEvents() : (events: [], lost: false)
        let now = readClock()
        let links = try Self.step("netlink", .unavailable) { try linkSource.links() }
        // Right after it: a life the dump misses may have ended since the read above, its final counters queued.
        let late = readUnreadEvents()
        linkSource.note(events: late.events, overrun: late.lost)
        if eventQueueOutlivesProcess {
            logUnread(unread, applied: meter.tracker.isContinuation(of: stored), earlierBoot: stored.lastBootID != bootID)
        }
        finish(meter.start(
            stored: stored, links: links, at: now, unread: unread.events, overran: unread.lost || late.lost, readAfterDump: late.events))
        // An overrun here may have dropped a creation or deletion after the dump.
        if readEvents(missed: .beforeStart) || late.lost { samplePass(eventsWereLost: true) }
        if let hold = clockTrust.hold {
            Log.notice(Self.describe(hold, wait: configuration.timeSyncWait))
        } else {
            commit(at: readClock())
        }
        writeStepLines()
        if health.storeWrites.isFailing {
            throw DaemonStartError(message: "\(store.path): the first commit failed", exitCode: .ioError)
        }
        health.lastSampleWall = Double(now.wall)
        if !options.once { publishMetrics() }
        logStart()
    }

    private func logStart() {
        if let granted = events.receiveBufferBytes, granted < configuration.eventBufferBytes {
            let why = eventQueueOutlivesProcess
                ? "the passed socket holds \(granted) bytes (ifmeterd.socket's ReceiveBuffer=; without CAP_NET_ADMIN the daemon raises it only up to net.core.rmem_max)"
                : "the kernel granted \(granted) bytes (net.core.rmem_max caps a process without CAP_NET_ADMIN)"
            Log.notice("EventBufferBytes=\(configuration.eventBufferBytes): \(why); link events are read sooner to fit")
        }
        let readers = Configuration.readerDirectories(stateDirectory: options.stateDirectory)
        if !readers.contains(runtimeDirectory) {
            Log.notice("\(runtimeDirectory): the readers' view and journal are kept here, but ifmeter looks in \(readers.joined(separator: " and ")): readers see the last commits only if they may read the store")
        }
        // A newcomer on a wired machine sees no link counted first: say why.
        let names = meter.lives.isEmpty
            ? "no link here is of a class in Watch=\(InterfaceClass.spelled(configuration.watchedClasses)) yet; 'ifmeter interfaces --all' shows each link's class"
            : NaturalOrder.sorted(meter.lives.values.map(\.name)).joined(separator: " ")
        let configurationFile = options.configurationPath.map {
            options.configurationIsOptional && !FileSystem.exists($0) ? "defaults (no \($0))" : $0
        } ?? "defaults"
        Log.notice(Log.headline("store \(store.path), configuration \(configurationFile), boot \(bootID), counters from netlink (64-bit counters), \(counted(meter.lives.count, "watched interface")) (\(names)); \(Estimate.basis)"))
    }

    // MARK: The loop

    /// Runs until SIGTERM or SIGINT; returns the exit code. The signal pipe is set since `init`: no early stop is lost.
    package func run() -> ExitCode {
        TimerSlack.set(seconds: sampleSlack)
        var schedule = LoopSchedule(
            now: SystemClock.monotonic(), sampleInterval: configuration.sampleInterval,
            watchdogInterval: ServiceManager.watchdogInterval.map { $0 / 2 })
        var pendingSignals: [Int32] = []
        ServiceManager.notify("READY=1\nSTATUS=\(statusLine())")
        while true {
            let wakeup: Wakeup
            do {
                wakeup = try nextWakeup(schedule, signals: &pendingSignals)
            } catch {
                Log.error("poll: \(error)")
                return .software
            }
            switch wakeup {
            case .signal(SIGHUP):
                reload()
                schedule.sampled(at: SystemClock.monotonic(), interval: configuration.sampleInterval)
            case .signal:
                return shutdown()
            case .eventsReadable:
                gathering.begin(at: SystemClock.monotonic())
                // A gathering's few milliseconds must not stretch by the sample's slack.
                TimerSlack.set(seconds: EventGathering.slack)
            case .eventsDue:
                handleLinkEvents()
            case .sampleDue:
                let now = SystemClock.monotonic()
                samplePass(eventsWereLost: false)
                schedule.sampled(at: now, interval: configuration.sampleInterval)
            case .watchdogDue:
                let now = SystemClock.monotonic()
                if let interval = schedule.watchdogInterval, LoopSchedule.isHealthy(
                    now: now, lastHealthySample: health.lastHealthySample, sampleInterval: configuration.sampleInterval,
                    watchdogInterval: interval) {
                    ServiceManager.notify("WATCHDOG=1")
                }
                schedule.notifiedWatchdog(at: now)
            }
        }
    }

    /// A signal first, then timed work already due, else a poll of the signal pipe and (unless a read is
    /// already set) the event socket until the schedule's deadline.
    private func nextWakeup(_ schedule: LoopSchedule, signals pending: inout [Int32]) throws(SystemError) -> Wakeup {
        var descriptors = [
            pollfd(fd: signals, events: Int16(POLLIN), revents: 0),
            pollfd(fd: gathering.watchesSocket ? events.fileDescriptor : -1, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            if !pending.isEmpty { return .signal(pending.removeFirst()) }
            let now = SystemClock.monotonic()
            if let due = schedule.due(at: now, eventsDue: gathering.deadline) { return due }
            let timeout = Int32(clamping: Int(max(0, (schedule.deadline(eventsDue: gathering.deadline) - now) * 1000).rounded(.up)))
            if poll(&descriptors, nfds_t(descriptors.count), timeout) < 0 && errno != EINTR {
                throw SystemError("poll", path: "event loop", errno: errno)
            }
            if descriptors[0].revents != 0 { pending += SignalPipe.drain(signals) }
            if descriptors[1].fd >= 0 && descriptors[1].revents != 0 { return .eventsReadable }
        }
    }

    /// How late a sample may come, so its wakeup is shared with others.
    var sampleSlack: Double { min(configuration.sampleInterval / 100, 1) }

    func statusLine() -> String {
        let last = health.lastCommitWall.map { ", last commit \(TimeText.moment($0))" } ?? ""
        let trouble = health.storeWrites.isFailing ? "; STORE WRITES FAILING, deltas kept in memory" : ""
        return "counting \(counted(meter.lives.count, "interface"))\(last)\(trouble)"
    }

    // MARK: Steps

    /// One sample: queued events, a fresh dump, the commit or journal append the route decides, the metrics file.
    /// Returns the links dumped (none when the dump failed).
    @discardableResult
    package func samplePass(eventsWereLost: Bool = false) -> [LinkSample] {
        defer { writeStepLines() }
        let started = SystemClock.monotonic()
        let lost = readEvents(missed: eventsWereLost ? .lost : nil) || eventsWereLost
        let now = readClock()
        let links: [LinkSample]
        do {
            links = try linkSource.links()
        } catch {
            Log.error("netlink dump failed: \(error)")
            // What the events said is made durable all the same.
            keep(route(commitDue: false), at: now)
            return []
        }
        if policyAwaitsDump {
            policyAwaitsDump = false
            finish(meter.reconfigure(Meter.Policy(configuration), links: links, at: now))
        }
        finish(meter.apply(dump: links, eventsWereLost: lost, at: now))
        health.sampled(started: started, at: now)
        let commitDue = clockTrust.takeRelease() || SystemClock.boottime() - health.lastCommit >= configuration.commitInterval
        keep(route(commitDue: commitDue && !clockTrust.isHolding), at: now)
        publishMetrics()
        return links
    }

    /// Link events at the end of a gathering: a life that began or ended is made durable now, not at the commit.
    private func handleLinkEvents() {
        defer { writeStepLines() }
        if readEvents() {
            samplePass(eventsWereLost: true)
        } else {
            keep(route(commitDue: false), at: readClock())
        }
    }

    func route(commitDue: Bool) -> LifeChangeRoute {
        LifeChangeRoute.decide(commitDue: commitDue, lifeChanges: meter.hasUncommittedLifeChanges, journalSize: journal.open?.size)
    }

    func keep(_ route: LifeChangeRoute, at now: Instant) {
        switch route {
        case .nothing: break
        case .journal: journalLifeChanges(at: now)
        case .commit: commit(at: now)
        }
    }

    /// One transaction for the journal's records and the pending deltas, then the journal empties; a failure keeps all.
    func commit(at now: Instant) {
        redateFutureRows(at: now)
        let batch = meter.nextCommit
        let records = (journal.open?.records ?? []) + [JournalRecord(time: now.wall, batch: batch)]
        // The socket unit's drop count, for whichever process reads it next.
        let drops = options.once ? nil : EventSocketDrops(bootID: bootID, socket: events.identity, drops: events.seenDrops).text
        do {
            try store.commit(
                records, bootID: bootID, namespace: namespace, journalGeneration: journal.open?.header.generation,
                eventSocketDrops: drops, retention: clockTrust.mayJudgeHistory ? configuration.retention : nil,
                intervals: (configuration.sampleInterval, configuration.commitInterval))
            meter.committed(batch)
            budgetLedger.invalidate()
            publishView()
            startNextJournalGeneration()
            meter.forgetGone(at: now.wall, keepGone: configuration.metricsKeepGone)
            health.committed(at: now.wall)
            health.storeWrites.succeeded("\(store.path): writes succeed again; pending deltas committed")
            ServiceManager.notify("STATUS=\(statusLine())")
        } catch {
            health.storeWriteErrors += 1
            if health.storeWrites.failed("\(error); keeping deltas in memory and retrying") {
                ServiceManager.notify("STATUS=\(statusLine())")
            }
        }
    }

    /// Readers' view of what was just committed, before the journal starts over: a reader never
    /// finds a journal whose generation is past the view's next one.
    func publishView() {
        do {
            try ReadersView.publish(store, in: runtimeDirectory)
            viewWrites.succeeded("\(runtimeDirectory)/\(ReadersView.fileName): the readers' view is published again")
        } catch {
            viewWrites.failed("\(error); readers without the right to read the store see nothing new")
        }
    }

    /// Writes the metrics file; a failure is logged once until it recovers.
    /// `last`: the file a stop or `--once` leaves shows every total as it is.
    func publishMetrics(last: Bool = false) {
        guard let metrics else { return }
        do {
            let interfaces = meter.publication(at: Int64(health.lastSampleWall), keepGone: configuration.metricsKeepGone, zeroFirst: !last)
            var snapshot = MetricsSnapshot(
                interfaces: interfaces, lastSample: health.lastSampleWall, sampleDuration: health.lastSampleDuration,
                storeWriteErrors: health.storeWriteErrors, lastCommit: health.lastCommitWall)
            snapshot.budgets = budgetUse(interfaces)
            try metrics.write(snapshot)
            health.metricsWrites.succeeded("\(metrics.path): metrics written again")
        } catch {
            health.metricsWrites.failed("metrics file not written\(options.once ? "" : ", will retry after each sample"): \(error)")
        }
    }

    /// Reads the store only after a commit, a reload or a period's end; a failed read keeps the last figures.
    func budgetUse(_ interfaces: [MetricsInterface]) -> [MetricsBudget] {
        guard !configuration.budgets.isEmpty else { return [] }
        let now = Int64(health.lastSampleWall)
        if budgetLedger.needsRead(at: now) {
            do {
                try budgetLedger.read(configuration, store: store, now: now)
                budgetReads.succeeded("\(store.path): budget use read again")
            } catch {
                budgetReads.failed("budget use not read, the metrics keep the last figures: \(error)")
            }
        }
        return budgetLedger.current(interfaces)
    }

    private func shutdown() -> ExitCode {
        ServiceManager.notify("STOPPING=1")
        let links = samplePass(eventsWereLost: false)
        let now = readClock()
        // What the next boot cannot have seen is bounded by this stop, for the links that were up.
        let up = links.filter { $0.canCarryTraffic && meter.lives[$0.ifindex] != nil }.map(\.ifindex)
        store.cleanStop = CleanStop(bootID: bootID, at: now.wall, linksUp: Set(up))
        commit(at: now)
        publishMetrics(last: true)
        store.close()
        let failing = health.storeWrites.isFailing
        Log.notice(Log.headline("stopped\(failing ? " with uncommitted deltas (the store could not be written)" : "; a final sample was committed to \(store.path)")"))
        return failing ? .ioError : .success
    }

    package func finishOnce() -> ExitCode {
        publishMetrics(last: true)
        store.close()
        return health.storeWrites.isFailing ? .ioError : health.metricsWrites.isFailing ? .cannotCreate : .success
    }
}

struct Health {
    /// CLOCK_BOOTTIME: a laptop that slept past the commit interval commits at its first sample after waking.
    var lastCommit = SystemClock.boottime()
    var lastCommitWall: Int64?
    var storeWrites = RetriedCondition()
    var storeWriteErrors: UInt64 = 0
    var metricsWrites = RetriedCondition()
    var lastSampleWall = 0.0
    var lastSampleDuration = 0.0
    var lastHealthySample = SystemClock.monotonic()

    mutating func sampled(started: Double, at now: Instant) {
        lastHealthySample = SystemClock.monotonic()
        lastSampleDuration = lastHealthySample - started
        lastSampleWall = Double(now.wall)
    }

    mutating func committed(at wall: Int64) {
        lastCommit = SystemClock.boottime()
        lastCommitWall = wall
    }
}
