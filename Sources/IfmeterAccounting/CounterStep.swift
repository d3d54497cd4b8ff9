/// How one counter moved between two reads of the same interface life
/// (ACCOUNTING.md rule 6). Each counter is judged on its own.
public enum CounterStep: Sendable, Hashable {
    case forward(UInt64)
    /// A 32-bit source wrapped past 2^32.
    case wrapped(UInt64)
    /// The counter went down and it was no wrap: the driver reset it. What
    /// it counted since then is the delta; what passed before is unknown.
    case reset(UInt64)

    public var delta: UInt64 {
        switch self {
        case .forward(let delta), .wrapped(let delta), .reset(let delta): delta
        }
    }

    /// Judges `current` against `previous`. A drop on a 32-bit source is a
    /// wrap only when both values fit in 32 bits and the drop exceeds 2^31;
    /// anything else that goes down is a reset, counted from zero, so neither
    /// a negative delta nor ~4 GiB of phantom traffic is ever produced.
    public static func between(_ previous: UInt64, _ current: UInt64, width: CounterWidth) -> CounterStep {
        if current >= previous { return .forward(current - previous) }
        let limit = UInt64(UInt32.max)
        if width == .bits32, previous <= limit, current <= limit, previous - current > 1 << 31 {
            return .wrapped(current + (limit + 1) - previous)
        }
        return .reset(current)
    }
}
