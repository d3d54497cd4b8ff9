/// The pictures `ifmeter graph` draws, after vnstati's images.
package enum GraphKind: String, Sendable, CaseIterable {
    /// Today, yesterday, this month and last month, and the last 24 hours.
    case summary
    /// The last 24 hours.
    case hourly
    /// The last N days (`--days`).
    case daily
    /// The last 12 months.
    case monthly
    /// The 10 largest days kept.
    case top

    /// `--days` beyond this is refused: ten years of days is a picture thousands of pixels wide.
    package static let maximumDays = 3660
}
