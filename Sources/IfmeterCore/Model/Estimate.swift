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
