/// How long each kind of time bucket is kept; 0 keeps it forever.
/// The defaults are vnStat's.
public struct Retention: Sendable, Hashable {
    public var fiveMinuteHours = 48
    public var hourlyDays = 4
    public var dailyDays = 62
    public var monthlyMonths = 25
    public var yearlyYears = 0

    public init() {}
}

/// A data-plan budget over a billing cycle: received plus transmitted bytes,
/// as carriers count them.
public struct Budget: Sendable, Hashable {
    public enum Target: Sendable, Hashable {
        case interfaceClass(InterfaceClass)
        case interface(String)
    }

    public var target: Target
    public var bytes: UInt64
    /// Written in 1000-based units (`20GB`), as carriers sell plans: shown
    /// in them too, unless the command line asks for other units.
    public var decimal: Bool

    public init(target: Target, bytes: UInt64, decimal: Bool = false) {
        self.target = target
        self.bytes = bytes
        self.decimal = decimal
    }

    /// The name as configured: a class (`cellular`) or an interface (`wwan0`).
    public var label: String {
        switch target {
        case .interfaceClass(let interfaceClass): interfaceClass.rawValue
        case .interface(let name): name
        }
    }
}

/// Everything the daemon and the CLI can be told. Defaults are the values a
/// fresh install runs with; `ConfigurationFile` fills in what a file says.
public struct Configuration: Sendable {
    public static let defaultPath = "/etc/ifmeter/ifmeter.conf"
    public static let defaultStateDirectory = "/var/lib/ifmeter"

    /// Seconds between counter samples (rates, event reconciliation, metrics).
    public var sampleInterval: Double = 15
    /// Seconds between store commits; deltas wait in memory meanwhile, and a
    /// crash loses none of them for links that live on (the kernel still has them).
    public var commitInterval: Double = 300
    /// Where the store lives; nil falls back to $STATE_DIRECTORY, then the default.
    public var stateDirectory: String?
    /// A delta faster than this (bits per second) is discarded as implausible.
    public var maxRateBitsPerSecond: UInt64 = 10_000_000_000
    /// Kernel receive buffer of the link-event socket.
    public var eventBufferBytes = 4 << 20
    /// The Prometheus text file written after every sample; nil: none.
    public var metricsFile: String?
    /// Seconds a gone interface's series stay in the metrics file, so a
    /// tunnel that comes back keeps its series and one gone for good stops
    /// being scraped (0: dropped as soon as it is gone).
    public var metricsKeepGone: Double = 7 * 86_400
    public var bootIDPath = "/proc/sys/kernel/random/boot_id"
    public var sysfsRoot = "/sys"
    public var watchedClasses = InterfaceClass.watchedByDefault
    public var overrides: [InterfaceOverride] = []
    public var retention = Retention()
    /// Day of the month a billing cycle starts (1...28), like vnStat's MonthRotate.
    public var billingDay = 1
    public var budgets: [Budget] = []
    /// Names shown beside interface names (`[Aliases]`, vnStat's --setalias):
    /// display only, the store and -i keep the kernel's name.
    public var aliases: [String: String] = [:]

    public init() {}

    /// The state directory in force: explicit setting, then systemd's
    /// $STATE_DIRECTORY (first entry), then the default.
    public func resolvedStateDirectory(environment: [String: String]) -> String {
        if let stateDirectory { return stateDirectory }
        if let fromSystemd = environment["STATE_DIRECTORY"]?.split(separator: ":").first {
            return String(fromSystemd)
        }
        return Self.defaultStateDirectory
    }

    public var classifier: Classifier { Classifier(sysfsRoot: sysfsRoot, overrides: overrides) }
}

/// Settings given on ifmeterd's command line. They win over the file, at
/// start and at every reload alike: a reload re-reads the file, not the
/// command line.
public struct CommandLineOverrides: Sendable {
    public var sampleInterval: Double?
    public var commitInterval: Double?
    public var metricsFile: String?
    public var stateDirectory: String?

    public init() {}

    public func applied(to configuration: Configuration) -> Configuration {
        var result = configuration
        if let sampleInterval { result.sampleInterval = sampleInterval }
        if let commitInterval { result.commitInterval = commitInterval }
        if let metricsFile { result.metricsFile = metricsFile }
        if let stateDirectory { result.stateDirectory = stateDirectory }
        return result
    }
}
