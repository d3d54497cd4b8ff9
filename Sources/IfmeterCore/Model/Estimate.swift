/// The label on every record, metric and screen: ifmeter's figures are kernel interface counters, no more.
package enum Estimate {
    /// One line for screens, metrics HELP and stored rows.
    package static let basis =
        "estimate from kernel interface counters: not per-application, not billing-grade"

    /// The caveat shown with totals by class.
    package static let classCaveat =
        "tunnel traffic also crosses the link it rides on: do not add the classes up"
}
