import Glibc
import IfmeterCore

let program = "ifmeterd"

let usage = """
    Usage: ifmeterd [--config FILE] [--state-dir DIR] [--interval SECONDS]
                    [--commit-interval SECONDS] [--metrics-file PATH] [--once]
                    [--benchmark-samples N]
           ifmeterd --relay-metrics SOURCE TARGET

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
      --relay-metrics SOURCE TARGET
                                 copy the metrics file SOURCE to TARGET (node_exporter's
                                 textfile directory) whenever the daemon replaces it
                                 (ifmeter-metrics.service)
      -h, --help                 this help
      --version                  the version

    Signals: SIGTERM/SIGINT take a final sample, commit and exit 0; SIGHUP
    commits, then reloads the configuration.

    """

func usageFailure(_ message: String) -> Never {
    Output.fail(program, "\(message) (see 'ifmeterd --help')", .usage)
}

/// What --help and --version print; a failed write (full disk, closed pipe) exits 74 like ifmeter's, never 0.
func printAndExit(_ text: String) -> Never {
    do {
        try Output.standardOutputReportingErrors(text)
    } catch {
        Output.fail(program, "\(error)", .ioError)
    }
    exit(0)
}

// A function, not top-level code: top-level variables are main-actor state, which needs the
// concurrency runtime (and libdispatch with it) in the binary; the daemon has no use for either.
func main() -> Never {
    // Paths that are not UTF-8 would be silently rewritten: refused.
    if let bad = CommandLine.argumentBytes.firstIndex(where: { $0.text == nil }) {
        usageFailure("argument \(bad + 1) is not valid UTF-8")
    }
    if CommandLine.arguments.dropFirst().first == "--relay-metrics" {
        let paths = Array(CommandLine.arguments.dropFirst(2))
        guard paths.count == 2, paths.allSatisfy({ $0.hasPrefix("/") }) else { usageFailure("--relay-metrics: expected two absolute paths, SOURCE and TARGET") }
        do { try MetricsRelay(source: paths[0], target: paths[1]).run() } catch { Output.fail(program, "\(error)", .ioError) }
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
    do {
        configPath = try arguments.option("--config")
        stateDirectory = try arguments.option("--state-dir")
        interval = try arguments.option("--interval")
        commitInterval = try arguments.option("--commit-interval")
        metricsFile = try arguments.option("--metrics-file")
        benchmarkSamples = try arguments.option("--benchmark-samples")
        try arguments.finish()
    } catch {
        usageFailure(error.message)
    }

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
        // Absolute like StateDirectory=: the store records its journal's path, which must not depend on the cwd.
        guard stateDirectory.hasPrefix("/") else { usageFailure("--state-dir \(stateDirectory): expected an absolute path") }
        overrides.stateDirectory = stateDirectory
    }
    configuration = overrides.applied(to: configuration)
    let environment = Dictionary(
        CommandLine.environment.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })

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

main()
