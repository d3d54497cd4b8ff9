extension Daemon {
    /// SIGHUP: commit what the old configuration counted, then apply the new one; a bad file is logged, the old kept.
    func reload() {
        ServiceManager.notify("RELOADING=1")
        defer { ServiceManager.notify("READY=1\nSTATUS=\(statusLine())") }
        samplePass(eventsWereLost: false)
        keep(route(commitDue: !clockTrust.isHolding), at: readClock())
        serveEditRequest()
        guard let path = options.configurationPath else {
            Log.notice("reload: no configuration file; nothing to change")
            return
        }
        // The default file is read as at start: one created since applies now.
        let reloaded: Configuration
        do {
            reloaded = options.overrides.applied(to: try ConfigurationFile.load(path: path, required: !options.configurationIsOptional))
            if options.configurationIsOptional && !FileSystem.exists(path) { Log.notice("reload: no \(path); the defaults apply") }
        } catch {
            Log.error("reload failed, keeping the running configuration: \(error)")
            return
        }
        let atRestart = [
            ("StateDirectory=", reloaded.resolvedStateDirectory(environment: [:]) != configuration.resolvedStateDirectory(environment: [:])),
            ("EventBufferBytes=", reloaded.eventBufferBytes != configuration.eventBufferBytes),
            ("BootIDPath=", reloaded.bootIDPath != configuration.bootIDPath),
        ].filter(\.1).map(\.0)
        if !atRestart.isEmpty {
            Log.warning("reload: \(atRestart.joined(separator: ", ")) changes take effect at restart")
        }
        let metricsMoved = reloaded.metricsFile != configuration.metricsFile
        if metricsMoved {
            do {
                metrics = try Self.metricsFile(reloaded.metricsFile, taken: ownFiles + Self.configurationFile(options.configurationPath))
                configuration.metricsFile = reloaded.metricsFile
                health.metricsWrites.reset()
            } catch {
                Log.error("reload: keeping MetricsFile=\(configuration.metricsFile ?? ""): \(error)")
            }
        }
        // New budgets are published at once, not a sample later.
        let budgetsChanged = reloaded.budgets != configuration.budgets || reloaded.billingDay != configuration.billingDay
            || reloaded.billingDays != configuration.billingDays
        apply(reloaded)
        rewatch()
        // Unless churn has set the next read, which keeps the short slack.
        if !gathering.isGathering { TimerSlack.set(seconds: sampleSlack) }
        if metricsMoved || budgetsChanged { publishMetrics() }
        Log.notice("reloaded \(path)")
    }

    /// What the configuration watches now, applied to a fresh dump: lives no longer watched end, new ones begin.
    func rewatch() {
        do {
            let links = try linkSource.links()
            finish(meter.reconfigure(Meter.Policy(configuration), links: links, at: readClock()))
            policyAwaitsDump = false
            keep(route(commitDue: meter.hasUncommittedLifeChanges && !clockTrust.isHolding), at: readClock())
            writeStepLines()
        } catch {
            policyAwaitsDump = true
            Log.error("reload: netlink dump failed: \(error); the new Watch= applies from the next sample")
        }
    }

    /// `reloaded` in force but for the `atRestart` keys and the metrics file, which `reload` moves itself.
    private func apply(_ reloaded: Configuration) {
        var next = reloaded
        next.stateDirectory = configuration.stateDirectory
        next.eventBufferBytes = configuration.eventBufferBytes
        next.bootIDPath = configuration.bootIDPath
        next.metricsFile = configuration.metricsFile
        next.chosen = configuration.chosen
        configuration = next
        budgetLedger.invalidate()
        store.countingWith = Self.countingWith(next, path: options.configurationPath)
        gathering.sampleIntervalChanged(to: reloaded.sampleInterval)
    }

    /// What the store tells readers of the configuration counted with, so `ifmeter` started with
    /// another one says so rather than call the daemon's links unwatched.
    static func countingWith(_ configuration: Configuration, path: String?) -> [(key: String, value: String)] {
        [("config_file", path ?? ""), ("watched", InterfaceClass.spelled(configuration.watchedClasses))]
    }

    /// The configuration file, when it is one: `--config /dev/null` is no file of ours.
    static func configurationFile(_ path: String?) -> [String] {
        [path].compactMap { $0 }.filter { FileSystem.exists($0) && FileSystem.nonFileKind($0, followingSymbolicLinks: true) == nil }
    }

    /// Replaced by a rename after every sample: never over the daemon's own files (`taken`) by any
    /// spelling, a device or the kernel's files; a missing directory is exit 73.
    static func metricsFile(_ path: String?, taken: [String]) throws(DaemonStartError) -> MetricsFile? {
        guard let path else { return nil }
        let key = "MetricsFile="
        if let clash = taken.first(where: { FileSystem.sameFile($0, path) }) {
            throw DaemonStartError(message: "\(key)\(path): the same file as \(clash); choose a file of its own", exitCode: .config)
        }
        if let kind = FileSystem.nonFileKind(path), kind == .device {
            throw DaemonStartError(message: "\(key)\(path): \(kind), not a file; left untouched: name a file of its own", exitCode: .config)
        }
        let directory = FileSystem.directoryName(path)
        if let root = FileSystem.kernelTree(holding: directory) {
            throw DaemonStartError(message: "\(key)\(path): in \(root), among the kernel's files; choose a file of its own elsewhere", exitCode: .config)
        }
        guard FileSystem.isDirectory(directory) else {
            throw DaemonStartError(message: "\(path): metrics directory \(directory) does not exist", exitCode: .cannotCreate)
        }
        return MetricsFile(path: path)
    }

    /// `--benchmark-samples N`: N sample passes as the loop runs them, then one pass's median wall and CPU.
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
}
