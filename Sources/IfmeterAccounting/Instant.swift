/// A moment as the accounting sees it. The wall clock decides which time
/// bucket bytes land in; the boot clock decides rates. Neither is read here:
/// callers pass them in, so the accounting stays a pure function.
public struct Instant: Sendable, Hashable {
    /// Seconds since the Unix epoch (UTC).
    public var wall: Int64
    /// Seconds since boot (CLOCK_BOOTTIME, which counts suspend). Comparable
    /// across daemon restarts within one boot, never across boots.
    public var sinceBoot: Double

    public init(wall: Int64, sinceBoot: Double) {
        self.wall = wall
        self.sinceBoot = sinceBoot
    }
}
