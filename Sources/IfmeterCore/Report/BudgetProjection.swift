/// How far a projection to the end of a budget's period can be trusted, from how long counting has run.
package enum ProjectionConfidence: String, Sendable, CaseIterable {
    /// Less than a day observed (a 24th of a shorter period): no projection is made and nothing alarms.
    case low
    /// At least that, less than a week (a quarter of a shorter period).
    case medium
    /// A week or more: weekdays and the weekend are both in it.
    case high
}

/// A budget's use projected to its period's end from the time observed in it, never over time nobody counted.
package struct BudgetProjection: Sendable, Hashable {
    package static let day: Int64 = 86_400

    package var observedSince: Int64
    package var observedSeconds: Int64
    package var confidence: ProjectionConfidence
    /// Use at the end of the cycle at the rate observed.
    package var projected: UInt64

    /// Seconds observed before a period's rate says anything: a day, a 24th of a shorter period, never under a minute.
    package static func leastObserved(periodLength: Int64) -> Int64 { max(60, min(periodLength / 24, day)) }

    /// Whether the projection may raise an alarm.
    package var isTrusted: Bool { confidence != .low }

    package init(used: UInt64, cycleStart: Int64, cycleEnd: Int64, countingSince: Int64, now: Int64) {
        // Times come from a store that may hold anything: no subtraction may trap.
        observedSince = min(max(cycleStart, countingSince), now)
        observedSeconds = now.subtractingReportingOverflow(observedSince).overflow ? .max : now - observedSince
        let length = cycleEnd.subtractingReportingOverflow(cycleStart).overflow ? .max : max(cycleEnd - cycleStart, 0)
        confidence = observedSeconds < Self.leastObserved(periodLength: length) ? .low
            : observedSeconds < min(7 * Self.day, length / 4) ? .medium : .high
        let remaining = max(Double(cycleEnd) - Double(now), 0)
        let rate = Double(used) / Double(max(observedSeconds, 1))
        projected = .saturating(used, plus: UInt64(saturating: rate * remaining))
    }
}
