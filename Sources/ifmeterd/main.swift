import Glibc
import IfmeterCore

let program = "ifmeterd"

let usage = """
    Usage: ifmeterd [--config FILE] [--state-dir DIR] [--interval SECONDS]
                    [--commit-interval SECONDS] [--metrics-file PATH] [--once]
                    [--benchmark-samples N]
           ifmeterd [--config FILE] [--state-dir DIR] (--wal-index-in DIR | --wal-index-out DIR)

    Counts traffic on Wi-Fi, cellular and tunnel interfaces from the kernel's
    interface counters and keeps totals across interface recreation, driver
    resets and reboots in an SQLite store. Runs in the foreground (systemd
    supervises it). Figures are estimates: not per-application, not
    billing-grade.

    Options (they override the configuration file; a value may follow its option
    after an = sign):
      --config FILE              configuration (default \(Configuration.defaultPath), optional)
      --state-dir DIR            store directory, absolute (default: StateDirectory= in the
                                 config, else $STATE_DIRECTORY, else \(Configuration.defaultStateDirectory))
      --interval SECONDS         sampling interval (default 15)
      --commit-interval SECONDS  store commit interval (default 300)
      --metrics-file PATH        write Prometheus metrics there after every sample
                                 (node_exporter's textfile directory)
      --once                     one sample pass, commit, exit (tests, cron)
      --benchmark-samples N      after start-up, time N sample passes (make bench)
      --wal-index-in DIR         do not run: bind a file in DIR, a tmpfs, over the store's
                                 WAL index (ifmeter.db-shm) so its writes stay in memory,
                                 unless a process has the store open; as root, before the
                                 daemon starts (ifmeterd.service does), then exit
      --wal-index-out DIR        do not run: undo --wal-index-in DIR, unless a process has
                                 the store open (the package's removal does), then exit
      -h, --help                 this help
      --version                  the version

    Signals: SIGTERM/SIGINT take a final sample, commit and exit 0; SIGHUP
    commits, then reloads the configuration.

    """

func usageFailure(_ message: String) -> Never {
    Output.fail(program, "\(message) (see 'ifmeterd --help')", .usage)
}

/// What --help and --version print: a write that fails (a full disk, a
/// closed pipe) exits 74 like ifmeter's, never 0.
func printAndExit(_ text: String) -> Never {
    do {
        try Output.standardOutputReportingErrors(text)
    } catch {
        Output.fail(program, "\(error)", .ioError)
    }
    exit(0)
}

// A function, not top-level code: top-level variables are main-actor
// state, which needs the concurrency runtime (and libdispatch with it) in
// the binary; the daemon has no use for either.
func main() -> Never {
    // Parse. Paths that are not UTF-8 would be silently rewritten: refused.
    if let bad = CommandLine.argumentBytes.firstIndex(where: { $0.text == nil }) {
        usageFailure("argument \(bad + 1) is not valid UTF-8")
    }
    var arguments = Arguments(CommandLine.arguments.dropFirst())
    if arguments.flag("--help") || arguments.flag("-h") {
        printAndExit(usage)
    }
    if arguments.flag("--version") {
        // As ifmeter does: `--version` with anything else is a usage error.
        do { try arguments.finish() } catch { usageFailure("\(error)") }
        printAndExit("ifmeterd \(Version.number)\n")
    }
    let once = arguments.flag("--once")
    let benchmarkSamples: String?
    let configPath: String?
    let stateDirectory: String?
    let interval: String?
    let commitInterval: String?
    let metricsFile: String?
    let walIndexIn: String?
    let walIndexOut: String?
    do {
        configPath = try arguments.option("--config")
        stateDirectory = try arguments.option("--state-dir")
        interval = try arguments.option("--interval")
        commitInterval = try arguments.option("--commit-interval")
        metricsFile = try arguments.option("--metrics-file")
        benchmarkSamples = try arguments.option("--benchmark-samples")
        walIndexIn = try arguments.option("--wal-index-in")
        walIndexOut = try arguments.option("--wal-index-out")
        try arguments.finish()
    } catch {
        usageFailure(error.message)
    }

    // Validate.
    var configuration: Configuration
    do {
        configuration = try ConfigurationFile.load(path: configPath ?? Configuration.defaultPath, required: configPath != nil)
    } catch {
        Output.fail(program, error.description, error.isMissingFile ? .noInput : .config)
    }
    func seconds(_ text: String?, option: String, range: ClosedRange<Double>) -> Double? {
        guard let text else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            usageFailure("\(option) \(text): expected seconds from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
    let benchmarkCount = benchmarkSamples.map { text in
        guard let count = Int(text), count > 0 else { usageFailure("--benchmark-samples \(text): expected a positive count") }
        return count
    }
    var overrides = CommandLineOverrides()
    overrides.sampleInterval = seconds(interval, option: "--interval", range: 0.1...86_400)
    overrides.commitInterval = seconds(commitInterval, option: "--commit-interval", range: 0...86_400)
    if let metricsFile {
        guard metricsFile.hasPrefix("/") else { usageFailure("--metrics-file \(metricsFile): expected an absolute path") }
        overrides.metricsFile = metricsFile
    }
    if let stateDirectory {
        // Absolute like StateDirectory=: the store records its journal's
        // path, which a relative one would make depend on the caller's cwd.
        guard stateDirectory.hasPrefix("/") else { usageFailure("--state-dir \(stateDirectory): expected an absolute path") }
        overrides.stateDirectory = stateDirectory
    }
    configuration = overrides.applied(to: configuration)
    let environment = Dictionary(
        CommandLine.environment.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    for (option, directory) in [("--wal-index-in", walIndexIn), ("--wal-index-out", walIndexOut)] {
        guard let directory else { continue }
        guard directory.hasPrefix("/") else { usageFailure("\(option) \(directory): expected an absolute path") }
        guard !once, benchmarkCount == nil, interval == nil, commitInterval == nil, metricsFile == nil,
              walIndexIn == nil || walIndexOut == nil else {
            usageFailure("\(option) runs alone: only --config and --state-dir go with it")
        }
        moveWALIndex(
            in: option == "--wal-index-in", storeDirectory: configuration.resolvedStateDirectory(environment: environment),
            runtimeDirectory: directory)
    }

    // Run.
    LocalZone.pinForProcess()
    HeapTuning.keepFreedMemory()
    do {
        let daemon = try Daemon(Daemon.Options(
            configuration: configuration, configurationPath: configPath ?? Configuration.defaultPath, configurationIsOptional: configPath == nil,
            stateDirectory: configuration.resolvedStateDirectory(environment: environment), environment: environment, overrides: overrides,
            once: once || benchmarkCount != nil))
        try daemon.start()
        if let count = benchmarkCount {
            let (wall, cpu) = daemon.benchmark(samples: count)
            Output.standardOutput("sample_pass_wall_seconds=\(wall) sample_pass_cpu_seconds=\(cpu)\n")
            exit(daemon.finishOnce().rawValue)
        }
        exit((once ? daemon.finishOnce() : daemon.run()).rawValue)
    } catch {
        Output.fail(program, error.message, error.exitCode)
    }
}

/// `--wal-index-in` and `--wal-index-out`: one line on what was done,
/// exit 0 unless it failed.
func moveWALIndex(in placing: Bool, storeDirectory: String, runtimeDirectory: String) -> Never {
    let index = WALIndexPlacement.indexPath(in: storeDirectory)
    let memory = WALIndexPlacement.indexPath(in: runtimeDirectory)
    func holder(_ pid: Int32) -> String { pid > 0 ? "process \(pid) has" : "a process has" }
    do {
        let line: String
        if placing {
            switch try WALIndexPlacement.place(storeDirectory: storeDirectory, runtimeDirectory: runtimeDirectory) {
            case .placed: line = "WAL index \(index) bound to \(memory): its writes stay in memory"
            case .alreadyPlaced: line = "WAL index \(index) already bound to \(memory)"
            case .inUse(let pid): line = "WAL index \(index) left on disk: \(holder(pid)) the store open (tried again at the next start)"
            case .otherMount: line = "WAL index \(index) left as it is: something else is mounted there"
            case .runtimeDirectoryOnDisk: line = "WAL index \(index) left on disk: \(runtimeDirectory) is not a tmpfs"
            }
        } else {
            switch try WALIndexPlacement.remove(storeDirectory: storeDirectory, runtimeDirectory: runtimeDirectory) {
            case .removed: line = "WAL index \(index) is on disk again"
            case .notPlaced: line = "WAL index \(index) was not bound: nothing to undo"
            case .inUse(let pid): line = "WAL index \(index) left bound to \(memory): \(holder(pid)) the store open"
            }
        }
        Output.standardError("\(program): \(line)\n")
        exit(0)
    } catch {
        let undone = placing ? "not moved to \(runtimeDirectory)" : "not moved back from \(runtimeDirectory)"
        Output.fail(program, "WAL index \(undone): \(error)", exitCode(error.errno))
    }
    func exitCode(_ number: Int32) -> ExitCode {
        switch number {
        case ENOENT, ENOTDIR: .noInput
        case EPERM, EACCES: .noPermission
        default: .ioError
        }
    }
}

main()
