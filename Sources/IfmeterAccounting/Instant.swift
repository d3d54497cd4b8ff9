/// A moment as the accounting sees it: the wall clock picks the time bucket, the boot clock
/// decides rates. Callers pass both in, so the accounting stays a pure function.
package struct Instant: Sendable, Hashable {
    /// Seconds since the Unix epoch (UTC).
    package var wall: Int64
    /// Seconds since boot (CLOCK_BOOTTIME, which counts suspend): comparable across restarts, never across boots.
    package var sinceBoot: Double

    package init(wall: Int64, sinceBoot: Double) {
        self.wall = wall
        self.sinceBoot = sinceBoot
    }
}
