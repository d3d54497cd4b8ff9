import Glibc
import IfmeterCore

/// What every command may read, resolved once from the global options.
struct Context {
    let globals: GlobalOptions
    let environment: [String: String]
    var configuration: Configuration

    init(_ globals: GlobalOptions, environment: [String: String], configuration: Configuration) {
        self.globals = globals
        self.environment = environment
        self.configuration = configuration
    }

    /// Reads the configuration the global options name (or the default, when present).
    static func loading(_ globals: GlobalOptions, environment: [String: String]) throws(CommandFailure) -> Context {
        let path = globals.configPath ?? Configuration.defaultPath
        do {
            return Context(globals, environment: environment, configuration: try ConfigurationFile.load(path: path, required: globals.configPath != nil))
        } catch {
            throw .configuration(error)
        }
    }

    /// The state directory named by --state-dir, StateDirectory= or $STATE_DIRECTORY; else the installed
    /// default, unless it holds no store and the one `make run` keeps does (StoreLocation).
    var stateDirectory: String {
        if let explicit = globals.stateDirectory { return explicit }
        let resolved = configuration.resolvedStateDirectory(environment: environment)
        guard configuration.stateDirectory == nil && environment["STATE_DIRECTORY"] == nil else { return resolved }
        return StoreLocation.fallback(
            default: resolved, workingDirectory: FileSystem.currentDirectory(), executable: FileSystem.executablePath(),
            hasStore: { FileSystem.exists($0 + "/" + CounterStore.fileName) })
    }

    /// Buckets are cut in the zone the daemon counted in, whatever this process's TZ: for what it shows and
    /// the five-minute rows it folds applying a journal (`forget`). --utc changes only how times are shown.
    static func adoptZone(of store: CounterStore) {
        guard let zone = try? store.meta("timezone") else { return }
        if LocalZone.isZoneName(zone) {
            LocalZone.adopt(zone)
        } else {
            Log.warning("ifmeter: \(store.path): the recorded time zone is not a zone name under \(LocalZone.zoneDirectory); times are cut in this process's zone")
        }
    }

    /// Where the daemon's view and journal of this store are looked for, in order (fixed places).
    var readerDirectories: [String] { Configuration.readerDirectories(stateDirectory: stateDirectory) }

    /// The daemon's journal: beside the view read, else in the first reader directory holding one.
    func journalPath(besideViewIn directory: String? = nil) -> String {
        let directory = directory ?? readerDirectories.first { FileSystem.exists($0 + "/" + Configuration.journalName) } ?? stateDirectory
        return directory + "/" + Configuration.journalName
    }

    /// The first view the daemon published in `readerDirectories`, and where.
    private func publishedView() throws(StoreError) -> (store: CounterStore, directory: String)? {
        for directory in readerDirectories {
            if let view = try ReadersView.open(in: directory) { return (view, directory) }
        }
        return nil
    }

    /// The daemon's view while it runs, or when this user may not read the store: a reader never
    /// opens the live store under a running daemon (ReadersView). Else the store itself.
    func openStore() throws(CommandFailure) -> CounterStore {
        let view: (store: CounterStore, directory: String)?
        let file: CounterStore
        do throws(StoreError) {
            view = daemonRunning || FileSystem.isReadDenied(stateDirectory + "/" + CounterStore.fileName) ? try publishedView() : nil
            if let view { file = view.store } else { file = try CounterStore(directory: stateDirectory, readOnly: true) }
        } catch {
            throw .store(error)
        }
        Self.adoptZone(of: file)
        TimeText.showsUTC = globals.utc
        noteOtherConfiguration(of: file)
        // Lives begun or ended since the daemon's last commit wait in its journal: they are shown too.
        let overlay: JournalOverlay
        do {
            overlay = try JournalOverlay(over: file, journalAt: journalPath(besideViewIn: view?.directory))
        } catch {
            throw .store(error)
        }
        if let why = overlay.inclusion.unreadable { Log.warning("ifmeter: \(why); tunnel lives since the daemon's last commit are not shown") }
        if let why = overlay.inclusion.damaged { Log.warning("ifmeter: \(why); the tunnel lives journaled after it are not shown") }
        let store = overlay.store
        // Before the kernel is read: a commit in between would otherwise mix
        // baselines newer than the counters read with totals older than them.
        do { try store.holdSnapshot() } catch { throw .store(error) }
        return store
    }

    /// `ifmeter watch` and `unwatch`'s choices, from the daemon's view or the store; none when neither is readable.
    func chosenWatches() -> [String: Bool] {
        guard let store = try? openStore() else { return [:] }
        defer { store.close() }
        return (try? store.chosenWatches()) ?? [:]
    }

    /// One line when the daemon counts with another configuration than this reads (`ifmeterd
    /// --config my.conf`, a plain `ifmeter`): what it calls watched or unwatched may differ.
    private func noteOtherConfiguration(of store: CounterStore) {
        guard let recorded = try? store.meta("config_file") else { return }
        let mine = globals.configPath ?? Configuration.defaultPath
        let daemons = recorded.isEmpty ? "built-in defaults" : recorded
        if recorded == mine || (!recorded.isEmpty && FileSystem.sameFile(recorded, mine)) { return }
        if recorded.isEmpty && globals.configPath == nil && !FileSystem.exists(mine) { return }
        let watched = ((try? store.meta("watched")) ?? nil).map { " (Watch=\($0))" } ?? ""
        Log.warning("ifmeter: the daemon counts with \(daemons)\(watched), this reads \(mine)\(recorded.isEmpty ? "" : ": --config \(daemons) shows what it counts")")
    }

    func kernelLinks() throws(CommandFailure) -> [LinkSample] {
        do {
            return try NetlinkLinkSource().links()
        } catch {
            throw .kernel("\(error)")
        }
    }

    /// The units the command line asks for, else those [Display] of the configuration sets.
    func units(_ display: DisplayOptions) -> Units { display.units(over: configuration.display.units) }

    /// The configuration file in force, or the one a user would create.
    var configPath: String { globals.configPath ?? Configuration.defaultPath }

    var bootID: String { (try? BootID.read(from: configuration.bootIDPath)) ?? "" }
    var now: Instant { SystemClock(environment: environment).now() }
    var daemonRunning: Bool { FileSystem.isLockedByAnotherProcess(stateDirectory + "/ifmeterd.lock") }

    /// Writes to stdout; a failed write (a full disk, a closed pipe) is an error.
    func print(_ text: String) throws(CommandFailure) {
        do {
            try Output.standardOutputReportingErrors(text)
        } catch {
            throw .output(error)
        }
    }

    func print(_ json: JSON) throws(CommandFailure) { try print(json.rendered() + "\n") }
}

/// Where a reader finds the store when nothing names it.
enum StoreLocation {
    /// The installed default when it has a store; else the `./state` `make run` keeps, in the working
    /// directory or the checkout the binary was built in; else the default, so the error names the usual place.
    static func fallback(default path: String, workingDirectory: String?, executable: String?, hasStore: (String) -> Bool) -> String {
        if hasStore(path) { return path }
        var candidates: [String] = []
        if let workingDirectory { candidates.append(workingDirectory + "/state") }
        if let parts = executable?.split(separator: "/", omittingEmptySubsequences: false), let build = parts.firstIndex(of: ".build") {
            candidates.append(parts[..<build].joined(separator: "/") + "/state")
        }
        return candidates.first(where: hasStore) ?? path
    }
}
