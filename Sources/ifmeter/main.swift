import Glibc
import IfmeterCore

let program = "ifmeter"

let usage = """
    Usage: ifmeter [--config FILE] COMMAND [OPTIONS]

    Counts traffic on Wi-Fi, cellular and tunnel interfaces from the kernel's
    interface counters. All figures are estimates: not per-application, not
    billing-grade.

    Commands:
      interfaces [--all] [--json]   the watched interfaces, their class, the
                                    signal that decided it, and their counters

    Options:
      --config FILE   configuration file (default \(Configuration.defaultPath))
      -h, --help      this help; COMMAND --help for a command's own

    """

let interfacesUsage = """
    Usage: ifmeter interfaces [--all] [--json]

    Lists Wi-Fi, cellular and tunnel interfaces with their class, the signal
    that decided it (override, link kind, DEVTYPE, sysfs marker, ARP type or
    name), ifindex, link kind, operational state and 64-bit counters since the
    interface was created.

      --all    also list other and ignored interfaces
      --json   machine-readable output (schema \(InterfacesReport.schema))

    """

func usageFailure(_ error: UsageError, hint: String = "ifmeter --help") -> Never {
    Output.fail(program, "\(error.message) (see '\(hint)')", .usage)
}

var arguments = Arguments(CommandLine.arguments.dropFirst())
let configPath: String?
do {
    configPath = try arguments.option("--config")
} catch {
    usageFailure(error)
}
let wantsHelp = arguments.flag("--help") || arguments.flag("-h")
let command = arguments.popPositional()

func loadConfiguration() -> Configuration {
    do {
        return try ConfigurationFile.load(path: configPath ?? Configuration.defaultPath, required: configPath != nil)
    } catch let error as ConfigurationError {
        Output.fail(program, error.description, error.isMissingFile ? .noInput : .config)
    } catch {
        Output.fail(program, "\(error)", .config)
    }
}

switch command {
case nil:
    if wantsHelp {
        Output.standardOutput(usage)
        exit(0)
    }
    usageFailure(UsageError(arguments.isEmpty ? "missing command" : "unexpected option"))
case "interfaces":
    if wantsHelp {
        Output.standardOutput(interfacesUsage)
        exit(0)
    }
    let all = arguments.flag("--all")
    let json = arguments.flag("--json")
    do { try arguments.finish() } catch { usageFailure(error, hint: "ifmeter interfaces --help") }
    let configuration = loadConfiguration()
    let classifier = configuration.classifier
    let samples: [LinkSample]
    do {
        samples = try NetlinkLinkSource().links()
    } catch {
        Output.fail(program, "\(error)", .unavailable)
    }
    let links = samples
        .map { ClassifiedLink(sample: $0, classification: classifier.classify($0)) }
        .filter { all || $0.isWatched(by: configuration.watchedClasses) }
    Output.standardOutput(json ? InterfacesReport.json(links).rendered() + "\n" : InterfacesReport.table(links))
default:
    usageFailure(UsageError("unknown command \(command!)"))
}
