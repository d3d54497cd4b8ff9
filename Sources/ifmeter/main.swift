import Glibc
import IfmeterCore

/// Parse, then run; every failure leaves as one line on stderr and a
/// sysexits code, mapped here and nowhere else.
func exitStatus(_ words: [String], environment: [String: String]) -> Int32 {
    do throws(CommandFailure) {
        let invocation: Invocation
        do { invocation = try CommandParser.parse(words) } catch { throw .usage(error) }
        // Help reads nothing, so it works whatever the configuration holds.
        let context = if case .help = invocation.command {
            Context(invocation.globals, environment: environment, configuration: Configuration())
        } else {
            try Context.loading(invocation.globals, environment: environment)
        }
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
        let hint = error.command.map { "ifmeter \($0.rawValue) --help" } ?? "ifmeter --help"
        return ("\(error.message) (see '\(hint)')", .usage)
    case .configuration(let error):
        return (error.description, error.isMissingFile ? .noInput : .config)
    case .configurationUnreadable(let message):
        return (message, .config)
    case .noBudgets(let path):
        return ("no budgets configured: add a [Budgets] section to \(path)", .config)
    case .store(.missing(let path)):
        return ("\(path): no store yet: start the daemon (systemctl start ifmeterd, or make run)", .noInput)
    case .store(let error):
        return (error.description, storeExitCode(error))
    case .permissionDenied(let path):
        return ("\(path): permission denied: this user may not read the store (its directory or file mode, or run with sudo)", .noInput)
    case .kernel(let message):
        return (message, .unavailable)
    case .cannotWrite(let error):
        return (error.description, .cannotCreate)
    case .output(let error):
        return (error.description, .ioError)
    }
}

func storeExitCode(_ error: StoreError) -> ExitCode {
    switch error {
    case .missing: .noInput
    case .newerSchema, .notAStore: .dataError
    case .sqlite(let error):
        if error.isCorrupt { .dataError } else if error.isReadOnly || error.isCannotOpen || error.isFull { .cannotCreate } else { .ioError }
    }
}

let environment = Dictionary(CommandLine.environment.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
exit(exitStatus(Array(CommandLine.arguments.dropFirst()), environment: environment))
