import Glibc
import IfmeterCore

/// Why a command could not do its work: `main` alone turns it into one line and a sysexits code.
enum CommandFailure: Error {
    case usage(CommandLineError)
    case configuration(ConfigurationError)
    case noBudgets(configPath: String)
    case store(StoreError)
    case kernel(String)
    /// Something else holds what the command needs (EX_UNAVAILABLE).
    case unavailable(String)
    case cannotWrite(SystemError)
    /// This user may not do what the command does (EX_NOPERM).
    case permission(String)
    case output(SystemError)
    case vnstat(VnStatImportError)
    /// An edit the store (or the daemon holding it) refused, unchanged.
    case refused(EditOutcome)
    /// A helper program ran and failed (EX_SOFTWARE): the PNG renderer.
    case renderer(String)
}

/// One function per command; each returns its exit code.
enum Commands {
    static func run(_ command: Command, _ context: Context) throws(CommandFailure) -> Int32 {
        switch command {
        case .help(let name):
            try context.print(name?.help ?? CommandName.overview)
            return 0
        case .version:
            try context.print("ifmeter \(Version.number)\n")
            return 0
        case .completions(let shell):
            try context.print(Completions.script(for: shell))
            return 0
        case .edit(let edit): return try self.edit(edit, context)
        case .importVnStat(let file, let names, let vnstatConfig): return try importVnStat(file, names: names, vnstatConfig: vnstatConfig, context)
        case .status(let selection, let layout, let display, let all): return try status(selection, layout, display, all: all, context)
        case .history(let name, let selection, let limit, let range, let display):
            return try history(name, selection, limit: limit, range, display, context)
        case .classes(let display): return try classes(display, context)
        case .check(let budget, let display, let quiet): return try check(budget, display, quiet: quiet, context)
        case .events(let selection, let limit, let json): return try events(selection, limit: limit, json: json, context)
        case .live(let selection, let interval, let count, let display, let all):
            return try live(selection, interval: interval, count: count, display, all: all, context)
        case .export(let selection, let format, let granularity, let range): return try export(selection, format, granularity, range, context)
        case .graph(let selection, let kind, let path, let format, let style, let units, let days):
            return try graph(selection, kind, path: path, format, style, units, days: days, context)
        case .interfaces(let all, let display): return try interfaces(all: all, display, context)
        }
    }

    /// The store opened for a command that changes it with no daemon running (`forget`, `import`):
    /// as its owner, under the daemon's own lock (no daemon can start meanwhile), in the daemon's
    /// zone, with a stopped daemon's journal applied first (or its next start would undo the change).
    static func claimStore(_ verb: String, _ context: Context, creating: Bool = false) throws(CommandFailure) -> CounterStore {
        let directory = context.stateDirectory
        let howToRun = "\(verb) changes the store; run it as root (sudo ifmeter \(verb)) or as the daemon's user"
        do {
            if creating {
                try FileSystem.createDirectory(directory)
            } else {
                try CounterStore.requireStore(in: directory)
            }
        } catch let error as StoreError {
            if case .permissionDenied(let path, _) = error { throw .permission("\(path): permission denied: \(howToRun)") }
            throw .store(error)
        } catch let error as SystemError {
            throw .cannotWrite(error)
        } catch {
            throw .cannotWrite(SystemError("create", path: directory, errno: EIO))
        }
        // sudo: root's lock and pid files (0600) would keep the daemon's user from its next start.
        let store = directory + "/" + CounterStore.fileName
        do { try FileSystem.becomeOwner(of: FileSystem.exists(store) ? store : directory) } catch { throw .cannotWrite(error) }
        let locked: Bool
        do {
            locked = try FileSystem.lockExclusively(directory + "/ifmeterd.lock")
        } catch let error as SystemError where error.errno == EACCES || error.errno == EPERM {
            throw .permission("\(error): \(howToRun)")
        } catch let error as SystemError {
            throw .cannotWrite(error)
        } catch {
            throw .cannotWrite(SystemError("lock", path: directory + "/ifmeterd.lock", errno: EIO))
        }
        guard locked else { throw .unavailable("\(directory): ifmeterd is running; stop it first (systemctl stop ifmeterd.socket ifmeterd, or Ctrl-C where make run runs it)") }
        if let reader = try? CounterStore(directory: directory, readOnly: true) {
            Context.adoptZone(of: reader)
            reader.close()
        }
        let opened: CounterStore
        do { opened = try CounterStore(directory: directory) } catch { throw .store(error) }
        let configuration = context.configuration
        do {
            if let journaled = try? CommitJournal.read(context.journalPath()) {
                _ = try opened.apply(journaled, retention: configuration.retention, intervals: (configuration.sampleInterval, configuration.commitInterval))
            }
        } catch {
            opened.close()
            throw .store(error)
        }
        return opened
    }

    /// The selection with names resolved among the `known` ones (`a+b` is that interface where one
    /// exists, else a merge). A name nothing knows is a usage error, never an empty screen with exit 0;
    /// a link the kernel shows (`present`) but nothing counts is said to be so.
    static func checkSelection(
        _ selection: InterfaceSelection, known: some Collection<String>, present: @autoclosure () -> [LinkSample] = [],
        configuration: Configuration = Configuration(), _ command: CommandName
    ) throws(CommandFailure) -> InterfaceSelection {
        let selection = selection.resolvingAliases(configuration.aliases, among: known).resolvingNames(among: known)
        guard var unknown = selection.unknown(among: known) else { return selection }
        let links = present()
        // `-i a+b` naming a link here called so, which nothing counts.
        if let group = selection.groups.first(where: { $0.contains(unknown) }), group.count > 1 {
            let whole = group.joined(separator: "+")
            if links.contains(where: { $0.name == whole }) { unknown = whole }
        }
        if let link = links.first(where: { $0.name == unknown }) {
            throw .usage(CommandLineError(
                "\(unknown) is a link here \(whyNotStored(link, configuration)): 'ifmeter interfaces --all' lists every link",
                command: command, pointsToHelp: false))
        }
        let list = known.isEmpty ? "none yet" : NaturalOrder.sorted(Array(known)).joined(separator: " ")
        throw .usage(CommandLineError("no interface \(unknown) (known: \(list))", command: command))
    }

    /// Why a link the kernel shows has nothing in the store, as this configuration classifies it: never
    /// counted (loopback, an ignore), a class not watched, or counted but not yet committed.
    static func whyNotStored(_ link: LinkSample, _ configuration: Configuration) -> String {
        let classification = configuration.classifier.classify(link)
        switch configuration.chosen[link.name] {
        case false?:
            return "that ifmeter unwatch excluded (ifmeter watch \(link.name) counts it again)"
        case true?:
            break
        case nil:
            guard let interfaceClass = classification.interfaceClass else {
                return "that ifmeter does not count (\(classification.signal))"
            }
            guard configuration.watchedClasses.contains(interfaceClass) else {
                return "that ifmeter does not count (\(interfaceClass.rawValue) by \(classification.signal), not in Watch=\(InterfaceClass.spelled(configuration.watchedClasses)))"
            }
        }
        return "of a class ifmeter counts, of which the store holds nothing yet (the daemon commits it within CommitIntervalSec=, if it runs with this configuration)"
    }

    /// The kernel's links for an error message; none when they cannot be read.
    static func presentLinks(_ context: Context) -> [LinkSample] { (try? context.kernelLinks()) ?? [] }

    static func status(
        _ selection: InterfaceSelection, _ layout: StatusLayout, _ display: DisplayOptions, all: Bool, _ context: Context
    ) throws(CommandFailure) -> Int32 {
        var snapshot = try readSnapshot(context, measureRates: true)
        warnOfBudgets(snapshot)
        let selection = try checkSelection(selection, known: snapshot.interfaces.map(\.name), present: presentLinks(context), configuration: context.configuration, .status)
        snapshot.interfaces = selection.apply(snapshot.interfaces)
        if display.json {
            try context.print(StatusReport.json(snapshot))
            return 0
        }
        switch layout {
        case .summary: try context.print(StatusReport.summary(snapshot, units: context.units(display), all: all, configPath: context.configPath))
        case .detail: try context.print(StatusReport.text(snapshot, units: context.units(display), configPath: context.configPath))
        case .oneline: try context.print(StatusReport.oneline(snapshot, all: all || !selection.isEmpty))
        }
        return 0
    }

    static func classes(_ display: DisplayOptions, _ context: Context) throws(CommandFailure) -> Int32 {
        let snapshot = try readSnapshot(context, measureRates: false)
        try context.print(display.json ? StatusReport.classesJSON(snapshot).rendered() + "\n" : StatusReport.classesText(snapshot, units: context.units(display)))
        return 0
    }

    static func check(_ budget: Budget?, _ display: DisplayOptions, quiet: Bool, _ context: Context) throws(CommandFailure) -> Int32 {
        var context = context
        if let budget { context.configuration.budgets = [budget] }
        if context.configuration.budgets.isEmpty {
            throw .noBudgets(configPath: context.globals.configPath ?? Configuration.defaultPath)
        }
        var snapshot = try readSnapshot(context, measureRates: false)
        // -i takes an alias here too; a real name spelt the same wins.
        if var budget, case .interface(let name) = budget.target {
            let resolved = InterfaceSelection(groups: [[name]]).resolvingAliases(context.configuration.aliases, among: snapshot.interfaces.map(\.name))
            if let meant = resolved.groups.first?.first, meant != name {
                budget.target = .interface(meant)
                context.configuration.budgets = [budget]
                snapshot = try readSnapshot(context, measureRates: false)
            }
        }
        warnOfBudgets(snapshot)
        let verdict = CheckVerdict(snapshot)
        if quiet && verdict == .ok { return verdict.rawValue }
        try context.print(display.json
            ? StatusReport.checkJSON(snapshot, exitCode: verdict.rawValue).rendered() + "\n" : StatusReport.checkText(snapshot, units: context.units(display)))
        return verdict.rawValue
    }

    static func history(
        _ name: CommandName, _ selection: InterfaceSelection, limit: Int?, _ range: TimeRange, _ display: DisplayOptions, _ context: Context
    ) throws(CommandFailure) -> Int32 {
        guard let kind = HistoryReport.Kind(rawValue: name.rawValue) else { preconditionFailure("\(name) is not a history view") }
        let store = try context.openStore()
        let now = context.now
        let additions = try liveAdditions(store, context, now: now)
        let selection = try checkSelection(selection, known: additions.classes.keys, present: presentLinks(context), configuration: context.configuration, name)
        let rows: [HistoryRow]
        let bounds = range.bounds
        do {
            rows = HistoryReport.rows(
                kind, buckets: try store.buckets(kind.granularity, from: bounds.from, to: bounds.to)
                    + (kind == .top ? try store.importedTopDays().filter { $0.start >= bounds.from && $0.start < bounds.to } : []),
                live: additions.deltas,
                classes: additions.classes, now: now.wall, names: selection, from: bounds.from, to: bounds.to, limit: limit.map { $0 == 0 ? .max : $0 } ?? kind.defaultLimit,
                countingSince: additions.firstSeen, present: additions.present, unwatched: additions.unwatched)
        } catch {
            throw .store(error)
        }
        store.close()
        try context.print(display.json ? HistoryReport.json(kind, rows).rendered() + "\n" : HistoryReport.text(kind, rows, units: context.units(display), dates: context.configuration.display.dates))
        return 0
    }

    static func events(_ selection: InterfaceSelection, limit: Int, json: Bool, _ context: Context) throws(CommandFailure) -> Int32 {
        let store = try context.openStore()
        let selection = try checkSelection(selection, known: try storedNames(store), present: presentLinks(context), configuration: context.configuration, .events)
        let all: [StoredEvent]
        do { all = try store.events() } catch { throw .store(error) }
        store.close()
        // A merge lists the events of each member.
        let events = Array(all.filter { selection.contains($0.name) }.suffix(limit == 0 ? .max : limit))
        try context.print(json ? EventsReport.json(events).rendered() + "\n" : EventsReport.text(events))
        return 0
    }

    static func export(
        _ selection: InterfaceSelection, _ format: ExportFormat, _ granularity: Granularity, _ range: TimeRange, _ context: Context
    ) throws(CommandFailure) -> Int32 {
        let store = try context.openStore()
        let selection = try checkSelection(selection, known: try storedNames(store), present: presentLinks(context), configuration: context.configuration, .export)
        let buckets: [StoredBucket]
        let bounds = range.bounds
        do { buckets = try store.buckets(granularity, from: bounds.from, to: bounds.to) } catch { throw .store(error) }
        store.close()
        try context.print(ExportWriter.render(selection.apply(buckets), format: format == .csv ? .csv : .jsonl))
        return 0
    }

    static func graph(
        _ selection: InterfaceSelection, _ kind: GraphKind, path: String, _ format: GraphFormat, _ style: GraphStyle, _ units: Units, days: Int,
        _ context: Context
    ) throws(CommandFailure) -> Int32 {
        // Found before anything is read, so a missing renderer costs nothing and writes nothing.
        let renderer = format == .png ? try pngRenderer(for: path, context) : nil
        // The picture is renamed over PATH: never over the store it is drawn from.
        let directory = context.stateDirectory
        let taken = CounterStore.stateFiles(in: directory) + [directory + "/" + Configuration.journalName]
        if path != "-", let clash = taken.first(where: { FileSystem.sameFile($0, path) }) {
            throw .usage(CommandLineError("\(path): the same file as \(clash), which ifmeter keeps; choose a file of its own", command: .graph))
        }
        // Nor over the configuration in use, by any spelling: the next start would fail on a picture.
        let configuration = context.configPath
        if path != "-", FileSystem.exists(configuration), FileSystem.sameFile(configuration, path) {
            throw .cannotWrite(SystemError(
                "replace", path: path, errno: EEXIST, explanation: "the configuration file in use (\(configuration)), left untouched; choose a file of its own"))
        }
        let store = try context.openStore()
        let now = context.now
        let additions = try liveAdditions(store, context, now: now)
        let selection = try checkSelection(selection, known: additions.classes.keys, present: presentLinks(context), configuration: context.configuration, .graph)
        var failure: StoreError?
        // A panel per class; with -i, a panel per interface or merge.
        let panels = SVGGraph.panels(kind, rows: { granularity, from in
            do throws(StoreError) {
                return HistoryReport.rows(
                    HistoryReport.Kind(listing: granularity), buckets: try store.buckets(granularity, from: from), live: additions.deltas, classes: additions.classes,
                    now: now.wall, names: selection, from: from, to: .max, limit: .max)
            } catch {
                failure = error
                return []
            }
        }, now: now.wall, days: days, byName: !selection.isEmpty, aliases: context.configuration.aliases)
        if let failure { throw .store(failure) }
        store.close()
        let svg = SVGGraph.render(
            title: SVGGraph.title(kind, now: now.wall, days: days), caveat: SVGGraph.caveat(byClass: selection.isEmpty), panels: panels,
            buckets: SVGGraph.buckets(kind), units: units, style: style
        ).svg
        var bytes = Array(svg.utf8)
        if let renderer {
            do throws(PNGRenderingError) { bytes = try PNGRenderer.render(svg, with: renderer) } catch { throw .renderer("\(path): \(error.description)") }
        }
        if path == "-" {
            // Text through print, which keeps a name's control characters off a terminal.
            guard renderer != nil else { try context.print(svg); return 0 }
            do throws(SystemError) { try Output.standardOutputBytes(bytes) } catch { throw .output(error) }
            return 0
        }
        do {
            // Temporary file and rename: a symlink planted at PATH is replaced, never written through.
            try FileSystem.writeAtomically(bytes, to: path)
        } catch let error as SystemError {
            throw .cannotWrite(error)
        } catch {
            throw .cannotWrite(SystemError("write", path: path, errno: 5))
        }
        try context.print("wrote \(path)\n")
        return 0
    }

    /// rsvg-convert's path, or why a PNG cannot be made here.
    static func pngRenderer(for path: String, _ context: Context) throws(CommandFailure) -> String {
        if path == "-" && FileSystem.isTerminal(1) {
            throw .usage(CommandLineError("a PNG on a terminal shows as noise: redirect it (> traffic.png) or write it with -o traffic.png", command: .graph))
        }
        let searched = PNGRenderer.searchDirectories(path: context.environment["PATH"])
        guard let found = PNGRenderer.locate(in: searched) else {
            throw .unavailable("\(path): \(PNGRenderingError.rendererMissing(searched: searched).description)")
        }
        return found
    }

    static func interfaces(all: Bool, _ display: DisplayOptions, _ context: Context) throws(CommandFailure) -> Int32 {
        var configuration = context.configuration
        configuration.chosen = context.chosenWatches()
        let classifier = configuration.classifier
        let links = try context.kernelLinks().map { ClassifiedLink(sample: $0, classification: classifier.classify($0)) }
        let shown = links.filter { all || configuration.watches($0.sample.name, $0.classification.interfaceClass) }
        if display.json {
            try context.print(InterfacesReport.json(shown))
        } else {
            // An empty table says nothing: say what is there and how to count it.
            try context.print(shown.isEmpty && !links.isEmpty
                ? "No watched interface. " + InterfacesReport.watchHint(
                    unwatched: links, watched: configuration.watchedClasses, configPath: context.configPath) + "--all lists every link.\n"
                : InterfacesReport.table(shown, units: context.units(display)))
        }
        return 0
    }

    static func live(
        _ selection: InterfaceSelection, interval: Double, count: Int?, _ display: DisplayOptions, all: Bool, _ context: Context
    ) throws(CommandFailure) -> Int32 {
        var configuration = context.configuration
        configuration.chosen = context.chosenWatches()
        let source: NetlinkLinkSource
        do { source = try NetlinkLinkSource() } catch { throw .kernel("\(error)") }
        let classifier = configuration.classifier
        // --all: every class; loopback and ignored links have none. Else what the daemon counts (`ifmeter watch` too).
        func shows(_ link: LinkSample) -> String? {
            let interfaceClass = classifier.classify(link).interfaceClass
            guard all ? interfaceClass != nil : configuration.watches(link.name, interfaceClass) else { return nil }
            return (interfaceClass ?? .other).rawValue
        }
        var previous = try kernelSample(source)
        let watched = previous.links.filter { shows($0) != nil }
        let selection = try checkSelection(selection, known: watched.map(\.name), present: previous.links, configuration: configuration, .live)
        func include(_ link: LinkSample) -> String? {
            guard selection.isEmpty || selection.members.contains(link.name) else { return nil }
            return shows(link)
        }
        // Ctrl-C ends the screen with a summary rather than killing it mid-line.
        let signals: Int32
        do { signals = try SignalPipe.install([SIGINT, SIGTERM]) } catch { throw .kernel("\(error)") }
        var session = LiveSession()
        let units = context.units(display)
        let terminal = FileSystem.isTerminal(1)
        var refreshes = 0
        var interrupted = false
        // The name column is as wide as the widest name seen, so the rates never shift under the eye.
        var nameWidth = 9
        var drawn = 0
        var shown: [String] = []
        if !display.json { try context.print(LiveSession.title(interval: interval, count: count)) }
        while !interrupted && (count.map({ refreshes < $0 }) ?? true) {
            interrupted = FileSystem.waitReadable(signals, seconds: interval)
            let current = try kernelSample(source)
            let elapsed = current.time - previous.time
            let rows = session.refresh(from: previous.links, to: current.links, elapsed: elapsed, selection: selection, include: include)
            if display.json {
                try context.print(liveJSON(rows, elapsed: elapsed).rendered(indent: nil) + "\n")
            } else if !interrupted {
                nameWidth = max(nameWidth, rows.map(\.name.count).max() ?? 0)
                var lines = rows.map { LiveSession.line($0, nameWidth: nameWidth, units: units) }
                if lines.isEmpty { lines = [LiveSession.nothingUp] }
                if terminal {
                    // The caveat stays below the lines while they change; the summary says it last.
                    try draw(LiveDrawing.redraw(lines + [Estimate.basis + "."], replacing: drawn), context)
                    drawn = lines.count + 1
                    shown = lines
                } else if !(rows.isEmpty && refreshes > 0) {
                    try context.print(lines.joined(separator: "\n") + "\n")
                }
            }
            previous = current
            refreshes += 1
        }
        if !display.json {
            // The last rates stay above the summary; the caveat goes, as the summary ends with it.
            if terminal && drawn > 0 { try draw(LiveDrawing.redraw(shown, replacing: drawn), context) }
            try context.print("\n" + session.summary(selection: selection, units: units))
        }
        return 0
    }

    static func draw(_ pieces: [LiveDrawing.Piece], _ context: Context) throws(CommandFailure) {
        for piece in pieces {
            switch piece {
            case .control(let control): Output.terminalControl(control)
            case .text(let text): try context.print(text)
            }
        }
    }

    static func liveJSON(_ rows: [LiveRow], elapsed: Double) -> JSON {
        JSON.object([
            ("schema", .string("ifmeter.live/1")), ("estimate", .bool(true)), ("basis", .string(Estimate.basis)),
            ("interval_seconds", .double(elapsed)),
            ("interfaces", .array(rows.map { row in
                .object([
                    ("interface", .string(row.name)), ("class", .string(row.interfaceClass)),
                    ("rx_bytes_per_second", .double(row.rate.rxBytes)), ("tx_bytes_per_second", .double(row.rate.txBytes)),
                    ("rx_packets_per_second", .double(row.rate.rxPackets)), ("tx_packets_per_second", .double(row.rate.txPackets)),
                    ("session_rx_bytes", .uint(row.session.rxBytes)), ("session_tx_bytes", .uint(row.session.txBytes)),
                ])
            })),
        ])
    }

    // MARK: Reading

    /// One kernel dump and the store, no waiting: the rates are the live delta since the last commit.
    static func readSnapshot(_ context: Context, measureRates: Bool) throws(CommandFailure) -> Snapshot {
        let store = try context.openStore()
        var snapshot: Snapshot
        do {
            snapshot = try SnapshotReader.read(
                store: store, configuration: context.configuration, bootID: context.bootID, now: context.now,
                kernel: try? context.kernelLinks(), daemonRunning: context.daemonRunning, namespace: NamespaceIdentity.current())
        } catch {
            throw .store(error)
        }
        store.close()
        if measureRates { snapshot.setRatesSinceLastCommit() }
        return snapshot
    }

    /// Once per run, beside the rows: a budget on a name never counted.
    static func warnOfBudgets(_ snapshot: Snapshot) {
        for warning in snapshot.budgetWarnings { Log.warning("ifmeter: " + warning) }
    }

    /// The names the store has totals for: counted, imported or both.
    static func storedNames(_ store: CounterStore) throws(CommandFailure) -> [String] {
        do {
            let counted = try store.interfaces().map(\.name)
            return counted + (try store.importedInterfaces().map(\.name).filter { !counted.contains($0) })
        } catch { throw .store(error) }
    }

    static func liveAdditions(_ store: CounterStore, _ context: Context, now: Instant) throws(CommandFailure) -> LiveAdditions {
        do {
            return try SnapshotReader.liveAdditions(
                store: store, configuration: context.configuration, bootID: context.bootID, now: now, kernel: try? context.kernelLinks(),
                namespace: NamespaceIdentity.current())
        } catch {
            throw .store(error)
        }
    }

    static func kernelSample(_ source: NetlinkLinkSource) throws(CommandFailure) -> (links: [LinkSample], time: Double) {
        do {
            return (try source.links(), SystemClock.monotonic())
        } catch {
            throw .kernel("\(error)")
        }
    }
}
