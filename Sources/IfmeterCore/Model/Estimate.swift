/// The label every record, metric and screen carries: ifmeter's figures are
/// read from kernel interface counters, and that is all they are.
public enum Estimate {
    /// One line for screens, metrics HELP and stored rows.
    public static let basis =
        "estimate from kernel interface counters: not per-application, not billing-grade"

    /// The caveat shown with totals by class.
    public static let classCaveat =
        "tunnel traffic also crosses the link it rides on: do not add the classes up"
}

/// sysexits(3) codes: every failure maps to one.
public enum ExitCode: Int32, Sendable {
    case success = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case cannotCreate = 73
    case ioError = 74
    case noPermission = 77
    case config = 78
}
