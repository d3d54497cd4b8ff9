/// How one counter, judged on its own, moved between two reads of one interface life (ACCOUNTING.md rule 6).
package enum CounterStep: Sendable, Hashable {
    case forward(UInt64)
    /// A 32-bit source wrapped past 2^32.
    case wrapped(UInt64)
    /// Went down with no wrap (a driver reset): the delta is what it counted since; what came before is unknown.
    case reset(UInt64)

    package var delta: UInt64 {
        switch self {
        case .forward(let delta), .wrapped(let delta), .reset(let delta): delta
        }
    }

    /// A drop on a 32-bit source is a wrap only when both values fit in 32 bits and the drop exceeds 2^31;
    /// any other drop is a reset, counted from zero: a delta is never negative nor a phantom wrap.
    package static func between(_ previous: UInt64, _ current: UInt64, width: CounterWidth) -> CounterStep {
        if current >= previous { return .forward(current - previous) }
        let limit = UInt64(UInt32.max)
        if width == .bits32, previous <= limit, current <= limit, previous - current > 1 << 31 {
            return .wrapped(current + (limit + 1) - previous)
        }
        return .reset(current)
    }
}
