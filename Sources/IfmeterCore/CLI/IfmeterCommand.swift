/// The `ifmeter` command line: parse, validate, run. Every failure is one
/// line on stderr with a sysexits code; `--help` goes to stdout.
public enum IfmeterCommand {
    /// A failure with its exit code.
    struct Failure: Error {
        var message: String
        var code: ExitCode
    }

    /// Global options, valid before or after the command.
    struct Globals {
        var configPath: String?
        var stateDirectory: String?
        var json = false
        var units = Units()
    }

    public static func main(_ words: [String], environment: [String: String]) -> Int32 {
        var arguments = Arguments(words)
        let help = arguments.flag("--help") || arguments.flag("-h")
        var globals = Globals()
        let command: String
        var named = false
        do {
            globals.configPath = try arguments.option("--config")
            globals.stateDirectory = try arguments.option("--state-dir")
            globals.json = arguments.flag("--json")
            if arguments.flag("--si") { globals.units.scale = .si }
            if arguments.flag("--bytes") { globals.units.scale = .raw }
            if arguments.flag("--byte-rates") { globals.units.ratesInBits = false }
            let explicit = arguments.popPositional()
            named = explicit != nil
            command = explicit ?? "status"
        } catch {
            return usage(error.message, command: nil)
        }
        guard let usageText = CommandHelp.text[command] else {
            return usage("unknown command \(command)", command: nil)
        }
        if help {
            Output.standardOutput(named ? usageText : CommandHelp.overview)
            return 0
        }
        do {
            try run(command, &arguments, globals, environment: environment)
            return 0
        } catch let error as UsageError {
            return usage(error.message, command: command)
        } catch let failure as Failure {
            Output.standardError("ifmeter: \(failure.message)\n")
            return failure.code.rawValue
        } catch let exit as CheckResult {
            return exit.code
        } catch let error as StoreError {
            Output.standardError("ifmeter: \(error)\n")
            return error.exitCode.rawValue
        } catch {
            Output.standardError("ifmeter: \(error)\n")
            return ExitCode.software.rawValue
        }
    }

    static func usage(_ message: String, command: String?) -> Int32 {
        let hint = command.map { "ifmeter \($0) --help" } ?? "ifmeter --help"
        Output.standardError("ifmeter: \(message) (see '\(hint)')\n")
        return ExitCode.usage.rawValue
    }

    /// `check`'s verdict, carried out as an exit code.
    struct CheckResult: Error { var code: Int32 }

    // MARK: Dispatch

    static func run(_ command: String, _ arguments: inout Arguments, _ globals: Globals, environment: [String: String]) throws {
        let configuration = try loadConfiguration(globals)
        switch command {
        case "interfaces":
            let all = arguments.flag("--all")
            try arguments.finish()
            let links = try kernelLinks()
            let classifier = configuration.classifier
            let shown = links.map { ClassifiedLink(sample: $0, classification: classifier.classify($0)) }
                .filter { all || $0.isWatched(by: configuration.watchedClasses) }
            Output.standardOutput(globals.json ? InterfacesReport.json(shown).rendered() + "\n" : InterfacesReport.table(shown))
        case "live":
            let interval = try seconds(arguments.option("--interval"), option: "--interval") ?? 1
            let count = try number(arguments.option("--count"), option: "--count")
            try arguments.finish()
            try live(configuration, globals, interval: interval, count: count)
        case "status", "classes", "check":
            let names = Set(remainingNames(&arguments))
            try arguments.finish()
            if command != "status" && !names.isEmpty { throw UsageError("\(command) takes no interface names") }
            if command == "check" && configuration.budgets.isEmpty {
                throw Failure(message: "no budgets configured: add a [Budgets] section to \(globals.configPath ?? Configuration.defaultPath)", code: .config)
            }
            let store = try openStore(configuration, globals, environment: environment)
            var snapshot = try readSnapshot(store, configuration, globals, environment: environment, measureRates: command == "status")
            if !names.isEmpty {
                let unknown = names.subtracting(snapshot.interfaces.map(\.name))
                if let name = unknown.sorted().first {
                    throw UsageError("no interface \(name) in the store (known: \(snapshot.interfaces.map(\.name).joined(separator: " ")))")
                }
                snapshot.interfaces = snapshot.interfaces.filter { names.contains($0.name) }
            }
            switch command {
            case "status":
                Output.standardOutput(globals.json ? StatusReport.json(snapshot).rendered() + "\n" : StatusReport.text(snapshot, units: globals.units))
            case "classes":
                Output.standardOutput(globals.json ? StatusReport.classesJSON(snapshot).rendered() + "\n" : StatusReport.classesText(snapshot, units: globals.units))
            default:
                let code = checkExitCode(snapshot)
                Output.standardOutput(globals.json ? StatusReport.checkJSON(snapshot, exitCode: code).rendered() + "\n" : StatusReport.budgetLines(snapshot, units: globals.units))
                if code != 0 { throw CheckResult(code: code) }
            }
        case "events":
            let names = Set(try options(&arguments, "-i") + options(&arguments, "--interface"))
            let limit = try number(arguments.option("--limit"), option: "--limit") ?? 50
            try arguments.finish()
            let store = try openStore(configuration, globals, environment: environment)
            let events = try store.events().filter { names.isEmpty || names.contains($0.name) }.suffix(limit)
            Output.standardOutput(globals.json ? EventsReport.json(Array(events)).rendered() + "\n" : EventsReport.text(Array(events)))
        case "export":
            let format = try arguments.option("--format").map { text in
                guard let format = ExportWriter.Format(rawValue: text) else { throw UsageError("--format \(text): expected csv or jsonl") }
                return format
            } ?? .csv
            let granularity = try arguments.option("--granularity").map { text in
                guard let granularity = Granularity(rawValue: text) else { throw UsageError("--granularity \(text): expected 5min, hour, day, month or year") }
                return granularity
            } ?? .day
            let (from, to) = try range(&arguments)
            try arguments.finish()
            let store = try openStore(configuration, globals, environment: environment)
            Output.standardOutput(ExportWriter.render(try store.buckets(granularity, from: from, to: to), format: format))
        case "graph":
            guard let path = try arguments.option("--svg") else { throw UsageError("graph needs --svg FILE") }
            let days = try number(arguments.option("--days"), option: "--days") ?? 30
            try arguments.finish()
            let store = try openStore(configuration, globals, environment: environment)
            let snapshot = try readSnapshot(store, configuration, globals, environment: environment, measureRates: false)
            let now = snapshot.now
            let from = TimeBuckets.start(of: .day, days - 1, before: now)
            let rows = HistoryReport.rows(
                .days, buckets: try store.buckets(.day, from: from), live: liveDeltas(snapshot), classes: classes(snapshot),
                now: now, names: [], from: from, to: .max, limit: .max)
            do {
                // Temporary file and rename: a symlink planted at PATH is replaced, never written through.
                try FileSystem.writeAtomically(Array(SVGGraph.render(days: rows, from: from, dayCount: days, now: now).utf8), to: path)
            } catch {
                throw Failure(message: "\(error)", code: .cannotCreate)
            }
            if !globals.json { Output.standardOutput("wrote \(path)\n") }
        default:
            guard let kind = HistoryReport.Kind(rawValue: command) else { throw UsageError("unknown command \(command)") }
            let names = Set(try options(&arguments, "-i") + options(&arguments, "--interface"))
            let limit = try number(arguments.option("--limit"), option: "--limit") ?? kind.defaultLimit
            let (from, to) = try range(&arguments)
            try arguments.finish()
            let store = try openStore(configuration, globals, environment: environment)
            let snapshot = try readSnapshot(store, configuration, globals, environment: environment, measureRates: false)
            let rows = HistoryReport.rows(
                kind, buckets: try store.buckets(kind.granularity, from: from, to: to), live: liveDeltas(snapshot),
                classes: classes(snapshot), now: snapshot.now, names: names, from: from, to: to, limit: limit)
            Output.standardOutput(globals.json ? HistoryReport.json(kind, rows).rendered() + "\n" : HistoryReport.text(kind, rows, units: globals.units))
        }
    }

    /// 0 within every budget, 1 when one is projected over by the end of the
    /// cycle, 2 when one is exceeded (the monitoring-plugin convention).
    static func checkExitCode(_ snapshot: Snapshot) -> Int32 {
        if snapshot.budgets.contains(where: { $0.state == .exceeded }) { return 2 }
        if snapshot.budgets.contains(where: { $0.state == .projectedOver }) { return 1 }
        return 0
    }

    // MARK: Reading

    static func loadConfiguration(_ globals: Globals) throws -> Configuration {
        do {
            return try ConfigurationFile.load(path: globals.configPath ?? Configuration.defaultPath, required: globals.configPath != nil)
        } catch let error as ConfigurationError {
            throw Failure(message: error.description, code: error.isMissingFile ? .noInput : .config)
        }
    }

    static func stateDirectory(_ configuration: Configuration, _ globals: Globals, environment: [String: String]) -> String {
        globals.stateDirectory ?? configuration.resolvedStateDirectory(environment: environment)
    }

    static func openStore(_ configuration: Configuration, _ globals: Globals, environment: [String: String]) throws -> CounterStore {
        let directory = stateDirectory(configuration, globals, environment: environment)
        do {
            return try CounterStore(directory: directory, readOnly: true)
        } catch .missing(let path) {
            throw Failure(message: "\(path): no store yet: start the daemon (systemctl start ifmeterd, or make run)", code: .noInput)
        } catch {
            throw Failure(message: error.description, code: error.exitCode)
        }
    }

    static func kernelLinks() throws -> [LinkSample] {
        do {
            return try NetlinkLinkSource().links()
        } catch {
            throw Failure(message: "\(error)", code: .unavailable)
        }
    }

    static func readSnapshot(
        _ store: CounterStore, _ configuration: Configuration, _ globals: Globals, environment: [String: String], measureRates: Bool
    ) throws -> Snapshot {
        let directory = stateDirectory(configuration, globals, environment: environment)
        let bootID = (try? BootID.read(from: configuration.bootIDPath)) ?? ""
        // The kernel is read twice, half a second apart, for current rates.
        let source = try? NetlinkLinkSource()
        let first = try? source?.links()
        var kernel = first
        var rates: [Int32: (rx: Double, tx: Double)] = [:]
        if measureRates, let source, let first {
            let window = 0.5
            let started = SystemClock.monotonic()
            FileSystem.sleep(seconds: window)
            if let second = try? source.links() {
                rates = Self.rates(from: first, to: second, over: SystemClock.monotonic() - started)
                kernel = second
            }
        }
        do {
            return try SnapshotReader.read(
                store: store, configuration: configuration, bootID: bootID, now: SystemClock(environment: environment).now(),
                kernel: kernel, rates: rates, daemonRunning: FileSystem.isLockedByAnotherProcess(directory + "/ifmeterd.lock"))
        } catch {
            throw Failure(message: error.description, code: error.exitCode)
        }
    }

    static func liveDeltas(_ snapshot: Snapshot) -> [String: LinkCounters] {
        Dictionary(snapshot.interfaces.map { ($0.name, $0.liveDelta) }, uniquingKeysWith: { a, _ in a })
    }

    static func classes(_ snapshot: Snapshot) -> [String: String] {
        Dictionary(snapshot.interfaces.map { ($0.name, $0.interfaceClass) }, uniquingKeysWith: { a, _ in a })
    }

    // MARK: live

    static func live(_ configuration: Configuration, _ globals: Globals, interval: Double, count: Int?) throws {
        let source: NetlinkLinkSource
        do { source = try NetlinkLinkSource() } catch { throw Failure(message: "\(error)", code: .unavailable) }
        let classifier = configuration.classifier
        var previous = try kernelSample(source)
        let terminal = FileSystem.isTerminal(1)
        var refreshes = 0
        while count.map({ refreshes < $0 }) ?? true {
            FileSystem.sleep(seconds: interval)
            let current = try kernelSample(source)
            let elapsed = current.time - previous.time
            let rates = Self.rates(from: previous.links, to: current.links, over: elapsed)
            var table = TextTable([("INTERFACE", .left), ("CLASS", .left), ("RX RATE", .right), ("TX RATE", .right), ("RX TOTAL", .right), ("TX TOTAL", .right)])
            var rows: [JSON] = []
            for link in current.links {
                guard let interfaceClass = classifier.classify(link).interfaceClass, configuration.watchedClasses.contains(interfaceClass) else { continue }
                let (rx, tx) = rates[link.ifindex] ?? (0, 0)  // new since the last refresh
                table.append([link.name, interfaceClass.displayName, globals.units.rate(bytesPerSecond: rx), globals.units.rate(bytesPerSecond: tx),
                              globals.units.bytes(link.counters.rxBytes), globals.units.bytes(link.counters.txBytes)])
                rows.append(.object([
                    ("interface", .string(link.name)), ("class", .string(interfaceClass.rawValue)),
                    ("rx_bytes_per_second", .double(rx)), ("tx_bytes_per_second", .double(tx)),
                    ("rx_bytes", .uint(link.counters.rxBytes)), ("tx_bytes", .uint(link.counters.txBytes)),
                ]))
            }
            if globals.json {
                Output.standardOutput(JSON.object([
                    ("schema", .string("ifmeter.live/1")), ("estimate", .bool(true)), ("basis", .string(Estimate.basis)),
                    ("interval_seconds", .double(elapsed)), ("interfaces", .array(rows)),
                ]).rendered(indent: nil) + "\n")
            } else {
                // In place on a terminal; one table after another in a pipe.
                if terminal { Output.terminalControl(.clearScreen) }
                Output.standardOutput((!terminal && refreshes > 0 ? "\n" : "") + "ifmeter live, every \(interval) s (Ctrl-C to stop): rates read from the kernel, \(Estimate.basis)\n" + table.rendered())
            }
            previous = current
            refreshes += 1
        }
    }

    /// Bytes per second per link present in both dumps (a counter that went
    /// down counts from zero, as in the accounting).
    static func rates(from before: [LinkSample], to after: [LinkSample], over elapsed: Double) -> [Int32: (rx: Double, tx: Double)] {
        let previous = Dictionary(before.map { ($0.ifindex, $0.counters) }, uniquingKeysWith: { a, _ in a })
        var rates: [Int32: (rx: Double, tx: Double)] = [:]
        for link in after {
            guard let old = previous[link.ifindex] else { continue }
            rates[link.ifindex] = (
                Double(CounterStep.between(old.rxBytes, link.counters.rxBytes, width: .bits64).delta) / elapsed,
                Double(CounterStep.between(old.txBytes, link.counters.txBytes, width: .bits64).delta) / elapsed)
        }
        return rates
    }

    static func kernelSample(_ source: NetlinkLinkSource) throws -> (links: [LinkSample], time: Double) {
        do {
            return (try source.links(), SystemClock.monotonic())
        } catch {
            throw Failure(message: "\(error)", code: .unavailable)
        }
    }

    // MARK: Option helpers

    /// Repeated options naming interfaces, in the encoded form (InterfaceName).
    static func options(_ arguments: inout Arguments, _ name: String) throws -> [String] {
        var values: [String] = []
        while let value = try arguments.option(name) { values.append(InterfaceName.fromUser(value)) }
        return values
    }

    /// Positional interface names, in the encoded form (InterfaceName).
    static func remainingNames(_ arguments: inout Arguments) -> [String] {
        var names: [String] = []
        while let name = arguments.popPositional() { names.append(InterfaceName.fromUser(name)) }
        return names
    }

    static func number(_ text: String?, option: String) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), value > 0, value <= 1_000_000 else { throw UsageError("\(option) \(text): expected a whole number from 1 to 1000000") }
        return value
    }

    static func seconds(_ text: String?, option: String) throws -> Double? {
        guard let text else { return nil }
        guard let value = Double(text), value >= 0.1, value <= 3600 else { throw UsageError("\(option) \(text): expected seconds from 0.1 to 3600") }
        return value
    }

    /// `--begin` (inclusive) and `--end` (inclusive of the named day or minute).
    static func range(_ arguments: inout Arguments) throws -> (Int64, Int64) {
        func parse(_ option: String) throws -> (Int64, Bool)? {
            guard let text = try arguments.option(option) else { return nil }
            guard let time = TimeText.parse(text) else { throw UsageError("\(option) \(text): expected YYYY-MM-DD or \"YYYY-MM-DD HH:MM\"") }
            return (time, !text.contains(":"))
        }
        let begin = try parse("--begin")?.0 ?? .min
        var end = Int64.max
        if let (time, dateOnly) = try parse("--end") {
            end = dateOnly ? TimeBuckets.start(of: .day, -1, before: time) : time + 60
        }
        if begin >= end { throw UsageError("--begin must come before --end") }
        return (begin, end)
    }
}
