import Glibc

/// The sizes of time bucket the store keeps, like vnStat's.
package enum Granularity: String, Sendable, CaseIterable {
    case fiveMinutes = "5min", hour, day, month, year

    /// The bucket's name in a sentence ("the running day").
    package var noun: String {
        switch self {
        case .fiveMinutes: "five minutes"
        case .hour: "hour"
        case .day: "day"
        case .month: "month"
        case .year: "year"
        }
    }
}

/// Where bucket boundaries fall. Hours, days, months and years follow the local calendar (the process's
/// TZ, /etc/localtime under systemd), so "today" is the user's; every start is stored as UTC epoch seconds.
package enum TimeBuckets {
    package static func start(of granularity: Granularity, containing time: Int64) -> Int64 {
        switch granularity {
        case .fiveMinutes:
            return floorDivide(time, 300) * 300
        case .hour:
            // Offsets that are not whole hours (UTC+5:30) shift hour boundaries too.
            let offset = Int64(localTime(time).tm_gmtoff)
            return floorDivide(time + offset, 3600) * 3600 - offset
        case .day, .month, .year:
            var fields = localTime(time)
            fields.tm_hour = 0
            fields.tm_min = 0
            fields.tm_sec = 0
            if granularity != .day { fields.tm_mday = 1 }
            if granularity == .year { fields.tm_mon = 0 }
            fields.tm_isdst = -1
            return Int64(mktime(&fields))
        }
    }

    package static func start(of granularity: Granularity, _ count: Int, before time: Int64) -> Int64 {
        switch granularity {
        case .fiveMinutes: return start(of: .fiveMinutes, containing: time) - Int64(count) * 300
        case .hour: return start(of: .hour, containing: time) - Int64(count) * 3600
        case .day, .month, .year:
            var fields = localTime(time)
            fields.tm_hour = 0
            fields.tm_min = 0
            fields.tm_sec = 0
            switch granularity {
            case .day: fields.tm_mday -= Int32(count)
            case .month: fields.tm_mday = 1; fields.tm_mon -= Int32(count)
            default: fields.tm_mday = 1; fields.tm_mon = 0; fields.tm_year -= Int32(count)
            }
            fields.tm_isdst = -1
            return Int64(mktime(&fields))
        }
    }

    static func localTime(_ time: Int64) -> tm {
        var seconds = time_t(time)
        var fields = tm()
        localtime_r(&seconds, &fields)
        return fields
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}
