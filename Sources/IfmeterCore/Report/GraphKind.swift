/// The pictures `ifmeter graph` draws, after vnstati's images.
public enum GraphKind: String, Sendable, CaseIterable {
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

    /// `--days` beyond this is refused: ten years of days is already a
    /// picture several thousand pixels wide.
    public static let maximumDays = 3660
}
