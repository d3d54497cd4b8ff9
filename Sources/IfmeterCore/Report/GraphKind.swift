/// The pictures `ifmeter graph` draws, after vnstati's images.
package enum GraphKind: String, Sendable, CaseIterable {
    /// Today, yesterday, this month and last month, and the last 24 hours.
    case summary
    /// The last 48 hours in five-minute bars (vnstati -5).
    case fiveminute
    /// The last 24 hours.
    case hourly
    /// The last N days (`--days`).
    case daily
    /// The last 12 months.
    case monthly
    /// The last 10 years (vnstati -y).
    case yearly
    /// The 10 largest days kept.
    case top

    /// `--days` beyond this is refused: ten years of days is a picture thousands of pixels wide.
    package static let maximumDays = 3660

    /// The kinds as the usage message lists them.
    package static let listed = "summary, fiveminute, hourly, daily, monthly, yearly or top"
}

/// What `ifmeter graph` writes.
package enum GraphFormat: String, Sendable, CaseIterable {
    case svg, png

    /// `-o FILE` as vnstati's: a name ending in .png (any case) is a PNG, any other an SVG; `--png`
    /// makes it a PNG whatever its name (standard output, `-o -`, included).
    package static func chosen(path: String, png: Bool) -> GraphFormat {
        png || path.lowercased().hasSuffix(".png") ? .png : .svg
    }
}

/// How a picture looks: dark is for a dark desktop or page, not an inverted print.
package enum GraphStyle: String, Sendable, CaseIterable {
    case light, dark
}

