/// The billing cycle containing a moment: from `billingDay` 00:00 local time to that day next month.
package enum BillingCycle {
    package static func bounds(billingDay: Int, containing time: Int64) -> (start: Int64, end: Int64) {
        let monthStart = TimeBuckets.start(of: .month, containing: time)
        var start = monthStart + Int64(billingDay - 1) * 86_400
        start = TimeBuckets.start(of: .day, containing: start + 43_200)  // DST-safe midnight
        if start > time {
            let previous = TimeBuckets.start(of: .month, 1, before: time)
            start = TimeBuckets.start(of: .day, containing: previous + Int64(billingDay - 1) * 86_400 + 43_200)
        }
        let nextMonth = TimeBuckets.start(of: .month, -1, before: start)
        let end = TimeBuckets.start(of: .day, containing: nextMonth + Int64(billingDay - 1) * 86_400 + 43_200)
        return (start, end)
    }
}
