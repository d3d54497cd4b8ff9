import Dispatch
import Glibc

/// A reason the daemon cannot start, with the sysexits code to leave with.
public struct DaemonStartError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var exitCode: ExitCode
    public var description: String { message }
}

/// ifmeterd's single event loop. It owns every piece of mutable state (the
/// tracker, pending writes, the store, the netlink sockets) and runs on the
/// main queue only: the sampling timer, the link-event socket and signals
/// are Dispatch sources on that same queue, so nothing here needs a lock.
@MainActor
public final class Daemon {
    public struct Options: Sendable {
        public var configuration: Configuration
        public var configurationPath: String?
        public var stateDirectory: String
        public var environment: [String: String]

        public init(configuration: Configuration, configurationPath: String?, stateDirectory: String, environment: [String: String]) {
            self.configuration = configuration
            self.configurationPath = configurationPath
            self.stateDirectory = stateDirectory
            self.environment = environment
        }
    }

    private var configuration: Configuration
    private let configurationPath: String?
    private let stateDirectory: String
    private let clock: SystemClock
    private let bootID: String
    private let store: CounterStore
    private let linkSource: NetlinkLinkSource
    private let events: LinkEventSocket
    private var classifier: Classifier
    private var tracker: CounterTracker
    private var pending = PendingWrites()
    /// Classifications of links seen but not tracked (unwatched or ignored),
    /// so sysfs is read once per link life rather than once per sample.
    private var untracked: [Int32: String] = [:]
    private var lastCommit = SystemClock.monotonic()
    private var storeFailing = false
    private var sources: [any DispatchSourceProtocol] = []
    private var sampleTimer: (any DispatchSourceTimer)?
    private var watchdogTimer: (any DispatchSourceTimer)?

    // What the metrics file publishes: the store's totals at start plus
    // every delta counted since, whether committed yet or not.
    private var accumulated: [String: LinkCounters] = [:]
    private var resetCounts: [String: [String: UInt64]] = [:]
    private var interfaceInfo: [String: InterfaceInfo] = [:]
    private var metrics: MetricsFile?
    private var metricsFailing = false
    private var storeWriteErrors: UInt64 = 0
    private var lastCommitWall: Int64?
    private var lastSampleWall = 0.0
    private var lastSampleDuration = 0.0
    /// Monotonic time of the last sample pass that read the kernel.
    private var lastHealthySample = SystemClock.monotonic()

    /// Opens the store and the kernel sockets. The event socket is opened
    /// before the first dump, so no link can slip between the two.
    public init(_ options: Options) throws(DaemonStartError) {
        configuration = options.configuration
        configurationPath = options.configurationPath
        stateDirectory = options.stateDirectory
        clock = SystemClock(environment: options.environment)
        classifier = options.configuration.classifier
        do {
            try FileSystem.createDirectory(stateDirectory)
        } catch {
            throw DaemonStartError(message: "cannot create state directory: \(error)", exitCode: .cannotCreate)
        }
        do {
            guard try FileSystem.lockExclusively(stateDirectory + "/ifmeterd.lock") else {
                throw DaemonStartError(message: "\(stateDirectory): another ifmeterd is using this state directory", exitCode: .unavailable)
            }
        } catch let error as DaemonStartError {
            throw error
        } catch {
            throw DaemonStartError(message: "cannot lock the state directory: \(error)", exitCode: .cannotCreate)
        }
        do {
            bootID = try BootID.read(from: options.configuration.bootIDPath)
        } catch {
            throw DaemonStartError(message: "cannot read the boot id: \(error)", exitCode: .noInput)
        }
        do {
            store = try CounterStore(directory: stateDirectory)
        } catch {
            throw DaemonStartError(message: error.description, exitCode: error.exitCode)
        }
        do {
            events = try LinkEventSocket(receiveBufferBytes: options.configuration.eventBufferBytes)
            linkSource = try NetlinkLinkSource()
        } catch {
            throw DaemonStartError(message: "netlink: \(error)", exitCode: .unavailable)
        }
        tracker = CounterTracker(bootID: bootID, settings: .init(width: linkSource.counterWidth, maxRateBitsPerSecond: options.configuration.maxRateBitsPerSecond))
        if let path = options.configuration.metricsFile {
            let directory = FileSystem.directoryName(path)
            guard FileSystem.isDirectory(directory) else {
                throw DaemonStartError(message: "\(path): metrics directory \(directory) does not exist", exitCode: .cannotCreate)
            }
            metrics = MetricsFile(path: path)
        }
    }

    // MARK: Start

    /// Reconciles the store with the kernel (rules 2 to 5), reads the events
    /// queued meanwhile and commits: when this returns, the first sample is
    /// in the store.
    public func start() throws(DaemonStartError) {
        let stored: StoredState
        do {
            stored = try store.loadState()
            for interface in try store.interfaces() {
                accumulated[interface.name] = interface.totals
                interfaceInfo[interface.name] = InterfaceInfo(
                    interfaceClass: InterfaceClass(rawValue: interface.interfaceClass) ?? .other, signal: interface.signal, kind: interface.kind)
            }
            resetCounts = try store.resetCounts()
        } catch {
            throw DaemonStartError(message: error.description, exitCode: error.exitCode)
        }
        let now = clock.now()
        let links: [LinkSample]
        do {
            links = try linkSource.links()
        } catch {
            throw DaemonStartError(message: "netlink: \(error)", exitCode: .unavailable)
        }
        let watched = links.filter(isWatched)
        let outcome = tracker.start(stored: stored, links: watched, at: now)
        record(outcome, at: now)
        _ = drainEvents()
        commit(at: clock.now())
        if storeFailing {
            throw DaemonStartError(message: "\(store.path): the first commit failed", exitCode: .ioError)
        }
        lastSampleWall = Double(now.wall)
        publishMetrics()
        Log.notice("ifmeterd: store \(store.path), boot \(bootID), \(tracker.lives.count) watched interfaces (\(tracker.lives.values.map(\.name).sorted().joined(separator: " "))); \(Estimate.basis)")
    }

    /// Runs the loop until SIGTERM or SIGINT. Never returns. Tells systemd
    /// READY=1 once the signal sources are in place, so a stop requested the
    /// moment the service is up is never lost; the store was opened and the
    /// first sample committed before this is called.
    public func run() -> Never {
        let signals: Int32
        do {
            signals = try SignalPipe.install([SIGTERM, SIGINT, SIGHUP])
        } catch {
            Output.fail("ifmeterd", "\(error)", .software)
        }
        let signalSource = DispatchSource.makeReadSource(fileDescriptor: signals, queue: .main)
        signalSource.setEventHandler { [self] in
            MainActor.assumeIsolated {
                for number in SignalPipe.drain(signals) {
                    if number == SIGHUP { reload() } else { shutdown() }
                }
            }
        }
        signalSource.resume()
        sources.append(signalSource)
        let readable = DispatchSource.makeReadSource(fileDescriptor: events.fileDescriptor, queue: .main)
        readable.setEventHandler { [self] in
            MainActor.assumeIsolated { handleLinkEvents() }
        }
        readable.resume()
        sources.append(readable)
        scheduleSampling()
        if let interval = ServiceManager.watchdogInterval { scheduleWatchdog(every: interval / 2) }
        ServiceManager.notify("READY=1\nSTATUS=\(statusLine())")
        dispatchMain()
    }

    private func scheduleSampling() {
        sampleTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: .main)
        let interval = DispatchTimeInterval.milliseconds(Int(configuration.sampleInterval * 1000))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [self] in
            MainActor.assumeIsolated { samplePass(eventsWereLost: false) }
        }
        timer.resume()
        sampleTimer = timer
    }

    /// WATCHDOG=1 only while the loop is healthy: the timer runs on the same
    /// queue as everything else, and the kernel was read recently.
    private func scheduleWatchdog(every interval: Double) {
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in
            MainActor.assumeIsolated {
                if SystemClock.monotonic() - lastHealthySample < 3 * configuration.sampleInterval + interval {
                    ServiceManager.notify("WATCHDOG=1")
                }
            }
        }
        timer.resume()
        watchdogTimer = timer
    }

    private func statusLine() -> String {
        let last = lastCommitWall.map { ", last commit \(TimeText.moment($0))" } ?? ""
        let trouble = storeFailing ? "; STORE WRITES FAILING, deltas kept in memory" : ""
        return "counting \(tracker.lives.count) interfaces\(last)\(trouble)"
    }

    // MARK: The loop's work

    /// Whether a link is counted. Tracked lives stay tracked; a new ifindex
    /// is classified once.
    private func isWatched(_ link: LinkSample) -> Bool {
        if let life = tracker.lives[link.ifindex] {
            if life.name != link.name { noteInterface(link) }  // renamed
            return true
        }
        if untracked[link.ifindex] == link.name { return false }
        let classification = classifier.classify(link)
        guard let interfaceClass = classification.interfaceClass, configuration.watchedClasses.contains(interfaceClass) else {
            untracked[link.ifindex] = link.name
            return false
        }
        untracked[link.ifindex] = nil
        remember(InterfaceInfo(classification, of: link), for: link.name)
        return true
    }

    private func noteInterface(_ link: LinkSample) {
        remember(InterfaceInfo(classifier.classify(link), of: link), for: link.name)
    }

    private func remember(_ info: InterfaceInfo, for name: String) {
        pending.interfaces[name] = info
        interfaceInfo[name] = info
    }

    private func record(_ outcome: AccountingOutcome, at now: Instant) {
        for event in outcome.events {
            let indexes = [event.oldIfindex, event.newIfindex].map { $0.map(String.init) ?? "-" }.joined(separator: " -> ")
            Log.info("\(event.name): \(event.reason.rawValue) (ifindex \(indexes), loss \(event.loss.name)): \(event.detail)")
            resetCounts[event.name, default: [:]][event.reason.rawValue, default: 0] += 1
        }
        for delta in outcome.deltas { accumulated[delta.name, default: .zero] += delta.counters }
        pending.record(outcome, at: now)
    }

    /// Reads every pending link event; returns whether some were lost.
    private func drainEvents() -> Bool {
        let batch: (events: [LinkEvent], overrun: Bool)
        do {
            batch = try events.read()
        } catch {
            Log.error("reading link events: \(error); re-dumping")
            return true
        }
        let now = clock.now()
        for event in batch.events {
            switch event.kind {
            case .new:
                guard isWatched(event.link) else { continue }
            case .deleted:
                untracked[event.link.ifindex] = nil
            }
            record(tracker.observe(event: event, at: now), at: now)
        }
        if batch.overrun { Log.warning("link events were lost (event socket overrun); re-dumping to reconcile") }
        return batch.overrun
    }

    private func handleLinkEvents() {
        if drainEvents() { samplePass(eventsWereLost: true) }
    }

    /// One sample: queued events first, then a fresh dump of every link.
    private func samplePass(eventsWereLost: Bool) {
        let started = SystemClock.monotonic()
        let lost = drainEvents() || eventsWereLost
        let now = clock.now()
        let links: [LinkSample]
        do {
            links = try linkSource.links()
        } catch {
            Log.error("netlink dump failed: \(error)")
            return
        }
        record(tracker.observe(dump: links.filter(isWatched), at: now, eventsWereLost: lost), at: now)
        lastHealthySample = SystemClock.monotonic()
        lastSampleDuration = lastHealthySample - started
        lastSampleWall = Double(now.wall)
        // A life that ended exists only in memory now: the kernel can no
        // longer tell its final counters. Commit it at once rather than at
        // the next commit interval.
        if SystemClock.monotonic() - lastCommit >= configuration.commitInterval || !pending.endedLives.isEmpty {
            commit(at: now)
        }
        publishMetrics()
    }

    /// Writes the metrics file; a failure is logged once until it recovers.
    private func publishMetrics() {
        guard let metrics else { return }
        let current = Dictionary(tracker.lives.values.map { ($0.name, $0.ifindex) }, uniquingKeysWith: { a, _ in a })
        let interfaces = accumulated.keys.sorted().map { name in
            MetricsInterface(
                device: name, info: interfaceInfo[name] ?? InterfaceInfo(interfaceClass: .other, signal: "unknown", kind: ""),
                ifindex: current[name], totals: accumulated[name] ?? .zero, resets: resetCounts[name] ?? [:])
        }
        do {
            try metrics.write(MetricsSnapshot(
                interfaces: interfaces, lastSample: lastSampleWall, sampleDuration: lastSampleDuration,
                storeWriteErrors: storeWriteErrors, lastCommit: lastCommitWall))
            if metricsFailing {
                metricsFailing = false
                Log.notice("\(metrics.path): metrics written again")
            }
        } catch {
            if !metricsFailing { Log.error("metrics file not written, will retry after each sample: \(error)") }
            metricsFailing = true
        }
    }

    /// Writes pending deltas with the baselines that produced them. On
    /// failure (a full disk, a read-only remount) everything stays in memory
    /// for the next try, and the condition is logged once, not every time.
    private func commit(at now: Instant) {
        do {
            try store.commit(
                pending, openLives: tracker.lives.values, bootID: bootID, at: now.wall, retention: configuration.retention,
                intervals: (configuration.sampleInterval, configuration.commitInterval))
            pending = PendingWrites()
            lastCommit = SystemClock.monotonic()
            lastCommitWall = now.wall
            if storeFailing {
                storeFailing = false
                Log.notice("\(store.path): writes succeed again; pending deltas committed")
            }
            ServiceManager.notify("STATUS=\(statusLine())")
        } catch {
            storeWriteErrors += 1
            if !storeFailing {
                Log.error("\(error); keeping deltas in memory and retrying")
                storeFailing = true
                ServiceManager.notify("STATUS=\(statusLine())")
            }
        }
    }

    /// SIGTERM and SIGINT: a final sample, a commit, exit 0.
    private func shutdown() {
        ServiceManager.notify("STOPPING=1")
        samplePass(eventsWereLost: false)
        commit(at: clock.now())
        store.close()
        Log.notice("ifmeterd: stopped\(storeFailing ? " with uncommitted deltas (the store could not be written)" : "")")
        exit(storeFailing ? ExitCode.ioError.rawValue : 0)
    }

    /// SIGHUP: commit what was counted under the old configuration, then
    /// apply the new one. A bad file is logged and the old one kept.
    private func reload() {
        ServiceManager.notify("RELOADING=1")
        defer { ServiceManager.notify("READY=1\nSTATUS=\(statusLine())") }
        samplePass(eventsWereLost: false)
        commit(at: clock.now())
        guard let path = configurationPath else {
            Log.notice("reload: no configuration file; nothing to change")
            return
        }
        let reloaded: Configuration
        do {
            reloaded = try ConfigurationFile.load(path: path, required: true)
        } catch {
            Log.error("reload failed, keeping the running configuration: \(error)")
            return
        }
        if reloaded.resolvedStateDirectory(environment: [:]) != configuration.resolvedStateDirectory(environment: [:])
            || reloaded.metricsFile != configuration.metricsFile
        {
            Log.warning("reload: StateDirectory= and MetricsFile= changes take effect at restart")
        }
        configuration.sampleInterval = reloaded.sampleInterval
        configuration.commitInterval = reloaded.commitInterval
        configuration.maxRateBitsPerSecond = reloaded.maxRateBitsPerSecond
        configuration.watchedClasses = reloaded.watchedClasses
        configuration.overrides = reloaded.overrides
        configuration.retention = reloaded.retention
        classifier = configuration.classifier
        tracker.settings.maxRateBitsPerSecond = reloaded.maxRateBitsPerSecond
        untracked.removeAll()
        scheduleSampling()
        Log.notice("reloaded \(path)")
    }

    /// `--benchmark-samples N`: N sample passes back to back, exactly as the
    /// loop runs them, then the median wall and CPU time of one pass.
    public func benchmark(samples: Int) -> (wall: Double, cpu: Double) {
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
    public func finishOnce() -> Never {
        store.close()
        exit(storeFailing ? ExitCode.ioError.rawValue : 0)
    }
}
