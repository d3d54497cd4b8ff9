import Glibc
import IfmeterCore

/// Parse, then run; every failure leaves as one line on stderr and a sysexits code, mapped here alone.
func exitStatus(_ words: [String], environment: [String: String]) -> Int32 {
    do throws(CommandFailure) {
        let invocation: Invocation
        do { invocation = try CommandParser.parse(words) } catch { throw .usage(error) }
        // Help, the version and the completions read nothing: they work whatever the configuration holds.
        let readsNothing = switch invocation.command {
        case .help, .version, .completions: true
        default: false
        }
        let context = readsNothing
            ? Context(invocation.globals, environment: environment, configuration: Configuration())
            : try Context.loading(invocation.globals, environment: environment)
        return try Commands.run(invocation.command, context)
    } catch {
        let (message, code) = report(error)
        Output.standardError("ifmeter: \(message)\n")
        return code.rawValue
    }
}

/// The line and the sysexits code for a failure.
func report(_ failure: CommandFailure) -> (String, ExitCode) {
    switch failure {
    case .usage(let error):
        guard error.pointsToHelp else { return (error.message, .usage) }
        let hint = error.command.map { "ifmeter \($0.rawValue) --help" } ?? "ifmeter --help"
        return ("\(error.message) (see '\(hint)')", .usage)
    case .configuration(let error):
        return (error.description, error.isMissingFile ? .noInput : .config)
    case .noBudgets(let path):
        return ("no budgets configured: add a [Budgets] section to \(path)", .config)
    case .store(.missing(let path)):
        let directory = FileSystem.directoryName(path)
        if !FileSystem.exists(directory) {
            // A daemon never started, or a mistyped --state-dir.
            return ("\(directory): no such directory, so no store yet: start the daemon (systemctl start ifmeterd, make run, or ifmeterd --state-dir \(directory)), or check the state directory (--state-dir, StateDirectory=)", .noInput)
        }
        if !FileSystem.isDirectory(directory) {
            return ("\(directory): not a directory; the state directory (--state-dir, StateDirectory=) is where the daemon keeps its store", .noInput)
        }
        return ("\(path): no store yet: start the daemon (systemctl start ifmeterd, make run, or ifmeterd --state-dir \(directory))", .noInput)
    case .store(let error):
        return (error.description, error.exitCode)
    case .kernel(let message), .unavailable(let message):
        return (message, .unavailable)
    case .cannotWrite(let error):
        return (error.description, .cannotCreate)
    case .permission(let message):
        return (message, .noPermission)
    case .output(let error):
        return (error.description, .ioError)
    case .vnstat(let error):
        return (error.description, error.exitCode)
    case .refused(let outcome):
        return (outcome.message, outcome.status)
    case .renderer(let message):
        return (message, .software)
    }
}

let environment = Dictionary(CommandLine.environment.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
// A non-UTF-8 argument can only mean an interface name: kept in InterfaceName's encoding, never made U+FFFD.
let words = CommandLine.argumentBytes.map { $0.text ?? InterfaceName.encode(bytes: $0.bytes) }
exit(exitStatus(words, environment: environment))
