/// How long each kind of time bucket is kept (0: forever); the defaults are vnStat's.
package struct Retention: Sendable, Hashable {
    package var fiveMinuteHours = 48
    package var hourlyDays = 4
    package var dailyDays = 62
    package var monthlyMonths = 25
    package var yearlyYears = 0
    /// Seconds a gone interface's series stay in the metrics file (`MetricsKeepGoneSec=`). Kept here as
    /// it bounds retirement from below: a name retired while still shown would return at a smaller total
    /// after a restart, and a published counter never decreases.
    package var metricsKeepGone: Double = 7 * 86_400

    package init() {}

    /// Seconds an interface must have been gone before it is folded into its class's `retired` row; nil:
    /// never (`DailyDays=0` keeps every name).
    package var retirementAge: Int64? {
        guard dailyDays > 0 else { return nil }
        return max(Int64(dailyDays) * 86_400, Int64(min(max(metricsKeepGone, 0), 1e12).rounded(.up)))
    }
}

/// How the CLI writes figures and dates unless its options say otherwise (`[Display]`).
package struct DisplayDefaults: Sendable, Hashable {
    package var units = Units()
    package var dates = DateFormats()

    package init(units: Units = Units(), dates: DateFormats = DateFormats()) {
        self.units = units
        self.dates = dates
    }
}

/// Everything the daemon and the CLI can be told. Defaults are the values a
/// fresh install runs with; `ConfigurationFile` fills in what a file says.
package struct Configuration: Sendable {
    package static let defaultPath = "/etc/ifmeter/ifmeter.conf"
    package static let defaultStateDirectory = "/var/lib/ifmeter"

    /// Seconds between counter samples (rates, event reconciliation, metrics).
    package var sampleInterval: Double = 15
    /// Seconds between store commits; a crash loses no delta of a link that lives on (the kernel has it).
    package var commitInterval: Double = 300
    /// Seconds dating may wait at start for a clock a time service has not synchronised yet (vnStat's TimeSyncWait).
    package var timeSyncWait: Double = 300
    /// Where the store lives; nil falls back to $STATE_DIRECTORY, then the default.
    package var stateDirectory: String?
    /// A delta faster than this (bits per second) is discarded as implausible.
    package var maxRateBitsPerSecond: UInt64 = 10_000_000_000
    /// Kernel receive buffer of the link-event socket.
    package var eventBufferBytes = 4 << 20
    /// The Prometheus text file written after every sample; nil: none.
    package var metricsFile: String?
    /// So a tunnel that comes back keeps its series and one gone for good stops being scraped (0: dropped
    /// at once); held by `retention`, whose retirement it bounds.
    package var metricsKeepGone: Double {
        get { retention.metricsKeepGone }
        set { retention.metricsKeepGone = newValue }
    }
    package var bootIDPath = "/proc/sys/kernel/random/boot_id"
    package var sysfsRoot = "/sys"
    package var watchedClasses = InterfaceClass.watchedByDefault
    package var overrides: [InterfaceOverride] = []
    package var retention = Retention()
    /// Day of the month a billing cycle starts (1...28), like vnStat's MonthRotate.
    package var billingDay = 1
    /// `BillingDay.NAME=`: a class's or an interface's own day, for its budgets.
    package var billingDays: [String: Int] = [:]
    package var budgets: [Budget] = []
    /// Names shown beside interface names (`[Aliases]`): display only, the store and -i keep the kernel's.
    package var aliases: [String: String] = [:]
    /// `ifmeter watch` (true) and `unwatch` (false), kept in the store: they win over Watch= and [Classes].
    package var chosen: [String: Bool] = [:]
    package var display = DisplayDefaults()

    package init() {}

    /// The explicit setting, then systemd's $STATE_DIRECTORY (first entry), then the default.
    package func resolvedStateDirectory(environment: [String: String]) -> String {
        if let stateDirectory { return stateDirectory }
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            return String(fromSystemd)
        }
        return Self.defaultStateDirectory
    }

    /// Where the daemon keeps what a reboot may lose (the journal):
    /// its runtime directory when systemd gives one (a tmpfs), else the state directory.
    package static func runtimeDirectory(stateDirectory: String, environment: [String: String]) -> String {
        environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first.map(String.init) ?? stateDirectory
    }

    /// Where readers look for the daemon's view and journal of the store in `stateDirectory`: the
    /// packaged unit's runtime directory for the default store, then the state directory. Fixed
    /// places, never ones a store names, so a store cannot send its reader anywhere else.
    package static func readerDirectories(stateDirectory: String) -> [String] {
        (stateDirectory == defaultStateDirectory ? [defaultRuntimeDirectory] : []) + [stateDirectory]
    }

    package static let defaultRuntimeDirectory = "/run/ifmeter"

    package static let journalName = "ifmeterd.journal"

    /// The day a budget's cycles start: its target's own, else the global one.
    package func billingDay(for budget: Budget) -> Int { billingDays[budget.label] ?? billingDay }

    package var classifier: Classifier { Classifier(sysfsRoot: sysfsRoot, overrides: overrides) }

    /// Whether this configuration counts an interface: its class watched and no `[Classes]` override
    /// ignoring it. The class is the link's `classification` when the kernel shows it, else the `stored`
    /// class under the first override its name matches.
    package func counts(_ name: String, stored: InterfaceClass, classification: Classification?) -> Bool {
        let decided = classification ?? classifier.override(for: name) ?? Classification(stored, by: .noSignal)
        return watches(name, decided.interfaceClass)
    }

    /// Whether a link of this name and class (nil: ignored) is counted: the name's choice, else Watch=.
    package func watches(_ name: String, _ interfaceClass: InterfaceClass?) -> Bool {
        chosen[name] ?? interfaceClass.map(watchedClasses.contains) ?? false
    }
}

/// Settings given on ifmeterd's command line: they win over the file at start and at every reload,
/// which re-reads the file, not the command line.
package struct CommandLineOverrides: Sendable {
    package var sampleInterval: Double?
    package var commitInterval: Double?
    package var metricsFile: String?
    package var stateDirectory: String?

    package init() {}

    package func applied(to configuration: Configuration) -> Configuration {
        var result = configuration
        if let sampleInterval { result.sampleInterval = sampleInterval }
        if let commitInterval { result.commitInterval = commitInterval }
        if let metricsFile { result.metricsFile = metricsFile }
        if let stateDirectory { result.stateDirectory = stateDirectory }
        return result
    }
}
